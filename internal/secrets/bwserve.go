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
// (bitwarden/clients apps/cli: Response {success, message, data}; a
// password is a StringResponse {object: "string", data: VALUE}).
type serveEnvelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (p *bwProvider) lookupServe(ctx context.Context, base string, ref Ref) (Value, error) {
	base = strings.TrimRight(base, "/")
	kind := "password"
	if ref.Field != "" {
		kind = "item"
	}
	target := base + "/object/" + kind + "/" + url.PathEscape(ref.Ref)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return Value{}, fmt.Errorf("secret %s: bad bw serve URL %q: %w", ref.String(), base, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Value{}, fmt.Errorf("secret %s: %w", ref.String(), ctxErr)
		}
		return Value{}, fmt.Errorf("secret %s: bw serve at %s is unreachable (%w): start it with "+
			"\"bw serve --hostname localhost --port 8087\" after \"bw unlock\", or drop the serve URL to use the bw CLI", ref.String(), base, err)
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Value{}, fmt.Errorf("secret %s: read bw serve answer: %w", ref.String(), err)
	}

	var env serveEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Value{}, fmt.Errorf("secret %s: bw serve at %s answered %s without its JSON envelope: is it bw serve?", ref.String(), base, resp.Status)
	}
	if !env.Success {
		msg := env.Message
		if msg == "" {
			msg = resp.Status
		}
		return Value{}, fmt.Errorf("secret %s: bw serve could not read %s %q: %s", ref.String(), kind, ref.Ref, msg)
	}

	if kind == "password" {
		var s struct {
			Object string `json:"object"`
			Data   string `json:"data"`
		}
		if err := json.Unmarshal(env.Data, &s); err != nil || s.Object != "string" {
			return Value{}, fmt.Errorf("secret %s: bw serve answered an unexpected object for the password of %q", ref.String(), ref.Ref)
		}
		return NewValue(s.Data), nil
	}
	var item bwItem
	if err := json.Unmarshal(env.Data, &item); err != nil {
		return Value{}, fmt.Errorf("secret %s: bw serve answered an unexpected object for item %q", ref.String(), ref.Ref)
	}
	return pickField(ref, item)
}
