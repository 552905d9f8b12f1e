package kubefake_test

import (
	"fmt"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

func TestLoadBalancerServices(t *testing.T) {
	ctx := testCtx(t)
	endpoint, servers := hetzner(t, ctx, "w-1")
	e := newEnv(t, kubefake.Options{HCloudEndpoint: endpoint})

	if err := e.srv.RegisterNode(kubefake.NodeRegistration{Name: "w-1", KubeletVersion: "v1.35.0", ExternalCloudProvider: true}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hcloud"}, StringData: map[string]string{"token": "good", "network": "k8s"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ccm := ccmDeployment()
	ccm.Spec.Template.Spec.Containers[0].Env = append(ccm.Spec.Template.Spec.Containers[0].Env,
		corev1.EnvVar{Name: "HCLOUD_LOAD_BALANCERS_LOCATION", Value: "fsn1"},
		corev1.EnvVar{Name: "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", Value: "true"})

	if _, err := e.cs.AppsV1().DaemonSets("kube-system").Create(ctx, cniDaemonSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.cs.AppsV1().Deployments("kube-system").Create(ctx, ccm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "ingress"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}

	created, err := e.cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil || created.Spec.Ports[0].NodePort < 30000 {
		t.Fatalf("service: %+v %v", created, err)
	}

	eventually(t, ctx, "a load balancer address", func() (bool, string) {
		got, err := e.cs.CoreV1().Services("default").Get(ctx, "ingress", metav1.GetOptions{})

		return err == nil && len(got.Status.LoadBalancer.Ingress) == 1, fmt.Sprint(got.Status, err)
	})

	c := hcloud.NewClient(hcloud.WithEndpoint(endpoint), hcloud.WithToken("good"))

	var lb *hcloud.LoadBalancer

	eventually(t, ctx, "one load balancer targeting the initialised node", func() (bool, string) {
		lbs, err := c.LoadBalancer.All(ctx)
		if err != nil || len(lbs) != 1 {
			return false, fmt.Sprint(lbs, err)
		}

		lb = lbs[0]

		return len(lb.Targets) == 1, fmt.Sprintf("%+v", lb.Targets)
	})

	if len(lb.Targets) != 1 || lb.Targets[0].Server.Server.ID != servers["w-1"].ID || !lb.Targets[0].UsePrivateIP ||
		len(lb.Services) != 1 || lb.Services[0].ListenPort != 80 || lb.Services[0].DestinationPort != int(created.Spec.Ports[0].NodePort) {
		t.Fatalf("load balancer %s: targets %+v services %+v", lb.Name, lb.Targets, lb.Services)
	}

	if err := e.cs.CoreV1().Services("default").Delete(ctx, "ingress", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "the load balancer deleted with its Service", func() (bool, string) {
		_, err := e.cs.CoreV1().Services("default").Get(ctx, "ingress", metav1.GetOptions{})
		lbs, lerr := c.LoadBalancer.All(ctx)

		return apierrors.IsNotFound(err) && lerr == nil && len(lbs) == 0, fmt.Sprint(err, lbs, lerr)
	})
}
