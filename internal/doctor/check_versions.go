package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/compatibility"
	"github.com/siderolabs/talos/pkg/machinery/gendata"
)

// VersionSource reads a node's running Talos version (the Version API); a
// TalosSource that implements it lets version-skew compare the nodes.
type VersionSource interface {
	// TalosVersion returns the node's Talos tag, e.g. "v1.13.9".
	TalosVersion(ctx context.Context, node string) (string, error)
}

// MachineryVersion is the Talos machinery this ohmytalos is built with:
// the newest Talos release whose configs and Kubernetes support table it
// knows (pkg/machinery/gendata/data/tag).
var MachineryVersion = strings.TrimSpace(gendata.VersionTag)

// versionFacts is what version-skew gathered.
type versionFacts struct {
	evidence, fails, warns, fixes []string
}

func (f *versionFacts) fail(problem, fix string) {
	f.fails, f.fixes = append(f.fails, problem), append(f.fixes, fix)
}

func (f *versionFacts) warn(problem, fix string) {
	f.warns, f.fixes = append(f.warns, problem), append(f.fixes, fix)
}

// checkVersionSkew compares the nodes' Talos (Version API) and Kubernetes
// (Node status.nodeInfo.kubeletVersion) versions with the spec and with
// what the machinery this ohmytalos is built with supports
// (pkg/machinery/compatibility: KubernetesVersion.SupportedWith; Talos
// releases newer than the machinery are unknown to it).
func checkVersionSkew(ctx context.Context, env *Env) Result {
	vs, haveTalos := env.Talos.(VersionSource)
	if (env.Talos == nil || !haveTalos) && env.Kube == nil {
		return skip("neither the Talos API nor the Kubernetes API is available to the doctor")
	}
	f := &versionFacts{evidence: []string{"ohmytalos's Talos machinery: " + MachineryVersion}}
	if env.TalosVersion != "" || env.KubernetesVersion != "" {
		f.evidence = append(f.evidence, fmt.Sprintf("spec: talos.version %s, kubernetes.version %s", orNone1(env.TalosVersion), orNone1(env.KubernetesVersion)))
		specVersions(f, env)
	}
	talosOf := map[string]string{}
	if env.Talos != nil && haveTalos {
		for _, n := range append(append([]NodeRef{}, env.ControlPlanes...), env.Workers...) {
			v, err := vs.TalosVersion(ctx, talosNode(n))
			if err != nil {
				f.evidence = append(f.evidence, fmt.Sprintf("%s: Talos version unreadable: %v", n.Name, err))
				continue
			}
			talosOf[n.Name] = v
			nodeTalos(f, env, n.Name, v)
		}
	}
	if env.Kube != nil {
		nodes, err := env.Kube.Nodes(ctx)
		if err != nil {
			return sourceError("the Kubernetes nodes", err)
		}
		for _, n := range nodes {
			nodeKubelet(f, env, n, talosOf[n.Name])
		}
	}
	switch {
	case len(f.fails) > 0:
		return Result{Status: StatusFail, Evidence: append(append(f.fails, f.warns...), f.evidence...),
			Explanation: "a Kubernetes release outside its Talos release's support table, or a Talos release newer than ohmytalos's machinery, is a combination nobody tested: upgrades refuse it or generate configs the nodes misread",
			Fix:         strings.Join(uniq(f.fixes), "; ")}
	case len(f.warns) > 0:
		return Result{Status: StatusWarn, Evidence: append(f.warns, f.evidence...),
			Explanation: "the nodes do not run what the spec says: an upgrade was interrupted, or the spec changed and was not applied",
			Fix:         strings.Join(uniq(f.fixes), "; ")}
	}
	return pass(f.evidence...)
}

