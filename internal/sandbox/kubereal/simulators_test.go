//go:build unix

package kubereal_test

import (
	"context"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

// cloudEnv is a real control plane with a Hetzner project (hcloudfake)
// holding the network "k8s" and one server per node, each node's
// kubelet, the simulated CCM node controller and the simulators.
type cloudEnv struct {
	cp      *kubereal.ControlPlane
	admin   *kubernetes.Clientset
	hc      *hcloud.Client
	url     string
	network *hcloud.Network
	servers map[string]*hcloud.Server
}

var uninitialized = corev1.Taint{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}

// startCloud starts it all with nodes (name -> extra labels).
func startCloud(t *testing.T, ctx context.Context, nodes map[string]map[string]string) *cloudEnv {
	t.Helper()

	e := &cloudEnv{cp: startCluster(t, ctx), servers: map[string]*hcloud.Server{}}
	e.admin, _ = clientFor(t, e.cp, "admin", "system:masters")

	hs := httptest.NewServer(hcloudfake.New(hcloudfake.Options{Token: hcloudToken}))
	t.Cleanup(hs.Close)

	e.url = hs.URL
	e.hc = hcloud.NewClient(hcloud.WithEndpoint(hs.URL), hcloud.WithToken(hcloudToken), hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(10 * time.Millisecond)}))

	_, ipRange, _ := net.ParseCIDR("10.0.0.0/16")
	_, sub, _ := net.ParseCIDR("10.0.1.0/24")

	nw, _, err := e.hc.Network.Create(ctx, hcloud.NetworkCreateOpts{Name: "k8s", IPRange: ipRange,
		Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, NetworkZone: hcloud.NetworkZoneEUCentral, IPRange: sub}}})
	if err != nil {
		t.Fatal(err)
	}

	e.network = nw

	for name, labels := range nodes {
		srv := e.server(t, ctx, name)

		k, err := e.cp.StartKubelet(ctx, kubereal.KubeletConfig{Name: name, Version: "v1.36.3", InternalIP: srv.PrivateNet[0].IP.String(),
			ExternalIP: srv.PublicNet.IPv4.IP.String(), Labels: labels, Taints: []corev1.Taint{uninitialized}})
		if err != nil {
			t.Fatal(err)
		}

		t.Cleanup(k.Stop)
	}

	cc, err := e.cp.StartCloudController(ctx, hs.URL)
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(cc.Stop)

	sims, err := e.cp.StartSimulators(ctx, hs.URL)
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(sims.Stop)

	return e
}

func (e *cloudEnv) server(t *testing.T, ctx context.Context, name string) *hcloud.Server {
	t.Helper()

	res, _, err := e.hc.Server.Create(ctx, hcloud.ServerCreateOpts{Name: name, ServerType: &hcloud.ServerType{Name: "cpx22"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, Networks: []*hcloud.Network{e.network}})
	if err != nil {
		t.Fatal(err)
	}

	if err := e.hc.Action.WaitFor(ctx, append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
		t.Fatal(err)
	}

	srv, _, err := e.hc.Server.GetByID(ctx, res.Server.ID)
	if err != nil || srv == nil || len(srv.PrivateNet) == 0 {
		t.Fatalf("server %s: %+v (%v), want one attached to the network", name, srv, err)
	}

	e.servers[name] = srv

	return srv
}

// deploy runs a one-replica Deployment of image in kube-system on the
// host network, tolerating every taint (as the CCM and CSI charts'
// pods, which run before a CNI), with env and args.
func (e *cloudEnv) deploy(t *testing.T, ctx context.Context, name, image string, env []corev1.EnvVar, args ...string) {
	t.Helper()

	waitServiceAccount(t, ctx, e.admin, "kube-system")

	d := deployment("kube-system", name, 1, map[string]string{"app": name}, corev1.PodSpec{
		HostNetwork: true,
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers:  []corev1.Container{{Name: "main", Image: image, Env: env, Args: args}},
	})

	if _, err := e.admin.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ccm runs the hcloud CCM with its token from the Secret "hcloud" and env.
func (e *cloudEnv) ccm(t *testing.T, ctx context.Context, env map[string]string, args ...string) {
	t.Helper()

	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hcloud", Namespace: "kube-system"}, StringData: map[string]string{"token": hcloudToken}}
	if _, err := e.admin.CoreV1().Secrets("kube-system").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	vars := []corev1.EnvVar{{Name: "HCLOUD_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "hcloud"}, Key: "token"}}}}
	for k, v := range env {
		vars = append(vars, corev1.EnvVar{Name: k, Value: v})
	}

	e.deploy(t, ctx, "hcloud-cloud-controller-manager", "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.26.0", vars, args...)
}

// initialized waits for the CCM to give every node its provider ID.
func (e *cloudEnv) initialized(t *testing.T, ctx context.Context) {
	t.Helper()

	waitFor(t, 2*time.Minute, "the CCM initializes every node", func() (bool, error) {
		nodes, err := e.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}

		for _, n := range nodes.Items {
			if n.Spec.ProviderID == "" {
				return false, nil
			}
		}

		return len(nodes.Items) == len(e.servers), nil
	})
}
