package steps

import (
	"context"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// TestDoctorTalosEndpoints: the operator pointed the talosconfig at the
// VIP (talos #11830), then the cluster firewall stopped admitting port
// 50000 from here: talos-endpoints fails for each, naming the endpoint.
func TestDoctorTalosEndpoints(t *testing.T) {
	t.Parallel()
	c := appliedDoctorCluster(t)
	tc := storedSecret(t, c.env, secretTalosconfig)
	cfg, err := clientconfig.FromBytes(tc)
	if err != nil {
		t.Fatal(err)
	}
	ctxCfg := cfg.Contexts[cfg.Context]
	first := ctxCfg.Endpoints[0]
	ctxCfg.Endpoints = []string{c.env.Spec.ControlPlane.VIP, first}
	edited, err := cfg.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.env.State.PutSecret(secretTalosconfig, edited); err != nil {
		t.Fatal(err)
	}
	r := c.doctorResults(t, "talos-endpoints")["talos-endpoints"]
	if r.Status != doctor.StatusFail || !strings.Contains(strings.Join(r.Evidence, "\n"), "endpoint 10.0.1.100 is the VIP") ||
		!strings.Contains(strings.Join(r.Evidence, "\n"), "endpoint "+first+" answers") {
		t.Fatalf("talos-endpoints with the VIP = %s, want fail naming the VIP: %s", r.Status, describeResult(r))
	}

	// The firewall drops port 50000 from here: the sandbox's nodes close
	// such connections as Hetzner drops them.
	ctx := context.Background()
	hc, err := c.deps.HCloud(ctx, c.env.Spec)
	if err != nil {
		t.Fatal(err)
	}
	fws, err := hc.Firewall.AllWithOpts(ctx, hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: cloud.ClusterSelector(c.env.Spec.Name)}})
	if err != nil || len(fws) != 1 {
		t.Fatalf("cluster firewall: %v %v", fws, err)
	}
	var keep []hcloud.FirewallRule
	for _, rule := range fws[0].Rules {
		if rule.Port == nil || *rule.Port != doctor.TalosAPIPort {
			keep = append(keep, rule)
		}
	}
	if len(keep) == len(fws[0].Rules) {
		t.Fatalf("no rule for port 50000 in %+v", fws[0].Rules)
	}
	if _, _, err := hc.Firewall.SetRules(ctx, fws[0], hcloud.FirewallSetRulesOpts{Rules: keep}); err != nil {
		t.Fatal(err)
	}
	r = c.doctorResults(t, "talos-endpoints")["talos-endpoints"]
	if r.Status != doctor.StatusFail || !strings.Contains(strings.Join(r.Evidence, "\n"), "endpoint "+first+" does not answer") ||
		!strings.Contains(r.Fix, "allow TCP 50000") {
		t.Fatalf("talos-endpoints behind the firewall = %s, want fail naming %s: %s", r.Status, first, describeResult(r))
	}
}

// checkVersionSkew: the seed cluster runs what its spec says; a spec
// edited to a Kubernetes release Talos v1.13 does not support fails, and
// one naming another Talos patch warns that the nodes differ. It puts
// the spec's versions back when it ends.
func checkVersionSkew(t *testing.T, c *doctorCluster) {
	k8s, talos := c.env.Spec.Kubernetes.Version, c.env.Spec.Talos.Version
	defer func() { c.env.Spec.Kubernetes.Version, c.env.Spec.Talos.Version = k8s, talos }()
	r := c.doctorResults(t, "version-skew")["version-skew"]
	ev := strings.Join(r.Evidence, "\n")
	if r.Status != doctor.StatusPass || !strings.Contains(ev, "demo-cp-1: Talos v1.13.9") || !strings.Contains(ev, "kubelet v1.36.3") {
		t.Fatalf("version-skew on the seed cluster = %s, want pass with each node's versions: %s", r.Status, describeResult(r))
	}
	c.env.Spec.Kubernetes.Version = "1.37.0"
	r = c.doctorResults(t, "version-skew")["version-skew"]
	if r.Status != doctor.StatusFail || !strings.Contains(strings.Join(r.Evidence, "\n"), "spec: kubernetes.version 1.37.0 on talos.version v1.13.9: version of Kubernetes 1.37.0 is too new") {
		t.Fatalf("version-skew with kubernetes 1.37.0 = %s, want fail: %s", r.Status, describeResult(r))
	}
	c.env.Spec.Kubernetes.Version, c.env.Spec.Talos.Version = "1.36.3", "v1.13.8"
	r = c.doctorResults(t, "version-skew")["version-skew"]
	if r.Status != doctor.StatusWarn || !strings.Contains(strings.Join(r.Evidence, "\n"), "demo-worker-1 runs Talos v1.13.9, the spec says v1.13.8") {
		t.Fatalf("version-skew with talos v1.13.8 in the spec = %s, want warn naming the nodes: %s", r.Status, describeResult(r))
	}
}
