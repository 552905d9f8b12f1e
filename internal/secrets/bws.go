package secrets

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/safeurl"
)

// AccessTokenEnv is the environment variable holding the Bitwarden Secrets
// Manager machine account access token, as the bws CLI names it.
const AccessTokenEnv = "BWS_ACCESS_TOKEN"

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// bwsProvider reads Bitwarden Secrets Manager secrets; the lookup itself is
// in bws_cgo.go (SDK, needs cgo) or bws_nocgo.go (a clear error).
type bwsProvider struct {
	env func(string) (string, bool)
}

// Name implements Provider.
func (bwsProvider) Name() string { return ProviderBWS }

// validateAccessToken checks the shape the SDK expects before handing the
// token over, so a pasted password or a truncated token gets a clear error:
// "0.<access token ID uuid>.<client secret>:<base64 16-byte key>" (bitwarden
// sdk crates: AccessToken::from_str splits on ':' then '.', requires version
// "0", a UUID, and a base64 key of 16 bytes). Errors never quote the token.
func validateAccessToken(tok string) error {
	const how = "copy the whole access token of the machine account from the Bitwarden web vault (Secrets Manager > Machine accounts > Access tokens) into " + AccessTokenEnv
	first, key, ok := strings.Cut(tok, ":")
	if !ok {
		return fmt.Errorf("%s has no encryption key part (\":<key>\"); %s", AccessTokenEnv, how)
	}
	parts := strings.Split(first, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%s should look like 0.<uuid>.<secret>:<key> but has %d dot-separated parts before ':'; %s", AccessTokenEnv, len(parts), how)
	}
	if parts[0] != "0" {
		return fmt.Errorf("%s has an unsupported version (want \"0.\" at the start); %s", AccessTokenEnv, how)
	}
	if !uuidPattern.MatchString(parts[1]) {
		return fmt.Errorf("%s: the access token ID is not a UUID; %s", AccessTokenEnv, how)
	}
	if parts[2] == "" {
		return fmt.Errorf("%s has an empty client secret; %s", AccessTokenEnv, how)
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(key, "="))
	}
	if err != nil {
		return fmt.Errorf("%s: the encryption key is not base64; %s", AccessTokenEnv, how)
	}
	if len(raw) != 16 {
		return fmt.Errorf("%s: the encryption key is %d bytes, want 16; %s", AccessTokenEnv, len(raw), how)
	}
	return nil
}

// bwsEndpoints returns the API and identity URLs for a server URL: empty or
// the US cloud means the SDK defaults (nil), the EU cloud its own hosts, and
// anything else a self-hosted server with /api and /identity beneath it.
func bwsEndpoints(server string) (api, identity *string, err error) {
	if server == "" {
		return nil, nil, nil
	}
	u, err := url.Parse(strings.TrimRight(server, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, nil, fmt.Errorf("bitwarden server URL %q is not an http(s) URL; use https://vault.bitwarden.eu for the EU cloud or your server's base URL", server)
	}
	// The access token and the secrets travel to this URL.
	if _, err := safeurl.Check("bitwarden secrets manager serverURL", server); err != nil {
		return nil, nil, err
	}
	switch strings.ToLower(u.Hostname()) {
	case "bitwarden.com", "vault.bitwarden.com":
		return nil, nil, nil
	case "bitwarden.eu", "vault.bitwarden.eu":
		a, i := "https://api.bitwarden.eu", "https://identity.bitwarden.eu"
		return &a, &i, nil
	}
	a, i := u.String()+"/api", u.String()+"/identity"
	return &a, &i, nil
}

// bwsRequest checks everything that can be checked without the network and
// returns the token to use.
func (p bwsProvider) bwsRequest(ref Ref) (string, error) {
	if !uuidPattern.MatchString(ref.Ref) {
		return "", fmt.Errorf("secret %s: a Secrets Manager secret ID is a UUID (see \"bws secret list\"), got %q", ref.String(), ref.Ref)
	}
	switch strings.ToLower(ref.Field) {
	case "", "value", "note":
	default:
		return "", fmt.Errorf("secret %s: field %q is not one of value, note", ref.String(), ref.Field)
	}
	tok, ok := p.env(AccessTokenEnv)
	if !ok || tok == "" {
		return "", fmt.Errorf("secret %s: %s is not set: export the machine account's access token as %s", ref.String(), AccessTokenEnv, AccessTokenEnv)
	}
	if err := validateAccessToken(tok); err != nil {
		return "", fmt.Errorf("secret %s: %w", ref.String(), err)
	}
	return tok, nil
}
