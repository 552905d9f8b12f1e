package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// bwProvider reads Vaultwarden/Bitwarden password manager items through the
// bw CLI (bw status, bw get password|item, bw list items) or, when a serve
// URL is known, through the Vault Management API of a running `bw serve`.
type bwProvider struct {
	path     string
	serveURL string
	env      func(string) (string, bool)
	hc       *http.Client
	timeout  time.Duration
}

// Name implements Provider.
func (*bwProvider) Name() string { return ProviderBW }

// Lookup implements Provider. ref.Ref is an item ID, or an item's exact
// name (an error when several items carry it).
func (p *bwProvider) Lookup(ctx context.Context, ref Ref) (Value, error) {
	if err := checkBWRef(ref); err != nil {
		return Value{}, err
	}
	if serve := firstNonEmpty(ref.ServerURL, p.serveURL); serve != "" {
		return p.lookupServe(ctx, serve, ref)
	}
	return p.lookupCLI(ctx, ref)
}

// bwStatus is the part of `bw status` output we use.
type bwStatus struct {
	ServerURL string `json:"serverUrl"`
	Status    string `json:"status"`
}

// bwItem is the part of a bw item object (CipherResponse) we use.
type bwItem struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Login *struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"login"`
	Notes  string `json:"notes"`
	Fields []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"fields"`
}

func (p *bwProvider) lookupCLI(ctx context.Context, ref Ref) (Value, error) {
	bin, err := exec.LookPath(p.path)
	if err != nil {
		return Value{}, fmt.Errorf("secret %s: the Bitwarden CLI %q was not found (%w): install it (npm install -g @bitwarden/cli, "+
			"or a release from github.com/bitwarden/clients), or use a bw serve URL or the env provider", ref.String(), p.path, err)
	}

	out, err := p.run(ctx, bin, []string{"status"}, nil)
	if err != nil {
		return Value{}, fmt.Errorf("secret %s: %w", ref.String(), err)
	}
	var st bwStatus
	if err := json.Unmarshal(out, &st); err != nil {
		return Value{}, fmt.Errorf("secret %s: cannot read `bw status` output (%w): is %s the Bitwarden CLI?", ref.String(), err, bin)
	}
	switch st.Status {
	case "unlocked":
	case "unauthenticated":
		return Value{}, fmt.Errorf(`secret %s: bw is not logged in: run "bw config server URL" then "bw login --apikey"`, ref.String())
	case "locked":
		return Value{}, fmt.Errorf(`secret %s: bw is locked: run "bw unlock" and export BW_SESSION`, ref.String())
	default:
		return Value{}, fmt.Errorf("secret %s: bw reports an unknown status %q: run \"bw status\" to check", ref.String(), st.Status)
	}

	if !isBWID(ref.Ref) {
		item, err := p.itemByName(ctx, bin, ref, st.ServerURL)
		if err != nil {
			return Value{}, err
		}
		return pickField(ref, item)
	}
	if ref.Field == "" {
		out, err := p.run(ctx, bin, []string{"get", "password"}, []string{ref.Ref})
		if err != nil {
			return Value{}, fmt.Errorf("secret %s: bw could not read the password of item %q on %s: %w%s", ref.String(), ref.Ref, st.ServerURL, err, notFoundHint(err))
		}
		return NewValue(trimNewline(string(out))), nil
	}
	out, err = p.run(ctx, bin, []string{"get", "item"}, []string{ref.Ref})
	if err != nil {
		return Value{}, fmt.Errorf("secret %s: bw could not read item %q on %s: %w%s", ref.String(), ref.Ref, st.ServerURL, err, notFoundHint(err))
	}
	var item bwItem
	if err := json.Unmarshal(out, &item); err != nil {
		// The decoder's message may quote part of the item: keep it out.
		return Value{}, fmt.Errorf("secret %s: bw printed something other than the JSON of item %q: is %s the Bitwarden CLI?", ref.String(), ref.Ref, bin)
	}
	return pickField(ref, item)
}

