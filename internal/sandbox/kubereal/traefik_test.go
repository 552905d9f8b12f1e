//go:build unix

package kubereal_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

// randomLoopback is a 127.x.y.z address away from the fakes' defaults,
// so parallel test processes do not share node ports.
func randomLoopback() string {
	return fmt.Sprintf("127.%d.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250), 1+rand.IntN(250))
}

// traefikObjects are the traefik chart's Deployment and a NodePort
// Service in their shape: web 80 -> 8000, websecure 443 -> 8443
// (traefik/traefik-helm-chart traefik/values.yaml, ports).
func traefikObjects() (*appsv1.Deployment, *corev1.Service) {
	labels := map[string]string{"app.kubernetes.io/name": "traefik"}
	d := deployment("default", "traefik", 1, labels, corev1.PodSpec{
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{Name: "traefik", Image: "docker.io/traefik:v3.5.3",
			Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8000}, {Name: "websecure", ContainerPort: 8443}}}},
	})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "default"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Selector: labels,
		Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromString("web")},
			{Name: "websecure", Port: 443, TargetPort: intstr.FromString("websecure")}}}}

	return d, svc
}

// get is an HTTP GET of http://addr/: its status and body.
func get(addr string) (int, string, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()

	body, err := io.ReadAll(resp.Body)

	return resp.StatusCode, string(body), err
}

// TestTraefikStandInOnNodePorts: a Deployment of the traefik image behind
// a NodePort Service answers on the node's InternalIP and ExternalIP at
// the Service's node ports with Traefik's default 404, websecure over TLS
// with the TRAEFIK DEFAULT CERT, and stops answering once the Deployment
// is deleted.
func TestTraefikStandInOnNodePorts(t *testing.T) {
	t.Parallel()
	ctx, cp, admin := startAdmin(t)

	// A node without a private network: its InternalIP is its loopback
	// public IPv4, as talosfake registers it; ExternalIP another one.
	internal, external := randomLoopback(), randomLoopback()

	startKubelet(t, ctx, cp, kubereal.KubeletConfig{Name: "w-1", Version: "v1.36.3", InternalIP: internal, ExternalIP: external})

	// No CCM pod runs, so the Hetzner endpoint is never called.
	sims, err := cp.StartSimulators(ctx, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(sims.Stop)

	if _, err := admin.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitServiceAccount(t, ctx, admin, "default")

	// Another NodePort Service, of a Ready pod that is not Traefik: nothing
	// answers on its node port.
	other, otherSvc := traefikObjects()
	other.Name, otherSvc.Name = "nginx", "nginx"
	other.Spec.Selector.MatchLabels = map[string]string{"app": "nginx"}
	other.Spec.Template.Labels, otherSvc.Spec.Selector = other.Spec.Selector.MatchLabels, other.Spec.Selector.MatchLabels
	other.Spec.Template.Spec.Containers[0].Image = "docker.io/library/nginx:1.29"

	if _, err := admin.CoreV1().Services("default").Create(ctx, otherSvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := admin.AppsV1().Deployments("default").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Minute, "the nginx pod is Ready", func() (bool, error) {
		pods, err := admin.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil || len(pods.Items) != 1 {
			return false, err
		}

		for _, c := range pods.Items[0].Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}

		return false, nil
	})

	d, svc := traefikObjects()

	svc, err = admin.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	web, secure := strconv.Itoa(int(svc.Spec.Ports[0].NodePort)), strconv.Itoa(int(svc.Spec.Ports[1].NodePort))

	if _, err := admin.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, ip := range []string{internal, external} {
		addr := net.JoinHostPort(ip, web)
		waitFor(t, 2*time.Minute, "Traefik's 404 on "+addr, func() (bool, error) {
			code, body, err := get(addr)
			if err != nil {
				return false, nil //nolint:nilerr // not listening yet
			}

			if code != http.StatusNotFound || body != "404 page not found\n" {
				return false, fmt.Errorf("GET http://%s/: %d %q, want 404 \"404 page not found\\n\"", addr, code, body)
			}

			return true, nil
		})
	}

	// Only the traefik Service's two node ports, on both addresses.
	if got := sims.IngressAddrs(); len(got) != 4 {
		t.Errorf("the stand-in serves %v, want web and websecure on %s and %s only", got, internal, external)
	}

	conn, err := tls.Dial("tcp", net.JoinHostPort(internal, secure), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // Traefik's default cert is self-signed
	if err != nil {
		t.Fatalf("websecure node port: %v (stand-in serves %v)", err, sims.IngressAddrs())
	}

	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "TRAEFIK DEFAULT CERT" {
		t.Errorf("websecure certificate %q, want TRAEFIK DEFAULT CERT", cn)
	}

	_ = conn.Close()

	if err := admin.AppsV1().Deployments("default").Delete(ctx, "traefik", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, addr := range []string{net.JoinHostPort(internal, web), net.JoinHostPort(external, web), net.JoinHostPort(internal, secure)} {
		waitFor(t, 2*time.Minute, addr+" closes once the Traefik pod is gone", func() (bool, error) {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = c.Close()
			}

			return err != nil, nil
		})
	}
}
