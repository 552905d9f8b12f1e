package talos

import (
	"fmt"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/container"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/types/runtime/extensions"
)

// Redact returns cfg (a machine config, as Render produces) with every secret
// value replaced by RedactedValue: CA and service account private keys, the
// machine and bootstrap tokens, the cluster secret, the secretbox/aescbc
// encryption secret, LUKS passphrases, the Hetzner API token and secret
// extension environment values such as the Tailscale auth key. Certificates
// and everything else stay, so the result is safe to show or log.
func Redact(cfg []byte) ([]byte, error) {
	provider, err := configloader.NewFromBytes(cfg)
	if err != nil {
		return nil, fmt.Errorf("redact machine config: it does not parse as a Talos config: %w", err)
	}

	redacted, ok := provider.RedactSecrets(RedactedValue).(*container.Container)
	if !ok {
		return nil, fmt.Errorf("redact machine config: unexpected config type %T", provider)
	}

	for _, doc := range redacted.Documents() {
		if svc, ok := doc.(*extensions.ServiceConfigV1Alpha1); ok {
			for i, kv := range svc.ServiceEnvironment {
				name, _, found := strings.Cut(kv, "=")
				if found && isSecretEnv(name) {
					svc.ServiceEnvironment[i] = name + "=" + RedactedValue
				}
			}
		}
	}

	out, err := redacted.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, fmt.Errorf("redact machine config: encode: %w", err)
	}

	return out, nil
}

// isSecretEnv flags extension service environment variables whose values are
// secrets (TS_AUTHKEY and the like). Talos' own redaction does not cover
// ExtensionServiceConfig: it is no config.SecretDocument in machinery v1.13.
func isSecretEnv(name string) bool {
	upper := strings.ToUpper(name)

	for _, m := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "CREDENTIAL"} {
		if strings.Contains(upper, m) {
			return true
		}
	}

	return false
}
