package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// TestClusterIDAloneCannotDestroyOrChangeTheCluster is issue 30's
// "a checkout holding only secrets/cluster-id": the first checkout makes
// its network, firewall, placement groups and load balancers against a
// standalone sandbox (the pools step is all the refusals need, not a
// whole cluster); a second checkout holding only that cluster-id file,
// with another firewall.allow, is refused by apply --only pools, apply
// --from pools and destroy, which say how to recover the state, and
// nothing on the sandbox's Hetzner changes.
func TestClusterIDAloneCannotDestroyOrChangeTheCluster(t *testing.T) {
	dir, cfg := seedConfig(t)
	sb := standaloneSandbox(t, sandbox.Options{})
	for _, step := range []string{"network", "pools"} {
		if out, err := run(t, "apply", "--only", step, "--plain", "--config", cfg); err != nil {
			t.Fatalf("first checkout: apply --only %s: %v\n%s", step, err, out)
		}
	}
	id := strings.TrimSpace(mustRead(t, filepath.Join(dir, ".ohmytalos", "demo", "secrets", "cluster-id")))
	c := hcloud.NewClient(hcloud.WithEndpoint(sb.HCloudURL), hcloud.WithToken(sb.Token))
	before := hetznerSnapshot(t, c)
	if !strings.Contains(before, "firewall demo") || !strings.Contains(before, id) {
		t.Fatalf("the first checkout made no firewall with its ID %s:\n%s", id, before)
	}

	other := t.TempDir()
	cfg2 := filepath.Join(other, "ohmytalos.yaml")
	writeFile(t, cfg2, mustRead(t, cfg)+"firewall:\n  allow: [127.0.0.1/32, 198.51.100.7/32]\n")
	sdir := filepath.Join(other, ".ohmytalos", "demo")
	writeFile(t, filepath.Join(sdir, "secrets", "cluster-id"), id+"\n")

	for _, args := range [][]string{
		{"apply", "--only", "pools", "--plain"},
		{"apply", "--from", "pools", "--plain"},
		{"destroy", "--yes"},
	} {
		cmd := strings.Join(args, " ")
		cmd = strings.TrimSuffix(strings.TrimSuffix(cmd, " --plain"), " --yes")
		out, err := run(t, append(args, "--config", cfg2)...)
		if err == nil {
			t.Errorf("%s ran in a checkout holding only the cluster ID:\n%s", cmd, out)
		} else {
			mustContain(t, cmd+" refusal", err.Error(), cmd+" needs the cluster's state", sdir+" holds only the cluster ID "+id,
				"nothing was changed", "To recover the state", "copy state.json and secrets/ from the checkout that applied the cluster")
		}
		if strings.Contains(out, "destroy will delete") {
			t.Errorf("%s listed the first cluster for deletion:\n%s", cmd, out)
		}
		if after := hetznerSnapshot(t, c); after != before {
			t.Fatalf("%s changed the sandbox's Hetzner:\nbefore:\n%s\nafter:\n%s", cmd, before, after)
		}
	}
	if _, err := os.Stat(filepath.Join(sdir, "state.json")); err == nil {
		t.Error("a refused run wrote a state.json")
	}
}

// hetznerSnapshot lists the sandbox's networks, firewalls (with their
// rules), placement groups, load balancers and servers, with their IDs and
// labels, one per line in a stable order.
func hetznerSnapshot(t *testing.T, c *hcloud.Client) string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	add := func(kind, name string, id int64, labels map[string]string, extra string) {
		keys := make([]string, 0, len(labels))
		for k, v := range labels {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		lines = append(lines, fmt.Sprintf("%s %s id %d %v %s", kind, name, id, keys, extra))
	}
	nets, err := c.Network.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nets {
		add("network", n.Name, n.ID, n.Labels, "")
	}
	fws, err := c.Firewall.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fws {
		var rules []string
		for _, r := range f.Rules {
			var src []string
			for _, s := range r.SourceIPs {
				src = append(src, s.String())
			}
			port := ""
			if r.Port != nil {
				port = *r.Port
			}
			rules = append(rules, fmt.Sprintf("%s %s %s %v", r.Direction, r.Protocol, port, src))
		}
		add("firewall", f.Name, f.ID, f.Labels, fmt.Sprintf("rules %v applied to %d", rules, len(f.AppliedTo)))
	}
	groups, err := c.PlacementGroup.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		add("placement-group", g.Name, g.ID, g.Labels, "")
	}
	lbs, err := c.LoadBalancer.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range lbs {
		add("load-balancer", lb.Name, lb.ID, lb.Labels, fmt.Sprintf("%d services, %d targets", len(lb.Services), len(lb.Targets)))
	}
	servers, err := c.Server.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		add("server", s.Name, s.ID, s.Labels, "")
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
