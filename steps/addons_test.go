package steps

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// miniAPI is a small stateful Kubernetes API for the addons step's unit
// tests, which need no real control plane: discovery of the groups
// the add-ons use, server-side apply (refused without the apply content
// type or a field manager), get, list by one label, delete, and a control
// loop: nodes turn Ready once a DaemonSet writes the CNI config (one mounts
// hostPath /etc/cni/net.d), get a provider ID once the cloud controller
// runs, workloads turn ready on Ready nodes, and cilium.io/v2 is served once
// the cilium-operator is ready.
type miniAPI struct {
	mu      sync.Mutex
	objects map[string]map[string]any // REST path -> object
	nodes   int
	noCNI   bool // the CNI never comes up
	applies int
	// stall: discovery answers start and stop half-way until the client
	// gives up, as from an API server too loaded to answer in time.
	stall bool
}

var miniDiscovery = map[string][][3]string{ // apiVersion -> {resource, kind, namespaced}
	"v1": {{"secrets", "Secret", "y"}, {"configmaps", "ConfigMap", "y"}, {"serviceaccounts", "ServiceAccount", "y"},
		{"services", "Service", "y"}, {"namespaces", "Namespace", ""}, {"nodes", "Node", ""}},
	"apps/v1":                      {{"daemonsets", "DaemonSet", "y"}, {"deployments", "Deployment", "y"}},
	"rbac.authorization.k8s.io/v1": {{"clusterroles", "ClusterRole", ""}, {"clusterrolebindings", "ClusterRoleBinding", ""}, {"rolebindings", "RoleBinding", "y"}, {"roles", "Role", "y"}},
	"storage.k8s.io/v1":            {{"storageclasses", "StorageClass", ""}, {"csidrivers", "CSIDriver", ""}},
	"apiextensions.k8s.io/v1":      {{"customresourcedefinitions", "CustomResourceDefinition", ""}},
	"apiregistration.k8s.io/v1":    {{"apiservices", "APIService", ""}},
}

func gvOf(path string) (gv, rest string) {
	if r, ok := strings.CutPrefix(path, "/api/v1"); ok {
		return "v1", r
	}
	p := strings.TrimPrefix(path, "/apis/")
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 2 {
		return "", ""
	}
	gv = parts[0] + "/" + parts[1]
	if len(parts) == 3 {
		rest = "/" + parts[2]
	}
	return gv, rest
}

