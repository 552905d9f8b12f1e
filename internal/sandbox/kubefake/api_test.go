package kubefake_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

func TestCRUDAndErrors(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)
	cms := e.cs.CoreV1().ConfigMaps("default")

	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if cm.UID == "" || cm.ResourceVersion == "" || cm.CreationTimestamp.IsZero() {
		t.Fatalf("server fields not set: %+v", cm.ObjectMeta)
	}

	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}

	stale := cm.DeepCopy()
	cm.Data["k"] = "w"

	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	stale.Data["k"] = "z"
	if _, err := cms.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}

	if _, err := e.cs.CoreV1().ConfigMaps("nope").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("create in a missing namespace: %v, want NotFound", err)
	}

	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app in (x,y)"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list by label: %v %v", list, err)
	}

	if list, _ := cms.List(ctx, metav1.ListOptions{LabelSelector: "app!=x"}); len(list.Items) != 0 {
		t.Fatalf("app!=x matched %d", len(list.Items))
	}

	if _, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=x"}); !apierrors.IsBadRequest(err) {
		t.Fatalf("unsupported field selector: %v, want BadRequest", err)
	}

	// The three patch types.
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"m":"1","k":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := cms.Patch(ctx, "a", types.JSONPatchType, []byte(`[{"op":"add","path":"/data/j","value":"2"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.Data["m"] != "1" || got.Data["j"] != "2" || got.Data["k"] != "" {
		t.Fatalf("after patches: %v %v", got.Data, err)
	}

	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v, want NotFound", err)
	}

	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestStrategicMergeByName(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)
	pods := e.cs.CoreV1().Pods("default")

	_, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Image: "a:1", Env: []corev1.EnvVar{{Name: "X", Value: "1"}, {Name: "Y", Value: "2"}}},
			{Name: "b", Image: "b:1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	patch := `{"spec":{"containers":[{"name":"a","image":"a:2","env":[{"name":"Y","value":"3"},{"name":"X","$patch":"delete"}]}]}}`
	if _, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	p, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if len(p.Spec.Containers) != 2 || p.Spec.Containers[0].Image != "a:2" || p.Spec.Containers[1].Image != "b:1" {
		t.Fatalf("containers not merged by name: %+v", p.Spec.Containers)
	}

	if env := p.Spec.Containers[0].Env; len(env) != 1 || env[0].Name != "Y" || env[0].Value != "3" {
		t.Fatalf("env not merged by name: %+v", env)
	}
}

func TestServerSideApplyConverges(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)
	cms := e.cs.CoreV1().ConfigMaps("kube-system")

	ac := corev1ac.ConfigMap("addon", "kube-system").WithData(map[string]string{"a": "1", "b": "2"})

	first, err := cms.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "ohmytalos"})
	if err != nil {
		t.Fatal(err)
	}

	again, err := cms.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "ohmytalos"})
	if err != nil {
		t.Fatal(err)
	}

	if again.ResourceVersion != first.ResourceVersion {
		t.Fatalf("re-applying the same configuration changed the object: rv %s -> %s", first.ResourceVersion, again.ResourceVersion)
	}

	// A new version of the add-on drops b and changes a: b goes away.
	changed, err := cms.Apply(ctx, corev1ac.ConfigMap("addon", "kube-system").WithData(map[string]string{"a": "9"}), metav1.ApplyOptions{FieldManager: "ohmytalos"})
	if err != nil {
		t.Fatal(err)
	}

	if changed.Data["a"] != "9" || changed.Data["b"] != "" {
		t.Fatalf("apply did not converge: %v", changed.Data)
	}

	if len(changed.ManagedFields) != 1 || changed.ManagedFields[0].Manager != "ohmytalos" || changed.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("managedFields: %+v", changed.ManagedFields)
	}

	// Another manager applying a different value conflicts, unless forced.
	other := corev1ac.ConfigMap("addon", "kube-system").WithData(map[string]string{"a": "0"})
	if _, err := cms.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "someone"}); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "ohmytalos": .data.a`) {
		t.Fatalf("conflicting apply: %v", err)
	}

	if got, err := cms.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "someone", Force: true}); err != nil || got.Data["a"] != "0" {
		t.Fatalf("forced apply: %v %v", got, err)
	}

	// kube-apiserver requires a field manager for apply.
	raw := e.cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("kube-system").Resource("configmaps").Name("x").
		Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)).Do(ctx)
	if err := raw.Error(); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "fieldManager: Required value") {
		t.Fatalf("apply without a field manager: %v", err)
	}
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func TestCRDServedAfterCreation(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)

	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": int64(3)},
	}}

	if _, err := e.dyn.Resource(widgets).Namespace("default").Create(ctx, w, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("custom resource before its CRD: %v, want NotFound", err)
	}

	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": []any{"wd"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				"subresources": map[string]any{"status": map[string]any{}},
			}},
		},
	}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

	bad := crd.DeepCopy()
	bad.SetName("wrong")

	if _, err := e.dyn.Resource(crdGVR).Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("CRD with a wrong name: %v, want Invalid", err)
	}

	if _, err := e.dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	rl, err := e.cs.Discovery().ServerResourcesForGroupVersion("example.com/v1")
	if err != nil || len(rl.APIResources) != 2 || rl.APIResources[0].Kind != "Widget" || !rl.APIResources[0].Namespaced {
		t.Fatalf("discovery of the CRD: %+v %v", rl, err)
	}

	got, err := e.dyn.Resource(widgets).Namespace("default").Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if got.GetGeneration() != 1 || got.GetUID() == "" {
		t.Fatalf("custom resource metadata: %+v", got.Object["metadata"])
	}

	if err := e.dyn.Resource(crdGVR).Delete(ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := e.dyn.Resource(widgets).Namespace("default").Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("custom resource after its CRD is deleted: %v, want NotFound", err)
	}

	if _, err := e.dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if l, err := e.dyn.Resource(widgets).Namespace("default").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("custom resources of a deleted CRD came back: %v %v", l, err)
	}
}