func orNone1(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// specVersions checks the spec's own pair against the machinery.
func specVersions(f *versionFacts, env *Env) {
	if env.TalosVersion != "" {
		if problem := beyondMachinery(env.TalosVersion); problem != "" {
			f.fail("spec talos.version "+env.TalosVersion+": "+problem, "use an ohmytalos built with Talos machinery "+env.TalosVersion+" or later, or set talos.version to "+MachineryVersion+" or older")
		}
	}
	if env.TalosVersion != "" && env.KubernetesVersion != "" {
		if err := supportedWith(env.KubernetesVersion, env.TalosVersion); err != nil {
			f.fail(fmt.Sprintf("spec: kubernetes.version %s on talos.version %s: %v", env.KubernetesVersion, env.TalosVersion, err),
				"set kubernetes.version to a release Talos "+env.TalosVersion+" supports, or raise talos.version first")
		}
	}
}

// nodeTalos checks one node's running Talos.
func nodeTalos(f *versionFacts, env *Env, node, v string) {
	f.evidence = append(f.evidence, fmt.Sprintf("%s: Talos %s", node, v))
	if problem := beyondMachinery(v); problem != "" {
		f.fail(fmt.Sprintf("%s runs Talos %s: %s", node, v, problem), "use an ohmytalos built with Talos machinery "+v+" or later")
	}
	if env.TalosVersion != "" && !sameVersion(v, env.TalosVersion) {
		f.warn(fmt.Sprintf("%s runs Talos %s, the spec says %s", node, v, env.TalosVersion), "run ohmytalos apply to upgrade the nodes to the spec (or set talos.version back)")
	}
}

// nodeKubelet checks one node's kubelet against its Talos and the spec.
func nodeKubelet(f *versionFacts, env *Env, n KubeNode, talos string) {
	if n.KubeletVersion == "" {
		return
	}
	f.evidence = append(f.evidence, fmt.Sprintf("%s: kubelet %s", n.Name, n.KubeletVersion))
	if talos == "" {
		talos = env.TalosVersion
	}
	if talos != "" && beyondMachinery(talos) == "" {
		if err := supportedWith(n.KubeletVersion, talos); err != nil {
			f.fail(fmt.Sprintf("%s runs kubelet %s on Talos %s: %v", n.Name, n.KubeletVersion, talos, err),
				"upgrade Kubernetes (kubernetes.version) or Talos so that the pair is in Talos' support table")
		}
	}
	if env.KubernetesVersion != "" && !sameVersion(n.KubeletVersion, env.KubernetesVersion) {
		f.warn(fmt.Sprintf("%s runs kubelet %s, the spec says %s", n.Name, n.KubeletVersion, env.KubernetesVersion), "run ohmytalos apply to upgrade Kubernetes to the spec (or set kubernetes.version back)")
	}
}

// beyondMachinery says why a Talos version is unknown to the machinery:
// a newer minor than it ships has no support table and no config contract.
func beyondMachinery(talos string) string {
	maj, minor, ok := majorMinor(talos)
	if !ok {
		return "not a Talos release version"
	}
	mMaj, mMinor, _ := majorMinor(MachineryVersion)
	if maj > mMaj || (maj == mMaj && minor > mMinor) {
		return fmt.Sprintf("newer than ohmytalos's Talos machinery %s knows", MachineryVersion)
	}
	return ""
}

func majorMinor(v string) (major, minor int, ok bool) {
	n, _ := fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d", &major, &minor)
	return major, minor, n == 2
}

func supportedWith(k8s, talos string) error {
	kv, err := compatibility.ParseKubernetesVersion(k8s)
	if err != nil {
		return fmt.Errorf("%q is not a Kubernetes version", k8s)
	}
	tv, err := compatibility.ParseTalosVersion(&machine.VersionInfo{Tag: talos})
	if err != nil {
		return fmt.Errorf("%q is not a Talos version", talos)
	}
	return kv.SupportedWith(tv) //nolint:wrapcheck // machinery's words name both versions
}

func sameVersion(a, b string) bool {
	return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
}
