//go:build cgo

package secrets

/*
// The Bitwarden SDK's static library needs libm; a plain -lm is dropped by
// --as-needed linkers because it comes before the library that uses it.
#cgo linux LDFLAGS: -Wl,--no-as-needed -lm
*/
import "C"

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/bitwarden/sdk-go"
)

// Lookup implements Provider with github.com/bitwarden/sdk-go: log in with
// the access token, then get the secret by ID. The SDK call cannot be
// cancelled, so it runs in a goroutine that the context can abandon; the
// client is closed when the call returns.
func (p bwsProvider) Lookup(ctx context.Context, ref Ref) (Value, error) {
	tok, err := p.bwsRequest(ref)
	if err != nil {
		return Value{}, err
	}
	api, identity, err := bwsEndpoints(ref.ServerURL)
	if err != nil {
		return Value{}, fmt.Errorf("secret %s: %w", ref.String(), err)
	}

	type result struct {
		v   Value
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := bwsGet(api, identity, tok, ref)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			// The SDK's messages are about requests, but make sure the
			// token can never ride along in one.
			return Value{}, fmt.Errorf("secret %s: %s", ref.String(), Redact(r.err.Error(), NewValue(tok)))
		}
		return r.v, nil
	case <-ctx.Done():
		return Value{}, fmt.Errorf("secret %s: bitwarden secrets manager: %w", ref.String(), ctx.Err())
	}
}

// bwsGet does the SDK calls. Its errors are plain strings (the SDK's own).
func bwsGet(api, identity *string, tok string, ref Ref) (Value, error) {
	server := "the Bitwarden cloud"
	if identity != nil {
		server = *identity
	}
	client, err := sdk.NewBitwardenClient(api, identity)
	if err != nil {
		return Value{}, fmt.Errorf("start the Bitwarden SDK: %s", err.Error())
	}
	defer client.Close()

	if err := client.AccessTokenLogin(tok, nil); err != nil {
		msg := err.Error()
		if strings.Contains(msg, "error sending request") {
			return Value{}, fmt.Errorf("bitwarden secrets manager at %s is unreachable (%s): check the network and the server URL (https://vault.bitwarden.eu for the EU cloud)", server, msg)
		}
		return Value{}, fmt.Errorf("log in to bitwarden secrets manager at %s with %s failed (%s): check that the machine account's access token is valid and not revoked", server, AccessTokenEnv, msg)
	}
	s, err := client.Secrets().Get(ref.Ref)
	if err != nil {
		return Value{}, fmt.Errorf("get secret %q failed (%s): check the ID and that the machine account can read its project", ref.Ref, err.Error())
	}
	if strings.EqualFold(ref.Field, "note") {
		return NewValue(s.Note), nil
	}
	return NewValue(s.Value), nil
}