func TestDiscovery(t *testing.T) {
	e := newEnv(t, kubefake.Options{Version: "v1.35.2"})

	v, err := e.cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.35.2" || v.Minor != "35" {
		t.Fatalf("version: %+v %v", v, err)
	}

	groups, resources, err := e.cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}

	names := map[string]bool{}
	for _, g := range groups {
		names[g.Name] = true
	}

	for _, g := range []string{"", "apps", "rbac.authorization.k8s.io", "storage.k8s.io", "apiextensions.k8s.io", "policy", "batch", "coordination.k8s.io", "scheduling.k8s.io"} {
		if !names[g] {
			t.Errorf("group %q not discovered", g)
		}
	}

	found := false

	for _, rl := range resources {
		for _, r := range rl.APIResources {
			if rl.GroupVersion == "v1" && r.Name == "pods/eviction" && r.Group == "policy" && r.Kind == "Eviction" {
				found = true
			}
		}
	}

	if !found {
		t.Error("pods/eviction not discovered as policy/v1 Eviction")
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)

	anon := rest.CopyConfig(e.cfg)
	anon.CertData, anon.KeyData = nil, nil
	cs := kubernetes.NewForConfigOrDie(anon)

	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:anonymous") {
		t.Fatalf("anonymous list: %v, want Forbidden for system:anonymous", err)
	}

	if _, err := cs.Discovery().ServerGroups(); err == nil {
		t.Fatal("anonymous discovery succeeded; system:discovery is for authenticated users only")
	}

	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("anonymous /version (system:public-info-viewer): %v", err)
	}

	foreign := rest.CopyConfig(e.cfg)
	foreign.CertData, foreign.KeyData = e.pki.otherCert, e.pki.other

	if _, err := kubernetes.NewForConfigOrDie(foreign).CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("certificate of another CA: %v, want Unauthorized", err)
	}

	// Plain HTTP clients see the Status body.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the test checks the body only
	defer tr.CloseIdleConnections()

	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(e.url + "/api/v1/secrets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	var st metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Reason != metav1.StatusReasonForbidden || st.Code != http.StatusForbidden {
		t.Fatalf("status body: %+v %v", st, err)
	}
}

