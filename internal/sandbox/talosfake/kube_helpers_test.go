package talosfake_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeClient builds client-go from the admin kubeconfig, pointed at one
// control plane's API server (the kubeconfig names the cluster endpoint).
func kubeClient(t *testing.T, kubeconfig []byte, endpoint string) (*kubernetes.Clientset, *rest.Config) {
	t.Helper()

	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	cfg.Host = "https://" + endpoint
	cfg.ContentType = "application/json"
	cfg.Timeout = 10 * time.Second

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	return cs, cfg
}

// waitFor polls cond until it holds, failing with what and cond's last
// detail when ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()

	for {
		ok, detail := cond()
		if ok {
			return
		}

		select {
		case <-ctx.Done():
			t.Fatalf("%s: never happened; last: %s", what, detail)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func nodeCondition(n corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}

	return ""
}
