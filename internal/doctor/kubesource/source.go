// Package kubesource implements doctor.KubeSource through the product's
// Kubernetes client (internal/kube, on client-go): it loads a kubeconfig
// with clientcmd (exec and auth-provider plugins, contexts, $KUBECONFIG
// lists) and reads the few API paths the doctor needs.
package kubesource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// Source reads nodes and Cilium's configuration from a Kubernetes API server.
type Source struct {
	c *kube.Client
}

var _ doctor.KubeSource = (*Source)(nil)

// New builds a Source from kubeconfig bytes and a context name (the
// kubeconfig's current context when empty). Relative file references in the
// kubeconfig resolve against the working directory.
func New(kubeconfig []byte, contextName string) (*Source, error) {
	return Open(kube.Kubeconfig{Data: kubeconfig, Context: contextName})
}

// Load reads the kubeconfig at path; relative file references in it resolve
// against its folder, as kubectl does.
func Load(path, contextName string) (*Source, error) {
	return Open(kube.Kubeconfig{Path: path, Context: contextName})
}

// Open builds a Source from any kubeconfig source: bytes, a file, or
// clientcmd's loading rules ($KUBECONFIG, a list, else ~/.kube/config).
func Open(k kube.Kubeconfig) (*Source, error) {
	c, err := kube.Load(k)
	if err != nil {
		return nil, err
	}
	return &Source{c: c}, nil
}

// errNotFound marks a 404 from the API server.
var errNotFound = kube.ErrNotFound

// get fetches an API path into out.
func (s *Source) get(ctx context.Context, path string, out any) error {
	return s.getQuery(ctx, path, nil, out)
}

func (s *Source) getQuery(ctx context.Context, path string, q url.Values, out any) error {
	body, err := s.c.Raw(ctx, path, q)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("kubernetes API GET %s: decode response: %w", path, err)
	}
	return nil
}

type nodeList struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []kube.Object `json:"items"`
}

// Nodes lists the cluster's nodes (GET /api/v1/nodes, paginated), with
// their Ready condition, the reason when not Ready, and their taints.
func (s *Source) Nodes(ctx context.Context) ([]doctor.KubeNode, error) {
	var out []doctor.KubeNode
	cont := ""
	for {
		q := url.Values{"limit": {"500"}}
		if cont != "" {
			q.Set("continue", cont)
		}
		var l nodeList
		if err := s.getQuery(ctx, "/api/v1/nodes", q, &l); err != nil {
			return nil, err
		}
		for _, it := range l.Items {
			n := kube.Node(it)
			md, _ := it["metadata"].(map[string]any)
			labels := map[string]string{}
			if lm, ok := md["labels"].(map[string]any); ok {
				for k, v := range lm {
					labels[k], _ = v.(string)
				}
			}
			kubelet := ""
			if st, ok := it["status"].(map[string]any); ok {
				if ni, ok := st["nodeInfo"].(map[string]any); ok {
					kubelet, _ = ni["kubeletVersion"].(string)
				}
			}
			out = append(out, doctor.KubeNode{Name: n.Name, ProviderID: n.ProviderID, Labels: labels,
				Ready: n.Ready, NotReadyReason: n.Reason, Taints: n.Taints, KubeletVersion: kubelet})
		}
		if l.Metadata.Continue == "" {
			return out, nil
		}
		cont = l.Metadata.Continue
	}
}

// Workload reads a Deployment's or DaemonSet's readiness (apps/v1); nil,
// nil when it does not exist.
func (s *Source) Workload(ctx context.Context, kind, namespace, name string) (*doctor.Workload, error) {
	res := map[string]string{"Deployment": "deployments", "DaemonSet": "daemonsets"}[kind]
	if res == "" {
		return nil, fmt.Errorf("workload kind %q is neither Deployment nor DaemonSet", kind)
	}
	var o kube.Object
	err := s.get(ctx, "/apis/apps/v1/namespaces/"+url.PathEscape(namespace)+"/"+res+"/"+url.PathEscape(name), &o)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o["kind"] = kind
	ready, want := kube.WorkloadReady(o)
	return &doctor.Workload{Kind: kind, Namespace: namespace, Name: name, Ready: ready, Want: want}, nil
}

type container struct {
	Name string `json:"name"`
	Env  []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	SecurityContext *struct {
		Capabilities *struct {
			Add []string `json:"add"`
		} `json:"capabilities"`
	} `json:"securityContext"`
}

func (c container) caps() []string {
	if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
		return nil
	}
	return c.SecurityContext.Capabilities.Add
}

func (c container) env(name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

type daemonSet struct {
	Spec struct {
		Template struct {
			Spec struct {
				Containers     []container `json:"containers"`
				InitContainers []container `json:"initContainers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// Cilium's Helm chart renders k8sServiceHost/Port as the agent's
// KUBERNETES_SERVICE_HOST/PORT environment, the capabilities as the
// securityContext of the cilium-agent container and the clean-cilium-state
// init container, and cgroup.autoMount as a mount-cgroup init container
// (cilium/install/kubernetes/cilium/templates/cilium-agent/daemonset.yaml).
const (
	ciliumNamespace = "kube-system"
	agentContainer  = "cilium-agent"
	cleanContainer  = "clean-cilium-state"
	mountCgroup     = "mount-cgroup"
)

// CiliumConfig reads the kube-system/cilium DaemonSet and the cilium-config
// ConfigMap; it returns nil, nil when the DaemonSet does not exist.
func (s *Source) CiliumConfig(ctx context.Context) (*doctor.CiliumConfig, error) {
	var ds daemonSet
	err := s.get(ctx, "/apis/apps/v1/namespaces/"+ciliumNamespace+"/daemonsets/cilium", &ds)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := s.get(ctx, "/api/v1/namespaces/"+ciliumNamespace+"/configmaps/cilium-config", &cm); err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	cfg := &doctor.CiliumConfig{Source: "cluster (kube-system/cilium)", CgroupHostRoot: cm.Data["cgroup-root"]}
	pod := ds.Spec.Template.Spec
	for _, c := range pod.Containers {
		if c.Name == agentContainer {
			cfg.AgentCaps = c.caps()
			cfg.K8sServiceHost = c.env("KUBERNETES_SERVICE_HOST")
			cfg.K8sServicePort, _ = strconv.Atoi(c.env("KUBERNETES_SERVICE_PORT"))
		}
	}
	for _, c := range pod.InitContainers {
		switch c.Name {
		case cleanContainer:
			cfg.CleanCaps = c.caps()
		case mountCgroup:
			cfg.CgroupAutoMount = true
		}
	}
	if cfg.K8sServiceHost == "" {
		cfg.K8sServiceHost = cm.Data["k8s-service-host"]
	}
	if cfg.K8sServicePort == 0 {
		cfg.K8sServicePort, _ = strconv.Atoi(cm.Data["k8s-service-port"])
	}
	if v := strings.TrimSpace(cm.Data["mtu"]); v != "" {
		cfg.MTU, _ = strconv.Atoi(v)
	}
	// The chart renders policyEnforcementMode as enable-policy and
	// policyAuditMode as policy-audit-mode (templates/cilium-configmap.yaml).
	cfg.PolicyEnforcement = strings.TrimSpace(cm.Data["enable-policy"])
	cfg.PolicyAuditMode, _ = strconv.ParseBool(strings.TrimSpace(cm.Data["policy-audit-mode"]))
	return cfg, nil
}