func TestWatch(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)
	cms := e.cs.CoreV1().ConfigMaps("default")

	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	wi, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=w"})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := cms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var got []watch.EventType

	for len(got) < 2 {
		select {
		case ev := <-wi.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || cm.Name != "w" {
				t.Fatalf("unexpected event %v %T", ev.Type, ev.Object)
			}

			got = append(got, ev.Type)
		case <-ctx.Done():
			t.Fatalf("events: %v", got)
		}
	}

	if got[0] != watch.Added || got[1] != watch.Deleted {
		t.Fatalf("events %v, want ADDED then DELETED", got)
	}
}

func TestScaleSubresource(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)
	labels := map[string]string{"app": "s"}
	one := int32(1)
	deps := e.cs.AppsV1().Deployments("default")

	if _, err := deps.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	sc, err := deps.GetScale(ctx, "s", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 1 || sc.Status.Selector != "app=s" {
		t.Fatalf("scale: %+v %v", sc, err)
	}

	sc.Spec.Replicas = 3
	if _, err := deps.UpdateScale(ctx, "s", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	d, err := deps.Get(ctx, "s", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 || d.Generation != 2 {
		t.Fatalf("deployment after scaling: %+v %v", d, err)
	}
}

func TestInformer(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)

	f := informers.NewSharedInformerFactory(e.cs, 0)
	lister := f.Core().V1().ConfigMaps().Lister()
	stop := make(chan struct{})
	f.Start(stop)

	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v never synced", typ)
		}
	}

	if _, err := e.cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, ctx, "the informer sees the new ConfigMap", func() (bool, string) {
		_, err := lister.ConfigMaps("default").Get("seen")

		return err == nil, fmt.Sprint(err)
	})

	close(stop)
	f.Shutdown()
}

func TestServiceClusterIPs(t *testing.T) {
	e := newEnv(t, kubefake.Options{ServiceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16")}})
	ctx := testCtx(t)
	svcs := e.cs.CoreV1().Services("default")

	k, err := svcs.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || k.Spec.ClusterIP != "10.43.0.1" {
		t.Fatalf("kubernetes service: %+v %v", k, err)
	}

	ac := corev1ac.Service("web", "default").WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "web"}).
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80)))

	first, err := svcs.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "ohmytalos"})
	if err != nil || first.Spec.ClusterIP == "" || first.Spec.ClusterIP == "10.43.0.1" || first.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Fatalf("applied service: %+v %v", first.Spec, err)
	}

	again, err := svcs.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "ohmytalos"})
	if err != nil || again.ResourceVersion != first.ResourceVersion || again.Spec.ClusterIP != first.Spec.ClusterIP {
		t.Fatalf("re-applied service changed: %+v %v", again.Spec, err)
	}

	taken := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dup"}, Spec: corev1.ServiceSpec{ClusterIP: first.Spec.ClusterIP, Ports: []corev1.ServicePort{{Port: 1}}}}
	if _, err := svcs.Create(ctx, taken, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("a taken cluster IP: %v, want Invalid", err)
	}
}

func TestListPagination(t *testing.T) {
	e := newEnv(t, kubefake.Options{})
	ctx := testCtx(t)

	for i := range 5 {
		if _, err := e.cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var names []string

	opts := metav1.ListOptions{Limit: 2}

	for pages := 0; ; pages++ {
		l, err := e.cs.CoreV1().ConfigMaps("default").List(ctx, opts)
		if err != nil || pages > 5 {
			t.Fatalf("page %d: %v", pages, err)
		}

		for _, cm := range l.Items {
			names = append(names, cm.Name)
		}

		if l.Continue == "" {
			break
		}

		opts.Continue = l.Continue
	}

	if want := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("paged names %v, want %v", names, want)
	}
}
