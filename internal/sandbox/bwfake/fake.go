// Package bwfake is a fake of the Vault Management API that the Bitwarden
// CLI serves with `bw serve` (the way operators reach a Vaultwarden or
// Bitwarden vault from scripts), modelled on bitwarden/clients:
//
//   - apps/cli/src/oss-serve-configurator.ts: the routes; every answer is
//     the JSON envelope {success, message, data}, and a failure is HTTP 400;
//     reads refuse with "Vault is locked." while the vault is locked and
//     "You are not logged in." without an account.
//   - apps/cli/src/commands/serve.command.ts: a request with an Origin
//     header, or with a Host that is not the loopback name of the server, is
//     refused with 403 and an empty body (origin protection).
//   - apps/cli/src/commands/get.command.ts: an object is read by its ID (a
//     GUID, compared in lower case) or else by a search of item names; one
//     exact name wins, several hits are "More than one result was found"
//     with the IDs, none is "Not found."; a password read skips items
//     without one.
//   - apps/cli/src/models/response.ts and response/*: the shapes of the
//     item, string, list, message and status (template) answers.
//
// It holds login items in memory; the sandbox puts its Hetzner token in one.
package bwfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Item is a login item of the vault.
type Item struct {
	ID       string // a GUID, lower case
	Name     string
	Username string
	Password string
	Notes    string
	Fields   []Field
}

// Field is a custom field of an item (Type 0 text, 1 hidden).
type Field struct {
	Name, Value string
	Type        int
}

// Options configure a Fake.
type Options struct {
	// Items are the vault's login items.
	Items []Item
	// MasterPassword unlocks the vault with POST /unlock.
	MasterPassword string
	// Locked starts the vault locked (default: unlocked, as after
	// "bw unlock" then "bw serve").
	Locked bool
	// ServerURL and Email are what GET /status reports.
	ServerURL, Email string
}

// Fake is an in-memory `bw serve`. It is an http.Handler.
type Fake struct {
	mu       sync.Mutex
	opts     Options
	locked   bool
	userID   string
	lastSync time.Time
}

// New returns a fake vault holding opts.Items.
func New(opts Options) *Fake {
	if opts.ServerURL == "" {
		opts.ServerURL = "https://vault.sandbox.invalid"
	}
	if opts.Email == "" {
		opts.Email = "operator@sandbox.invalid"
	}
	items := make([]Item, len(opts.Items))
	for i, it := range opts.Items {
		it.ID = strings.ToLower(it.ID)
		items[i] = it
	}
	opts.Items = items
	return &Fake{opts: opts, locked: opts.Locked, userID: NewID(), lastSync: time.Now().UTC()}
}

// NewID returns a random GUID in the form Bitwarden gives item IDs.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Lock locks the vault, as POST /lock does.
func (f *Fake) Lock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.locked = true
}

// envelope is the Response of the CLI: {success, message, data}.
type envelope struct {
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
	Data    any    `json:"data,omitempty"`
}

// ServeHTTP implements http.Handler.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := r.Header["Origin"]; ok || !loopbackHost(r.Host) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && path == "/status":
		f.reply(w, f.status())
	case r.Method == http.MethodPost && path == "/unlock":
		f.reply(w, f.unlock(w, r))
	case r.Method == http.MethodPost && path == "/lock":
		f.Lock()
		f.reply(w, envelope{Success: true, Data: message{Object: "message", Title: "Your vault is locked."}})
	case r.Method == http.MethodGet && path == "/list/object/items":
		f.reply(w, f.whenUnlocked(func() envelope { return f.list(r.URL.Query().Get("search")) }))
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/object/item/"):
		f.reply(w, f.whenUnlocked(func() envelope { return f.getItem(strings.TrimPrefix(path, "/object/item/")) }))
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/object/password/"):
		f.reply(w, f.whenUnlocked(func() envelope { return f.getPassword(strings.TrimPrefix(path, "/object/password/")) }))
	default:
		// koa's router: no route is a plain 404.
		http.Error(w, "Not Found", http.StatusNotFound)
	}
}

// loopbackHost reports whether a Host header names this machine, as the
// allowed hosts of bw serve bound to localhost do.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (f *Fake) reply(w http.ResponseWriter, e envelope) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if !e.Success {
		w.WriteHeader(http.StatusBadRequest)
	}
	_ = json.NewEncoder(w).Encode(e)
}

func fail(msg string) envelope { return envelope{Success: false, Message: msg} }

func (f *Fake) whenUnlocked(read func() envelope) envelope {
	f.mu.Lock()
	locked := f.locked
	f.mu.Unlock()
	if locked {
		return fail("Vault is locked.")
	}
	return read()
}

// status answers GET /status with a TemplateResponse.
func (f *Fake) status() envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := "unlocked"
	if f.locked {
		st = "locked"
	}
	return envelope{Success: true, Data: map[string]any{
		"object": "template",
		"template": map[string]any{
			"serverUrl": f.opts.ServerURL, "lastSync": f.lastSync.Format("2006-01-02T15:04:05.000Z"),
			"userEmail": f.opts.Email, "userId": f.userID, "status": st,
		},
	}}
}

// message is a MessageResponse.
type message struct {
	Object  string `json:"object"`
	Title   string `json:"title"`
	Message string `json:"message,omitempty"`
	Raw     string `json:"raw,omitempty"`
	NoColor bool   `json:"noColor"`
}

// unlock answers POST /unlock {"password": ...}.
func (f *Fake) unlock(w http.ResponseWriter, r *http.Request) envelope {
	var body struct {
		Password *string `json:"password"`
	}
	_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body)
	if body.Password == nil || *body.Password == "" {
		return fail("Master password is required.")
	}
	if *body.Password != f.opts.MasterPassword {
		return fail("Invalid master password.")
	}
	f.mu.Lock()
	f.locked = false
	f.mu.Unlock()
	var key [64]byte
	_, _ = rand.Read(key[:])
	session := base64.StdEncoding.EncodeToString(key[:])
	return envelope{Success: true, Data: message{Object: "message", Title: "Your vault is now unlocked!",
		Message: "\nTo unlock your vault, set your session key to the `BW_SESSION` environment variable.", Raw: session}}
}
