package ui

import (
	"os"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// TestReviewSaveKeepsTheOperatorsComments: a commented spec file edited in
// the wizard and written from the review screen keeps every comment, and
// the edited value.
func TestReviewSaveKeepsTheOperatorsComments(t *testing.T) {
	g, b := guardedBackend(t)
	seed := strings.Join([]string{
		"# Staging cluster, owned by the platform team.",
		"name: demo # resources are found by this name",
		"location: nbg1",
		"controlPlane:",
		"  count: 3 # odd, for etcd",
		"pools:",
		"  # App nodes: scale with the traffic.",
		"  - name: worker",
		"    serverType: cpx32",
		"    count: 2 # two for the load balancer",
		"    loadBalancer: true",
		"secrets:",
		"  hcloudToken: {provider: env, ref: HCLOUD_TOKEN} # from direnv",
		"",
	}, "\n")
	if err := os.WriteFile("ohmytalos.yaml", []byte(seed), 0o640); err != nil {
		t.Fatal(err)
	}
	loaded, err := spec.Load("ohmytalos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b.Env.Spec = loaded
	h := newHarnessFor(t, g, b, Options{Width: 80, Height: 24})
	h.open(scrPools)
	h.Key("down", "+")
	h.open(scrReview)
	h.Key("s", "y")
	h.Settle()
	mustContain(t, h.m.View(), "spec written to ohmytalos.yaml")
	raw, err := os.ReadFile("ohmytalos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"# Staging cluster, owned by the platform team.", "# resources are found by this name", "# odd, for etcd",
		"# App nodes: scale with the traffic.", "count: 3 # two for the load balancer", "# from direnv"} {
		if !strings.Contains(string(raw), c) {
			t.Errorf("the saved file lacks %q:\n%s", c, raw)
		}
	}
	if st, _ := os.Stat("ohmytalos.yaml"); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want the file's 0640", st.Mode().Perm())
	}
	got, err := spec.Load("ohmytalos.yaml")
	if err != nil || got.Pools[0].Count != 3 || got.Hash() != h.m.c.spec.Hash() {
		t.Errorf("the saved spec differs from the edited one (%v):\n%s", err, raw)
	}
}
