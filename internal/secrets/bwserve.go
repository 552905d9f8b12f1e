package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// serveEnvelope is the answer of the bw serve Vault Management API
// (bitwarden/clients apps/cli/src/models/response.ts: {success, message,
// data}; a failure is HTTP 400 with success false, oss-serve-configurator.ts;
// a password is a StringResponse {object: "string", data: VALUE}; a list is
// {object: "list", data: [...]}).
type serveEnvelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (p *bwProvider) lookupServe(ctx context.Context, raw string, ref Ref) (Value, error) {
	u, err := checkServeURL(ref, raw)
	if err != nil {
		return Value{}, err
	}
	base := strings.TrimRight(u.String(), "/")
	if !isBWID(ref.Ref) {
		var list struct {
			Object string   `json:"object"`
			Data   []bwItem `json:"data"`
		}
		if err := p.serveGet(ctx, base, "/list/object/items?search="+url.QueryEscape(ref.Ref), ref, "items named "+fmt.Sprintf("%q", ref.Ref), &list); err != nil {
			return Value{}, err
		}
		if list.Object != "list" {
			return Value{}, fmt.Errorf("secret %s: bw serve answered an unexpected object for the search of %q", ref.String(), ref.Ref)
		}
		item, err := exactItem(ref, list.Data, base)
		if err != nil {
			return Value{}, err
		}
		return pickField(ref, item)
	}
	if ref.Field == "" {
		var s struct {
			Object string `json:"object"`
			Data   string `json:"data"`
		}
		what := fmt.Sprintf("the password of item %q", ref.Ref)
		if err := p.serveGet(ctx, base, "/object/password/"+url.PathEscape(ref.Ref), ref, what, &s); err != nil {
			return Value{}, err
		}
		if s.Object != "string" {
			return Value{}, fmt.Errorf("secret %s: bw serve answered an unexpected object for %s", ref.String(), what)
		}
		return NewValue(s.Data), nil
	}
	var item bwItem
	if err := p.serveGet(ctx, base, "/object/item/"+url.PathEscape(ref.Ref), ref, fmt.Sprintf("item %q", ref.Ref), &item); err != nil {
		return Value{}, err
	}
	return pickField(ref, item)
}

// serveGet GETs base+path and decodes the envelope's data into out; what
// names the object in errors.
func (p *bwProvider) serveGet(ctx context.Context, base, path string, ref Ref, what string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return fmt.Errorf("secret %s: bad bw serve URL %q: %w", ref.String(), base, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("secret %s: %w", ref.String(), ctxErr)
		}
		return fmt.Errorf("secret %s: bw serve at %s is unreachable (%w): start it with "+
			"\"bw serve --hostname localhost --port 8087\" after \"bw unlock\", or drop the serve URL to use the bw CLI", ref.String(), base, err)
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("secret %s: read bw serve answer: %w", ref.String(), err)
	}
	var env serveEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("secret %s: bw serve at %s answered %s without its JSON envelope: is it bw serve?", ref.String(), base, resp.Status)
	}
	if !env.Success {
		msg := env.Message
		if msg == "" {
			msg = resp.Status
		}
		hint := ""
		if msg == "Vault is locked." {
			hint = ` (unlock it: curl -X POST ` + base + `/unlock -H 'Content-Type: application/json' -d '{"password":"..."}', or "bw unlock" before "bw serve")`
		}
		return fmt.Errorf("secret %s: bw serve could not read %s: %s%s", ref.String(), what, msg, hint)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("secret %s: bw serve answered an unexpected object for %s", ref.String(), what)
	}
	return nil
}
