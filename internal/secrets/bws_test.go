package secrets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// A well-formed but unusable access token: version 0, a UUID, a client
// secret and a base64 16-byte key.
const fakeToken = "0.ec2c1d46-6a4b-4751-a310-af9601317f2d.C2IgxjjLF7qSshsbwe8JGcbM075YXw:X8vbvA0bduihIDe/qrzIQQ=="

const secretID = "be8e0ad8-d545-4017-a55a-b02f014d4158"

func TestBWSRejectsBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, token, ref, field string
		noToken                 bool
		wantErr                 string
	}{
		{name: "no token", noToken: true, ref: secretID, wantErr: "BWS_ACCESS_TOKEN is not set"},
		{name: "no key", token: "0.ec2c1d46-6a4b-4751-a310-af9601317f2d.C2IgxjjLF7qSshsbwe8JGcbM075YXw", ref: secretID, wantErr: "no encryption key"},
		{name: "wrong parts", token: "0.ec2c1d46-6a4b-4751-a310-af9601317f2d:X8vbvA0bduihIDe/qrzIQQ==", ref: secretID, wantErr: "dot-separated parts"},
		{name: "wrong version", token: "1.ec2c1d46-6a4b-4751-a310-af9601317f2d.abc:X8vbvA0bduihIDe/qrzIQQ==", ref: secretID, wantErr: "version"},
		{name: "bad uuid", token: "0.not-a-uuid.abc:X8vbvA0bduihIDe/qrzIQQ==", ref: secretID, wantErr: "not a UUID"},
		{name: "empty secret", token: "0.ec2c1d46-6a4b-4751-a310-af9601317f2d.:X8vbvA0bduihIDe/qrzIQQ==", ref: secretID, wantErr: "empty client secret"},
		{name: "bad base64", token: "0.ec2c1d46-6a4b-4751-a310-af9601317f2d.abc:!!!", ref: secretID, wantErr: "not base64"},
		{name: "short key", token: "0.ec2c1d46-6a4b-4751-a310-af9601317f2d.abc:YWJj", ref: secretID, wantErr: "3 bytes, want 16"},
		{name: "bad secret id", token: fakeToken, ref: "hcloud-token", wantErr: "is a UUID"},
		{name: "bad field", token: fakeToken, ref: secretID, field: "password", wantErr: "not one of value, note"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			if !tc.noToken {
				env["BWS_ACCESS_TOKEN"] = tc.token
			}
			r := secrets.NewResolver(secrets.Options{Env: envMap(env)})
			_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bws", Ref: tc.ref, Field: tc.field})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Fatalf("error quotes the token: %v", err)
			}
		})
	}
}

func TestBWSBadServerURL(t *testing.T) {
	t.Parallel()
	r := secrets.NewResolver(secrets.Options{Env: envMap(map[string]string{"BWS_ACCESS_TOKEN": fakeToken})})
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bws", Ref: secretID, ServerURL: "vault.example.org"})
	if err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Fatalf("err = %v", err)
	}
}