// itemByName lists the items matching the name and keeps the one named
// exactly so: `bw get` with a name takes the first search hit.
func (p *bwProvider) itemByName(ctx context.Context, bin string, ref Ref, server string) (bwItem, error) {
	// --search=NAME keeps the name one argument even if it looks like a flag
	// (checkBWRef already refuses a leading '-').
	out, err := p.run(ctx, bin, []string{"list", "items", "--search=" + ref.Ref}, nil)
	if err != nil {
		return bwItem{}, fmt.Errorf("secret %s: bw could not search items named %q on %s: %w", ref.String(), ref.Ref, server, err)
	}
	var items []bwItem
	if err := json.Unmarshal(out, &items); err != nil {
		return bwItem{}, fmt.Errorf("secret %s: bw printed something other than a JSON list of items for %q: is %s the Bitwarden CLI?", ref.String(), ref.Ref, bin)
	}
	return exactItem(ref, items, server)
}

// bwEnvKeys are the only variables bw is given: what it needs to find
// itself, its data and its server (proxies, an extra CA), and the session.
// Everything else, HCLOUD_TOKEN and BWS_ACCESS_TOKEN first, stays out.
func bwEnvKeys() []string {
	return []string{"PATH", "HOME", "USERPROFILE", "APPDATA", "SystemRoot", "XDG_CONFIG_HOME",
		"BITWARDENCLI_APPDATA_DIR", "NODE_EXTRA_CA_CERTS",
		"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
	}
}

// bwEnv builds bw's environment from the process's allowed variables and
// the session from the resolver's environment.
func (p *bwProvider) bwEnv() []string {
	var env []string
	for _, k := range bwEnvKeys() {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if session, ok := p.env("BW_SESSION"); ok && session != "" {
		env = append(env, "BW_SESSION="+session)
	}
	return env
}

// run runs bw with --nointeraction so that it never prompts, with the
// positional arguments after "--" so none can become an option, and within
// the provider's timeout. BW_SESSION reaches bw through its environment
// only, never on the command line where other users could read it.
func (p *bwProvider) run(ctx context.Context, bin string, args, positional []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	argv := append(append([]string{}, args...), "--nointeraction")
	if len(positional) > 0 {
		argv = append(append(argv, "--"), positional...)
	}
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Env = p.bwEnv()
	cmd.WaitDelay = time.Second // a child bw left holding the pipes
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("bw %s timed out after %s: bw may be waiting for input (a master password or a two-step login prompt); "+
				"unlock first (\"bw unlock\", then export BW_SESSION) and check that \"bw status\" answers quickly: %w",
				strings.Join(args[:min(2, len(args))], " "), p.timeout, ctx.Err())
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("bw %s: %w", args[0], ctxErr)
		}
		// stdout is what bw was asked for (a password, items with their
		// secrets): only stderr may explain a failure, bounded and
		// redacted.
		session, _ := p.env("BW_SESSION")
		return nil, fmt.Errorf("bw %s failed (%w): %s", args[0], err, BoundOutput(stderr.Bytes(), NewValue(session)))
	}
	return stdout.Bytes(), nil
}

// pickField returns the named part of an item: the login password when no
// field is named, else a custom field first (the operator's own names
// win), then username, password or notes.
func pickField(ref Ref, item bwItem) (Value, error) {
	if ref.Field == "" { // the login password, as bw get password
		if item.Login == nil || item.Login.Password == "" {
			return Value{}, fmt.Errorf("secret %s: item %q (%s) has no login password: store it there, or name a field (field: ...)", ref.String(), item.Name, item.ID)
		}
		return NewValue(item.Login.Password), nil
	}
	for _, f := range item.Fields {
		if f.Name == ref.Field {
			return NewValue(f.Value), nil
		}
	}
	switch strings.ToLower(ref.Field) {
	case "username", "login.username":
		if item.Login != nil {
			return NewValue(item.Login.Username), nil
		}
	case "password", "login.password":
		if item.Login != nil {
			return NewValue(item.Login.Password), nil
		}
	case "notes":
		return NewValue(item.Notes), nil
	}
	names := make([]string, 0, len(item.Fields))
	for _, f := range item.Fields {
		names = append(names, f.Name)
	}
	return Value{}, fmt.Errorf("secret %s: item %q has no field %q (custom fields: %s); use one of them, or username, password, notes",
		ref.String(), ref.Ref, ref.Field, strings.Join(names, ", "))
}

// trimNewline drops the line end bw prints after a value, and nothing else:
// a password may well end with spaces.
func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// notFoundHint tells the operator how to find the right item ID.
func notFoundHint(err error) string {
	if strings.Contains(err.Error(), "Not found") {
		return `; find the item's ID with "bw list items --search NAME" (and "bw sync" if it is new)`
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
