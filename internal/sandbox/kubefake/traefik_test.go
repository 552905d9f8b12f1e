package kubefake_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

// stepClock is a clock a test moves forward.
type stepClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// randomLoopback hands out 127.x.y.z addresses away from the fakes'
// defaults, so parallel test processes do not share node ports.
func randomLoopback() (string, error) {
	return fmt.Sprintf("127.%d.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250), 1+rand.IntN(250)), nil
}

// TestTraefikBehindTheAdoptedLoadBalancer is issue 20 item 4: a load
// balancer created beforehand (as ohmytalos does: in the network, no
// services, no targets) is adopted by the cloud controller for the
// Traefik Service that names it; the Traefik stand-in answers on the
// nodes' node ports, the health checks pass, and an HTTP request to the
// load balancer's address gets Traefik's 404.
func TestTraefikBehindTheAdoptedLoadBalancer(t *testing.T) {
	ctx := testCtx(t)
	clk := &stepClock{}
	fake := hcloudfake.New(hcloudfake.Options{Token: "good", Now: clk.Now, AllocateIPv4: randomLoopback,
		ForwardLoadBalancers: true, LBListenPort: func(int) int { return 0 }})
	hs := httptest.NewServer(fake)
	t.Cleanup(hs.Close)
	t.Cleanup(fake.Close)
	c := hcloud.NewClient(hcloud.WithEndpoint(hs.URL), hcloud.WithToken("good"), hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(0)}))
	_, ipRange, _ := net.ParseCIDR("10.0.0.0/16")
	_, sub, _ := net.ParseCIDR("10.0.2.0/24")
	nw, _, err := c.Network.Create(ctx, hcloud.NetworkCreateOpts{Name: "k8s", IPRange: ipRange,
		Subnets: []hcloud.NetworkSubnet{{Type: hcloud.NetworkSubnetTypeCloud, NetworkZone: hcloud.NetworkZoneEUCentral, IPRange: sub}}})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{Name: "worker-1", ServerType: &hcloud.ServerType{Name: "cx23"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}, Networks: []*hcloud.Network{nw}})
	if err == nil {
		err = c.Action.WaitFor(ctx, append([]*hcloud.Action{res.Action}, res.NextActions...)...)
	}
	if err != nil {
		t.Fatal(err)
	}
	lbRes, _, err := c.LoadBalancer.Create(ctx, hcloud.LoadBalancerCreateOpts{Name: "demo-ingress", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"},
		Location: &hcloud.Location{Name: "fsn1"}, Network: nw, Labels: map[string]string{"ohmytalos.io/managed-by": "ohmytalos"}})
	if err == nil {
		err = c.Action.WaitFor(ctx, lbRes.Action)
	}
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t, kubefake.Options{HCloudEndpoint: hs.URL})
	if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: "worker-1", KubeletVersion: "v1.35.0", ExternalCloudProvider: true, InternalIP: "10.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hcloud"}, StringData: map[string]string{"token": "good", "network": "k8s"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.AppsV1().Deployments("kube-system").Create(ctx, ccmDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "traefik"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createTraefik(t, ctx, e, "demo-ingress")

	var lb *hcloud.LoadBalancer
	eventually(t, ctx, "the cloud controller adopts the load balancer: services on the node ports, the node as target", func() (bool, string) {
		lb, _, err = c.LoadBalancer.GetByName(ctx, "demo-ingress")
		if err != nil || lb == nil {
			return false, fmt.Sprint(err)
		}
		return len(lb.Services) == 2 && len(lb.Targets) == 1 && lb.Labels["hcloud-ccm/service-uid"] != "", fmt.Sprintf("services %+v targets %+v labels %v", lb.Services, lb.Targets, lb.Labels)
	})
	if all, _ := c.LoadBalancer.All(ctx); len(all) != 1 {
		t.Fatalf("%d load balancers, want the adopted one only", len(all))
	}
	clk.Add(16 * time.Second) // past the first health check interval

	addr, err := fake.ListenAddr("demo-ingress", 80)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	var status int
	var body string
	eventually(t, ctx, "Traefik's 404 through the load balancer", func() (bool, string) {
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		status, body = resp.StatusCode, string(b)
		return true, ""
	})
	if status != http.StatusNotFound || body != "404 page not found\n" {
		t.Fatalf("through the load balancer: %d %q, want Traefik's 404 page not found", status, body)
	}
	tlsAddr, err := fake.ListenAddr("demo-ingress", 443)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", tlsAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // Traefik's default certificate is self-signed
	if err != nil {
		t.Fatalf("websecure through the load balancer: %v", err)
	}
	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "TRAEFIK DEFAULT CERT" {
		t.Errorf("websecure certificate %q, want TRAEFIK DEFAULT CERT", cn)
	}
	_ = conn.Close()

	// Without a Ready Traefik pod nothing answers on the node ports: the
	// health check fails and the load balancer closes connections.
	if err := e.cs.AppsV1().Deployments("traefik").Delete(ctx, "traefik", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the node port closes with the Traefik pods", func() (bool, string) {
		clk.Add(2 * time.Second)
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			return true, ""
		}
		resp.Body.Close()
		return false, resp.Status
	})
}

// createTraefik applies what the traefik chart renders for this test:
// a Deployment of docker.io/traefik and its LoadBalancer Service bound to
// load balancer lbName by the cloud controller's annotations.
func createTraefik(t *testing.T, ctx context.Context, e *env, lbName string) {
	t.Helper()
	labels := map[string]string{"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-traefik"}
	one := int32(1)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "traefik"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "traefik", Image: "docker.io/traefik:v3.7.11",
					Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8000}, {Name: "websecure", ContainerPort: 8443}}}}}}}}
	if _, err := e.cs.AppsV1().Deployments("traefik").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "traefik", Annotations: map[string]string{
		"load-balancer.hetzner.cloud/name": lbName, "load-balancer.hetzner.cloud/location": "fsn1", "load-balancer.hetzner.cloud/use-private-ip": "true"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: labels, Ports: []corev1.ServicePort{
			{Name: "web", Port: 80, TargetPort: intstr.FromString("web")}, {Name: "websecure", Port: 443, TargetPort: intstr.FromString("websecure")}}}}
	if _, err := e.cs.CoreV1().Services("traefik").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
