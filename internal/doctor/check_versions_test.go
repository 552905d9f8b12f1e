package doctor

import (
	"context"
	"testing"
)

func versionCluster(talos string, kubelets ...string) *Env {
	env, ft := healthyCluster()
	env.TalosVersion, env.KubernetesVersion = "v1.13.9", "1.36.3"
	ft.versions = map[string]string{}
	var nodes []KubeNode
	for i, n := range append(append([]NodeRef{}, env.ControlPlanes...), env.Workers...) {
		ft.versions[n.PrivateIP] = talos
		k := "v1.36.3"
		if i < len(kubelets) {
			k = kubelets[i]
		}
		nodes = append(nodes, KubeNode{Name: n.Name, KubeletVersion: k})
	}
	env.Kube = &fakeKube{nodes: nodes}
	return env
}

func TestVersionSkew(t *testing.T) {
	ctx := context.Background()
	if MachineryVersion != "v1.13.9" {
		t.Fatalf("machinery version %q: the cases below assume v1.13.9", MachineryVersion)
	}
	expect(t, checkVersionSkew(ctx, versionCluster("v1.13.9")), StatusPass, "cp-1: Talos v1.13.9", "worker-1: kubelet v1.36.3", "machinery: v1.13.9")

	env := versionCluster("v1.13.9", "v1.36.3", "v1.35.2")
	expect(t, checkVersionSkew(ctx, env), StatusWarn, "cp-2 runs kubelet v1.35.2, the spec says 1.36.3", "run ohmytalos apply")

	env = versionCluster("v1.13.9")
	env.Talos.(*fakeTalos).versions["10.0.2.1"] = "v1.13.8"
	expect(t, checkVersionSkew(ctx, env), StatusWarn, "worker-1 runs Talos v1.13.8, the spec says v1.13.9")

	env = versionCluster("v1.13.9", "v1.30.4")
	expect(t, checkVersionSkew(ctx, env), StatusFail, "cp-1 runs kubelet v1.30.4 on Talos v1.13.9: version of Kubernetes 1.30.4 is too old to be used with Talos 1.13.9")

	env = versionCluster("v1.14.1")
	env.TalosVersion = "v1.14.1"
	expect(t, checkVersionSkew(ctx, env), StatusFail, "cp-1 runs Talos v1.14.1: newer than ohmytalos's Talos machinery v1.13.9 knows",
		"spec talos.version v1.14.1", "machinery v1.14.1 or later")

	env = versionCluster("v1.13.9")
	env.KubernetesVersion = "1.37.0"
	expect(t, checkVersionSkew(ctx, env), StatusFail, "spec: kubernetes.version 1.37.0 on talos.version v1.13.9: version of Kubernetes 1.37.0 is too new", "cp-1 runs kubelet v1.36.3, the spec says 1.37.0")

	expect(t, checkVersionSkew(ctx, &Env{}), StatusSkip, "neither the Talos API nor the Kubernetes API")
}
