package steps

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// runTraefik applies, as typed objects, what the traefik chart renders
// for the ingress add-on (a Deployment of docker.io/traefik and Service
// traefik/traefik with the annotations of addons.IngressAnnotations),
// until the chart installs through the Helm add-on path; it waits until
// the cloud controller has adopted the ingress load balancer.
func (c *doctorCluster) runTraefik(t *testing.T) *hcloud.LoadBalancer {
	t.Helper()
	ctx := context.Background()
	cs := c.kubeClient(t)
	sp := c.env.Spec
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addons.IngressNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-traefik"}
	replicas := int32(1)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: addons.IngressNamespace},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "traefik", Image: "docker.io/traefik:v3.7.11",
					Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8000}, {Name: "websecure", ContainerPort: 8443}}}}}}}}
	if _, err := cs.AppsV1().Deployments(addons.IngressNamespace).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	policy, families := addons.IngressIPFamilies(false)
	pol := corev1.IPFamilyPolicy(policy)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: addons.IngressService, Namespace: addons.IngressNamespace, Annotations: addons.IngressAnnotations(sp, false)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: labels, IPFamilyPolicy: &pol, Ports: []corev1.ServicePort{
			{Name: "web", Port: 80, TargetPort: intstr.FromString("web"), Protocol: corev1.ProtocolTCP},
			{Name: "websecure", Port: 443, TargetPort: intstr.FromString("websecure"), Protocol: corev1.ProtocolTCP}}}}
	for _, f := range families {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, corev1.IPFamily(f))
	}
	if _, err := cs.CoreV1().Services(addons.IngressNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc := cloud.NewClient(c.sb.Token, cloud.Options{Endpoint: c.sb.HCloudURL, PollInterval: 10 * time.Millisecond})
	var lb *hcloud.LoadBalancer
	waitForWithin(t, 2*time.Minute, "the cloud controller to adopt "+addons.IngressLBName(sp), func() (bool, string) {
		got, _, err := hc.LoadBalancer.GetByName(ctx, addons.IngressLBName(sp))
		if err != nil || got == nil {
			return false, fmt.Sprint(err)
		}
		lb = got
		return len(got.Services) == 2 && len(got.Targets) == 2, fmt.Sprintf("services %v targets %v", got.Services, got.Targets)
	})
	return lb
}

// offsetClock is a clock a test moves forward.
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *offsetClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// TestIngressServesOnTheFirstApplyOnRealKubernetes is issue 20's "done
// when" on the sandbox's real control plane: after apply on the seed spec
// and the ingress Traefik, the simulated cloud controller adopts the load
// balancer for the Service, kubereal's Traefik stand-in answers on the
// workers' node ports, an HTTP request through the sandbox's load
// balancer gets Traefik's 404, lb-targets and lb-owners pass, and a second
// apply changes nothing on the load balancer the cloud controller manages.
func TestIngressServesOnTheFirstApplyOnRealKubernetes(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the real Kubernetes control plane is built from source: no go command on PATH")
	}
	// startDoctorClusterWith moves HOME to the test's folder: keep the
	// binaries' cache where it is, or they are built again from source.
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache)
	clk := &offsetClock{}
	c := startDoctorClusterWith(t, nil, sandbox.Options{HCloudNow: clk.Now})
	if err := c.apply(t, engine.Options{}); err != nil {
		t.Fatalf("apply the seed spec in the sandbox: %v", err)
	}
	before := c.runTraefik(t)
	for _, s := range before.Services {
		if s.DestinationPort < 30000 || s.HealthCheck.Port != s.DestinationPort {
			t.Errorf("service %d -> %d (health %d): want the Service's node port", s.ListenPort, s.DestinationPort, s.HealthCheck.Port)
		}
	}
	clk.Add(16 * time.Second) // past the first health check interval
	addr, err := c.sb.HCloud.ListenAddr(before.Name, 80)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	var status int
	var body string
	waitForWithin(t, 2*time.Minute, "an HTTP answer through "+addr, func() (bool, string) {
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

	rs := c.doctorResults(t)
	for _, id := range []string{"lb-targets", "lb-owners"} {
		if rs[id].Status != doctor.StatusPass {
			t.Errorf("%s = %s, want pass: %s", id, rs[id].Status, describeResult(rs[id]))
		}
	}

	var updates []engine.Event
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.eng.Run(ctx, c.env, engine.Options{Redact: c.deps.Redact}, func(ev engine.Event) {
		if ev.Resource == "load-balancer/"+before.Name && ev.Action != engine.ActionReuse {
			updates = append(updates, ev)
		}
	}); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if len(updates) > 0 {
		t.Errorf("the second apply changed the load balancer: %+v", updates)
	}
	hc := cloud.NewClient(c.sb.Token, cloud.Options{Endpoint: c.sb.HCloudURL, PollInterval: 10 * time.Millisecond})
	after, _, err := hc.LoadBalancer.GetByID(context.Background(), before.ID)
	if err != nil || after == nil {
		t.Fatalf("ingress load balancer after the second apply: %v", err)
	}
	same := func(a, b hcloud.LoadBalancerService) bool { return formatService(a) == formatService(b) }
	if !slices.EqualFunc(before.Services, after.Services, same) || len(after.Targets) != len(before.Targets) {
		t.Errorf("services or targets changed: %v %v -> %v %v", before.Services, before.Targets, after.Services, after.Targets)
	}
}
