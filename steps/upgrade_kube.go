package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/compatibility"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/constants"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// kubernetesSupported checks that a node's Talos release supports a
// Kubernetes version, with the table machinery ships
// (pkg/machinery/compatibility: KubernetesVersion.SupportedWith, e.g.
// talos113 allows 1.31.0 to 1.36.x).
func kubernetesSupported(k8s, talosVersion string) error {
	kv, err := compatibility.ParseKubernetesVersion(k8s)
	if err != nil {
		return fmt.Errorf("kubernetes.version: %q is not a Kubernetes version (%w): use the form \"1.36.3\"", k8s, err)
	}
	tv, err := compatibility.ParseTalosVersion(&machine.VersionInfo{Tag: talosVersion})
	if err != nil {
		return fmt.Errorf("the node runs Talos %q, which is no release version: %w", talosVersion, err)
	}
	if err := kv.SupportedWith(tv); err != nil {
		return fmt.Errorf("kubernetes.version: Kubernetes %s does not run on Talos %s (%w): pick a version that Talos release supports, or upgrade Talos first (talos.version)", k8s, talosVersion, err)
	}
	return nil
}

// checkKubernetesPath refuses what Kubernetes does not support: control
// planes move one minor release at a time, and never back (the version
// skew policy, kubernetes.io/releases/version-skew-policy; kubeadm and
// talosctl upgrade-k8s refuse both). Patch changes up are fine.
func checkKubernetesPath(from, to string) error {
	if from == "" || from == to {
		return nil
	}
	f, t, err := parsePath(from, to,
		fmt.Errorf("the cluster runs Kubernetes %q, which is no release version: upgrade it by hand", from),
		fmt.Errorf("kubernetes.version: %q is not a Kubernetes release version: use the form \"1.36.3\"", to))
	if err != nil {
		return err
	}
	switch {
	case t.Major != f.Major || t.Minor < f.Minor || (t.Minor == f.Minor && t.Patch < f.Patch):
		return fmt.Errorf("kubernetes.version: %s -> %s is a downgrade, which Kubernetes does not support: set kubernetes.version back to %s or later", from, to, strings.TrimPrefix(from, "v"))
	case t.Minor > f.Minor+1:
		var through []string
		for m := f.Minor + 1; m < t.Minor; m++ {
			through = append(through, fmt.Sprintf("%d.%d.x", f.Major, m))
		}
		return fmt.Errorf("kubernetes.version: cannot upgrade from %s to %s in one step: Kubernetes control planes move one minor release at a time; set kubernetes.version to the latest patch of %s and apply, once each, then to %s",
			from, to, strings.Join(through, ", then "), strings.TrimPrefix(to, "v"))
	}
	return nil
}

// withKubeletImage keeps a node's kubelet at version in a rendered config:
// control-plane components move first, kubelets after.
func withKubeletImage(cfg []byte, version string) ([]byte, error) {
	return patchMachineConfig(cfg, "keep the kubelet at "+version, func(c *v1alpha1.Config) error {
		if c.MachineConfig == nil {
			return fmt.Errorf("the config has no machine section")
		}
		if c.MachineConfig.MachineKubelet == nil {
			c.MachineConfig.MachineKubelet = &v1alpha1.KubeletConfig{}
		}
		c.MachineConfig.MachineKubelet.KubeletImage = constants.KubeletImage + ":" + version
		return nil
	})
}

// patchMachineConfig changes a rendered machine config with patch
// (machinery's Container.PatchV1Alpha1) and encodes it without comments;
// what names the change in patch's error.
func patchMachineConfig(cfg []byte, what string, patch func(*v1alpha1.Config) error) ([]byte, error) {
	p, err := configloader.NewFromBytes(cfg)
	if err != nil {
		return nil, fmt.Errorf("load rendered machine config: %w", err)
	}
	patched, err := p.PatchV1Alpha1(patch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	b, err := patched.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, fmt.Errorf("encode machine config: %w", err)
	}
	return b, nil
}

