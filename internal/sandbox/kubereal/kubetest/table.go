package kubetest

import (
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeTable is the server-side table of the nodes, what kubectl get
// nodes -o wide prints.
func NodeTable(t testing.TB, ctx context.Context, cs kubernetes.Interface) metav1.Table {
	t.Helper()

	raw, err := cs.CoreV1().RESTClient().Get().Resource("nodes").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}

	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}

	return table
}
