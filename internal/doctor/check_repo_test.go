package doctor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

const (
	ageKey1 = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
	ageKey2 = "age1lggyhqrw2nlhcxprm67z43rta597azn8gknawjehu9d9dl0jq3yqqvfafg"
)

func TestHelmfileV1(t *testing.T) {
	expect(t, checkHelmfileV1(context.Background(), &Env{RepoDir: "testdata/repo-good"}), StatusPass,
		"helmfiles: helmfile.d/10-apps.yaml, helmfile.yaml.gotmpl")
	expect(t, checkHelmfileV1(context.Background(), &Env{RepoDir: "testdata/repo-bad"}), StatusFail,
		"helmfile.yaml lines 1-10: environments and releases in the same YAML document",
		helmfileEnvReleasesErr,
		"helmfile.yaml: template braces `{{` on line(s) 7, but the file is not named *.gotmpl",
		"bad character U+007B '{'",
		"values/podinfo.yaml (used by helmfile.yaml): template braces on line(s) 2",
		"start the releases with a `---` line", "helmfile.yaml.gotmpl")
	expect(t, checkHelmfileV1(context.Background(), &Env{}), StatusSkip, "no --repo")
	expect(t, checkHelmfileV1(context.Background(), &Env{RepoDir: "testdata/nonexistent"}), StatusError, "testdata/nonexistent")
}

func TestHelmfileValuesOnlyWarns(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "helmfile.yaml", "environments:\n  default: {}\n---\nreleases:\n  - name: a\n    chart: ./a\n    values:\n      - a.yaml\n")
	write(t, dir, "a.yaml", "host: {{ .Values.host }}\n")
	expect(t, checkHelmfileV1(context.Background(), &Env{RepoDir: dir}), StatusWarn, "a.yaml (used by helmfile.yaml)", "unrendered")
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSopsRules(t *testing.T) {
	expect(t, checkSopsRules(context.Background(), &Env{RepoDir: "testdata/repo-good"}), StatusPass,
		`state/kubeconfig.enc.yaml: recipients match rule path_regex "state/.*\\.enc\\.yaml$"`,
		`secrets.env: recipients match rule path_regex ".*"`)
	expect(t, checkSopsRules(context.Background(), &Env{RepoDir: "testdata/repo-bad"}), StatusFail,
		"state/kubeconfig.enc.yaml: encrypted for "+ageKey2+", but the first matching rule of .sops.yaml (path_regex \"state/.*\\\\.enc\\\\.yaml$\") wants "+ageKey1,
		`workdir/notes.json: recipients match rule path_regex "workdir/.*"`,
		"INPUT path", "sops -e -i")
}

func TestSopsRulesNoRuleAndNested(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".sops.yaml", "creation_rules:\n  - path_regex: ^secrets/\n    age: "+ageKey1+"\n")
	write(t, dir, "apps/x.yaml", "a: ENC[x]\nsops:\n  age:\n    - recipient: "+ageKey1+"\n")
	expect(t, checkSopsRules(context.Background(), &Env{RepoDir: dir}), StatusFail, "apps/x.yaml: no creation rule of .sops.yaml matches this path")

	// A nested .sops.yaml governs its folder, with paths relative to it.
	write(t, dir, "apps/.sops.yaml", "creation_rules:\n  - path_regex: ^x\\.yaml$\n    age: "+ageKey1+"\n")
	expect(t, checkSopsRules(context.Background(), &Env{RepoDir: dir}), StatusPass, "apps/x.yaml: recipients match")

	write(t, dir, ".sops.yaml", "creation_rules:\n  - path_regex: '[unclosed'\n")
	expect(t, checkSopsRules(context.Background(), &Env{RepoDir: dir}), StatusFail, "does not compile")
}

func TestCiliumTalos(t *testing.T) {
	env := &Env{VIP: "10.0.1.100", Kube: &fakeKube{cilium: goodCilium()}, RepoDir: "testdata/repo-good"}
	expect(t, checkCiliumTalos(context.Background(), env), StatusPass, `cluster: k8sServiceHost="localhost" k8sServicePort=7445`,
		"Cilium values not read, the installed Cilium in the cluster is what runs")

	// The installed Cilium wins over stale repository values.
	env.RepoDir = "testdata/repo-bad"
	expect(t, checkCiliumTalos(context.Background(), env), StatusPass, "installed Cilium")

	// Without Cilium in the cluster, the repository's values: chart default
	// capabilities (with SYS_MODULE), cgroup auto-mount, and the VIP as API
	// endpoint.
	env.Kube = &fakeKube{}
	expect(t, checkCiliumTalos(context.Background(), env), StatusFail,
		"cilium/values.yaml: SYS_MODULE is requested",
		"cilium/values.yaml: cgroup.autoMount.enabled is true",
		"cilium/values.yaml: k8sServiceHost is the VIP 10.0.1.100",
		"unable to apply caps: operation not permitted",
		"set k8sServiceHost: localhost and k8sServicePort: 7445")

	bad := goodCilium()
	bad.AgentCaps = bad.AgentCaps[:5]
	bad.K8sServicePort = 6443
	env = &Env{Kube: &fakeKube{cilium: bad}}
	expect(t, checkCiliumTalos(context.Background(), env), StatusFail,
		"cluster: cilium-agent lacks capabilities SYS_ADMIN, SYS_RESOURCE, DAC_OVERRIDE, FOWNER, SETGID, SETUID",
		"k8sServicePort is 6443, not KubePrism's 7445")

	other := goodCilium()
	other.K8sServiceHost, other.K8sServicePort = "api.example.com", 6443
	env = &Env{Kube: &fakeKube{cilium: other}}
	expect(t, checkCiliumTalos(context.Background(), env), StatusWarn, "not KubePrism")

	expect(t, checkCiliumTalos(context.Background(), &Env{Kube: &fakeKube{}}), StatusSkip, "Cilium is not installed")
}