func (a *miniAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.stall && strings.HasPrefix(r.URL.Path, "/apis/cilium.io") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"APIResourceList",`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reconcile()
	gv, rest := gvOf(r.URL.Path)
	res, ok := miniDiscovery[gv]
	if gv == "cilium.io/v2" && a.ciliumOperatorReady() {
		// Registered by the running operator, as the real one does.
		res, ok = [][3]string{{"ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", ""}}, true
	}
	if !ok {
		miniStatus(w, 404, "NotFound")
		return
	}
	if rest == "" {
		var list []map[string]any
		for _, x := range res {
			list = append(list, map[string]any{"name": x[0], "kind": x[1], "namespaced": x[2] == "y"})
		}
		miniJSON(w, map[string]any{"resources": list})
		return
	}
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	if segs[0] == "namespaces" && len(segs) >= 3 {
		segs = segs[2:]
	}
	switch {
	case r.Method == http.MethodPatch:
		if r.Header.Get("Content-Type") != "application/apply-patch+yaml" || r.URL.Query().Get("fieldManager") == "" {
			miniStatus(w, 422, "apply needs application/apply-patch+yaml and a fieldManager")
			return
		}
		var obj map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &obj); err != nil {
			miniStatus(w, 400, err.Error())
			return
		}
		obj["metadata"].(map[string]any)["generation"] = 1
		a.objects[r.URL.Path] = obj
		a.applies++
		a.reconcile()
		miniJSON(w, obj)
	case r.Method == http.MethodDelete:
		if _, ok := a.objects[r.URL.Path]; !ok {
			miniStatus(w, 404, "NotFound")
			return
		}
		delete(a.objects, r.URL.Path)
		miniJSON(w, map[string]any{"status": "Success"})
	case len(segs) == 1: // a collection
		sel := r.URL.Query().Get("labelSelector")
		k, v, _ := strings.Cut(sel, "=")
		items := []any{}
		for _, p := range slices.Sorted(maps.Keys(a.objects)) {
			if !strings.Contains(p, "/"+segs[0]+"/") || !strings.HasPrefix(p, strings.SplitN(r.URL.Path, "/"+segs[0], 2)[0]) {
				continue
			}
			o := a.objects[p]
			lb, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
			if sel == "" || lb[k] == v {
				items = append(items, o)
			}
		}
		// A list names its kind and apiVersion, as kube-apiserver's does
		// (client-go's dynamic client needs them).
		kind := ""
		for _, x := range res {
			if x[0] == segs[0] {
				kind = x[1] + "List"
			}
		}
		miniJSON(w, map[string]any{"kind": kind, "apiVersion": gv, "items": items, "metadata": map[string]any{}})
	default:
		if o, ok := a.objects[r.URL.Path]; ok {
			miniJSON(w, o)
			return
		}
		miniStatus(w, 404, "NotFound")
	}
}

// ciliumOperatorReady reports whether the cilium-operator Deployment runs:
// then it has registered Cilium's CRDs.
func (a *miniAPI) ciliumOperatorReady() bool {
	o, ok := a.objects["/apis/apps/v1/namespaces/kube-system/deployments/cilium-operator"]
	if !ok {
		return false
	}
	st, _ := o["status"].(map[string]any)
	return st["readyReplicas"] != nil
}

// reconcile is the control loop: node readiness, provider IDs, workload
// status.
func (a *miniAPI) reconcile() {
	cni := false
	for p, o := range a.objects {
		if strings.Contains(p, "/daemonsets/") && strings.Contains(fmt.Sprint(o["spec"]), "/etc/cni/net.d") && !a.noCNI {
			cni = true
		}
	}
	_, ccm := a.objects["/apis/apps/v1/namespaces/kube-system/deployments/hcloud-cloud-controller-manager"]
	for i := 1; i <= a.nodes; i++ {
		name := fmt.Sprintf("demo-node-%d", i)
		status, msg := "False", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized"
		if cni {
			status, msg = "True", "kubelet is posting ready status"
		}
		spec := map[string]any{"taints": []any{map[string]any{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}}}
		if ccm {
			spec = map[string]any{"providerID": fmt.Sprintf("hcloud://%d", 100+i)}
		}
		a.objects["/api/v1/nodes/"+name] = map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name}, "spec": spec,
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status, "message": msg}}}}
	}
	ready := 0
	if cni {
		ready = a.nodes
	}
	for p, o := range a.objects {
		switch {
		case strings.Contains(p, "/daemonsets/"):
			o["status"] = map[string]any{"desiredNumberScheduled": a.nodes, "numberReady": ready, "observedGeneration": 1}
		case strings.Contains(p, "/deployments/"):
			want := o["spec"].(map[string]any)["replicas"]
			hostNet := strings.Contains(fmt.Sprint(o["spec"]), "hostNetwork:true")
			st := map[string]any{"observedGeneration": 1}
			if ready > 0 || hostNet {
				st["readyReplicas"] = want
			}
			o["status"] = st
		}
	}
}

func miniJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func miniStatus(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "code": code, "message": msg})
}

// addonsWorld is a state with a stored kubeconfig for a miniAPI and a
// network ID, as bootstrap and the network step leave them.
func addonsWorld(t *testing.T, api *miniAPI, sp *spec.Spec) (*Deps, *engine.Env) {
	t.Helper()
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	t.Setenv("OHMYTALOS_AGE_KEY_FILE", filepath.Join(t.TempDir(), "age.key"))
	keys, err := state.LoadKeyring(state.KeyFileCandidates(), state.DefaultNewKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(t.TempDir(), sp.Name, keys)
	if err != nil {
		t.Fatal(err)
	}
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	kc := fmt.Sprintf("current-context: a\nclusters: [{name: c, cluster: {server: %q, certificate-authority-data: %s}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n", srv.URL, ca)
	if err := st.PutSecret(secretKubeconfig, []byte(kc)); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResource(keyNetwork, state.Resource{Kind: "network", ID: 4242, Name: sp.Name}); err != nil {
		t.Fatal(err)
	}
	d := &Deps{NodeTimeout: 5 * time.Second, Set: &clients.Set{PollInterval: 5 * time.Millisecond,
		Resolver: secrets.NewResolver(secrets.Options{Env: func(k string) (string, bool) { return "hcloud-token-value", k == "HCLOUD_TOKEN" }})}}
	return d, &engine.Env{Spec: sp, State: st, Log: slog.New(slog.DiscardHandler)}
}

func countEvents(evs []engine.Event, action engine.Action) int {
	n := 0
	for _, e := range evs {
		if e.Kind == engine.KindResource && e.Action == action {
			n++
		}
	}
	return n
}

// TestAddonsTimeoutNamesWhatIsMissing: the readiness wait, on a cluster
// whose CNI never comes up, ends with its bound and names what is missing.
// (Applying the releases is tested against the real control plane in
// addons_helm_test.go: helm needs a real API server.)
func TestAddonsTimeoutNamesWhatIsMissing(t *testing.T) {
	api := &miniAPI{objects: map[string]map[string]any{}, nodes: 5, noCNI: true}
	d, env := addonsWorld(t, api, spec.Default("demo"))
	c, err := d.Kube(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := addons.Render(env.Spec, addons.Inputs{Token: "hcloud-token-value", NetworkID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rendered {
		for _, o := range a.Objects {
			if _, ok := addons.RegisteredByOperator(o); !ok && o.Kind() != "CustomResourceDefinition" {
				if _, err := c.Apply(context.Background(), o); err != nil {
					t.Fatalf("apply %s: %v", o.Ref(), err)
				}
			}
		}
	}
	// 3 s: reads complete; an already spent bound: no read completes
	// within it (CI once hit its deadline during the first read), and
	// the error still names what is missing from one last look.
	for _, bound := range []time.Duration{3 * time.Second, 0} {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		err = (&Addons{d}).wait(ctx, c, env, rendered, func(engine.Event) {})
		cancel()
		if err == nil {
			t.Fatal("the wait succeeded without a CNI")
		}
		for _, want := range []string{"not ready after", "demo-node-1: no CNI", "DaemonSet kube-system/cilium 0/5 ready", "doctor --check nodes-ready,addons"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("bound %s: error lacks %q:\n%v", bound, want, err)
			}
		}
		if strings.Contains(err.Error(), "hcloud-token-value") {
			t.Error("the token leaked into the error")
		}
	}
}

func TestAddonsPlan(t *testing.T) {
	sp := spec.Default("demo")
	_, env := addonsWorld(t, &miniAPI{objects: map[string]map[string]any{}}, sp)
	p, err := (&Addons{}).Plan(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range p.Items {
		got = append(got, string(it.Action)+" "+it.Name)
	}
	want := "create hcloud-secret,create cilium,create hcloud-ccm,create hcloud-csi,create ingress,create ohmytalos-deny-metadata,wait 5 nodes"
	if strings.Join(got, ",") != want {
		t.Errorf("plan = %s", strings.Join(got, ","))
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "metrics-server is switched off") {
		t.Errorf("notes = %v", p.Notes)
	}
}

// TestAddonsWaitForTheOperatorsCRD: the metadata policy's kind comes from
// the cilium-operator at run time; without a running operator the wait
// ends with its own bound and says what to look at.
func TestAddonsWaitForTheOperatorsCRD(t *testing.T) {
	api := &miniAPI{objects: map[string]map[string]any{}, nodes: 1}
	d, env := addonsWorld(t, api, spec.Default("demo"))
	c, err := d.Kube(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := addons.RegisteredByOperator(addons.Object{"apiVersion": addons.CiliumPolicyAPIVersion, "kind": addons.CiliumClusterwidePolicyKind})
	if !ok {
		t.Fatal("the Cilium policy kind is not known as registered by an operator")
	}
	start := time.Now()
	err = awaitKind(context.Background(), c, k, 200*time.Millisecond, 5*time.Millisecond)
	if err == nil {
		t.Fatal("the kind was served without an operator")
	}
	for _, want := range []string{"CiliumClusterwideNetworkPolicy (cilium.io/v2) is still not served after 200ms", "cilium-operator", "kubectl -n kube-system logs deploy/cilium-operator"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the wait took %s, bounded by 200ms", el)
	}
	// A discovery request its bound cuts short ends the wait the same way
	// (it did with "context deadline exceeded" alone, on a loaded machine).
	api.stall = true
	err = awaitKind(context.Background(), c, k, 200*time.Millisecond, 5*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "is still not served after 200ms") {
		t.Errorf("a stalled discovery request: %v, want the wait's own message", err)
	}
	api.stall = false
	// With the operator applied and running, the same wait returns.
	if _, err := c.Apply(context.Background(), addons.Object{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "cilium-operator", "namespace": "kube-system"},
		"spec":     map[string]any{"replicas": 1, "template": map[string]any{"spec": map[string]any{"hostNetwork": true}}}}); err != nil {
		t.Fatal(err)
	}
	if err := awaitKind(context.Background(), c, k, 5*time.Second, 5*time.Millisecond); err != nil {
		t.Fatalf("with the operator running: %v", err)
	}
}