// kubernetes upgrades Kubernetes the way talosctl upgrade-k8s does: the
// control planes' apiserver, controller-manager and scheduler (images in
// the machine config, applied live) one control plane at a time, then the
// kubelets node by node, each waited for in the Kubernetes API.
func (r *upgradeRun) kubernetes(ctx context.Context) error {
	sp := r.env.Spec
	want := "v" + sp.Kubernetes.Version
	kubelets := map[string]string{}
	for _, n := range r.nodes {
		_, kv, err := r.nodeReady(ctx, n.node.Name)
		if err != nil {
			return fmt.Errorf("read node %s from Kubernetes: %w", n.node.Name, err)
		}
		kubelets[n.node.Name] = kv
	}
	var needCP, needKubelet []nodeAddr
	for _, n := range r.nodes {
		rec := r.recorded(n.node.Name)
		// A control plane never recorded whose kubelet runs the target
		// was built at it: kubelets move only after the components.
		builtAt := rec.ControlPlane == "" && kubelets[n.node.Name] == want
		if n.node.Role == spec.RoleControlPlane && rec.ControlPlane != want && !builtAt {
			needCP = append(needCP, n)
		}
		if kubelets[n.node.Name] != want {
			needKubelet = append(needKubelet, n)
		}
		if err := r.record(n.node.Name, func(v *nodeVersions) {
			v.Kubelet = kubelets[n.node.Name]
			if n.node.Role == spec.RoleControlPlane && builtAt {
				v.ControlPlane = want
			}
		}); err != nil {
			return err
		}
	}
	if len(needCP) == 0 && len(needKubelet) == 0 {
		return nil
	}
	for _, n := range needCP {
		from := r.recorded(n.node.Name).ControlPlane
		if from == "" {
			from = kubelets[n.node.Name]
		}
		if err := checkKubernetesPath(from, want); err != nil {
			return fmt.Errorf("node %s: %w", n.node.Name, err)
		}
	}
	for _, n := range r.nodes {
		if err := kubernetesSupported(sp.Kubernetes.Version, r.installed[n.node.Name].Version); err != nil {
			return fmt.Errorf("node %s: %w", n.node.Name, err)
		}
	}
	rendered, err := r.s.configs.renderAll(ctx, r.env)
	if err != nil {
		return err
	}
	// Nodes whose patches changed keep the patches they run: the configs
	// phase after this one applies the new ones, live or with a reboot.
	current, err := r.recordedConfigs(ctx, rendered)
	if err != nil {
		return err
	}
	for _, n := range needCP {
		cfg := current(n)
		if kv := kubelets[n.node.Name]; kv != "" && kv != want {
			if cfg, err = withKubeletImage(cfg, kv); err != nil {
				return err
			}
		}
		if err := r.kubeNode(ctx, n, "kubernetes control plane", cfg, want, func(ctx context.Context) (bool, string, error) {
			return etcdHealthy(ctx, r.conns[n.node.Name], n.node.Name, sp.ControlPlane.Count)
		}, func(v *nodeVersions) { v.ControlPlane = want }); err != nil {
			return err
		}
	}
	for _, n := range needKubelet {
		if err := r.kubeNode(ctx, n, "kubelet", current(n), want, func(ctx context.Context) (bool, string, error) {
			ready, kv, err := r.nodeReady(ctx, n.node.Name)
			return ready && kv == want, fmt.Sprintf("kubelet %s, Ready %v", kv, ready), err
		}, func(v *nodeVersions) { v.Kubelet = want }); err != nil {
			return err
		}
	}
	return nil
}

// kubeNode applies a config to one node without a reboot, waits for it
// to be Ready and for done, then records it.
func (r *upgradeRun) kubeNode(ctx context.Context, n nodeAddr, what string, cfg []byte, want string,
	done func(context.Context) (bool, string, error), rec func(*nodeVersions)) error {
	name := n.node.Name
	if err := r.record(name, func(v *nodeVersions) { v.Pending = what + " " + want }); err != nil {
		return err
	}
	r.emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + name, Message: fmt.Sprintf("upgrading the %s of %s to %s", what, name, want)})
	err := r.conns[name].ApplyConfigNoReboot(ctx, cfg)
	if err == nil {
		err = r.waitUntil(ctx, name+" Ready with its "+what+" at "+want, func(ctx context.Context) (bool, string, error) {
			ready, _, err := r.nodeReady(ctx, name)
			if err != nil || !ready {
				return false, "NotReady", err
			}
			return done(ctx)
		})
	}
	if err != nil {
		return fmt.Errorf("upgrade of the %s of node %s (%s) to %s failed: %w; the upgrade stopped there: fix the node and run apply again to retry it",
			what, name, n.ip, want, err)
	}
	r.emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "node/" + name, Message: what + " at " + want})
	return r.record(name, func(v *nodeVersions) { rec(v); v.Pending = "" })
}
