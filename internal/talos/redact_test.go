package talos

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/types/block"
	"github.com/siderolabs/talos/pkg/machinery/config/types/network"
	"github.com/siderolabs/talos/pkg/machinery/config/types/runtime/extensions"
)

// bundleSecrets lists every secret value of the bundle as it can appear in
// a machine config: raw, and base64-encoded as YAML encodes []byte.
func bundleSecrets(b *secrets.Bundle) map[string]string {
	out := map[string]string{
		"cluster secret":    b.Cluster.Secret,
		"bootstrap token":   b.Secrets.BootstrapToken,
		"secretbox secret":  b.Secrets.SecretboxEncryptionSecret,
		"trustd token":      b.TrustdInfo.Token,
		"os CA key":         string(b.Certs.OS.Key),
		"k8s CA key":        string(b.Certs.K8s.Key),
		"aggregator CA key": string(b.Certs.K8sAggregator.Key),
		"etcd CA key":       string(b.Certs.Etcd.Key),
		"service acct key":  string(b.Certs.K8sServiceAccount.Key),
	}

	for name, v := range out {
		out[name+" (base64)"] = base64.StdEncoding.EncodeToString([]byte(v))
	}

	if b.Secrets.AESCBCEncryptionSecret != "" {
		out["aescbc secret"] = b.Secrets.AESCBCEncryptionSecret
	}

	out["hcloud token"] = testHCloudToken
	out["tailscale key"] = testTSKey
	out["disk passphrase"] = testPassphrase

	return out
}

func TestRedact(t *testing.T) {
	b := testBundle(t)

	for _, g := range []NodeGroup{controlPlaneGroup(), storageGroup()} {
		t.Run(g.Pool, func(t *testing.T) {
			r, err := Render(b, testCluster(), g)
			if err != nil {
				t.Fatal(err)
			}

			// The test is meaningful only if the secrets were there.
			present := 0

			for _, v := range bundleSecrets(b) {
				if bytes.Contains(r.Config, []byte(v)) {
					present++
				}
			}

			// A worker holds the cluster secret, both tokens and the
			// passphrase; a control plane also every CA key and more.
			minPresent := 4
			if g.Role == RoleControlPlane {
				minPresent = 12
			}

			if present < minPresent {
				t.Fatalf("only %d secrets found in the unredacted config: the test checks nothing", present)
			}

			out, err := Redact(r.Config)
			if err != nil {
				t.Fatal(err)
			}

			for name, v := range bundleSecrets(b) {
				if v != "" && bytes.Contains(out, []byte(v)) {
					t.Errorf("redacted config still contains the %s", name)
				}
			}

			if bytes.Contains(out, []byte("PRIVATE KEY")) {
				t.Error("redacted config contains a PEM private key")
			}

			// Still a valid config, same shape, certificates kept.
			d := decode(t, out)
			if !bytes.Equal(d.v1.MachineConfig.MachineCA.Crt, b.Certs.OS.Crt) {
				t.Error("the Talos CA certificate was removed")
			}

			for _, v := range find[*block.VolumeConfigV1Alpha1](d) {
				for _, k := range v.EncryptionSpec.EncryptionKeys {
					if k.KeyStatic != nil && k.KeyStatic.KeyData != RedactedValue {
						t.Errorf("%s passphrase = %q", v.Name(), k.KeyStatic.KeyData)
					}
				}
			}

			if g.Role == RoleControlPlane {
				vips := find[*network.HCloudVIPConfigV1Alpha1](d)
				if len(vips) != 1 || vips[0].APIToken != RedactedValue {
					t.Errorf("VIP token not redacted: %+v", vips)
				}

				svcs := find[*extensions.ServiceConfigV1Alpha1](d)
				if len(svcs) != 1 || !slices.Contains(svcs[0].Environment(), "TS_AUTHKEY="+RedactedValue) ||
					!slices.Contains(svcs[0].Environment(), "TS_AUTH_ONCE=true") {
					t.Errorf("tailscale environment = %v", svcs)
				}

				if d.v1.ClusterConfig.BootstrapToken != RedactedValue || string(d.v1.ClusterConfig.ClusterCA.Key) != RedactedValue {
					t.Error("cluster token or CA key not replaced by " + RedactedValue)
				}
			}
		})
	}
}

func TestRedactRejectsGarbage(t *testing.T) {
	_, err := Redact([]byte("not: a: talos config"))
	if err == nil || !strings.HasPrefix(err.Error(), "redact machine config") {
		t.Fatalf("want a redact error, got %v", err)
	}
}
