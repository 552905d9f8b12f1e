package addons

import "github.com/ohmytalos/ohmytalos/internal/spec"

const metricsNS = "kube-system"

// metricsServer renders metrics-server (facts: kubernetes-sigs/metrics-server
// manifests/base). Talos' kubelets serve self-signed certificates unless
// serving-certificate rotation and an approver are set up, so it runs with
// --kubelet-insecure-tls, as Talos' own metrics-server guide does.
func metricsServer(sp *spec.Spec) Addon {
	v := sp.Addons.MetricsServer.Version
	sel := labelMap("k8s-app", "metrics-server")
	svc := newObject("v1", "Service", metricsNS, "metrics-server").with("spec", m{
		"selector": sel,
		"ports":    l{m{"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}},
	})
	c := m{
		"name": "metrics-server", "image": image("registry.k8s.io/metrics-server/metrics-server", v),
		"args": strs("--cert-dir=/tmp", "--secure-port=10250", "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
			"--kubelet-use-node-status-port", "--metric-resolution=15s", "--kubelet-insecure-tls"),
		"ports":          l{m{"name": "https", "containerPort": 10250, "protocol": "TCP"}},
		"readinessProbe": m{"httpGet": m{"path": "/readyz", "port": "https", "scheme": "HTTPS"}, "periodSeconds": 10, "failureThreshold": 3, "initialDelaySeconds": 20},
		"livenessProbe":  m{"httpGet": m{"path": "/livez", "port": "https", "scheme": "HTTPS"}, "periodSeconds": 10, "failureThreshold": 3},
		"resources":      m{"requests": m{"cpu": "100m", "memory": "200Mi"}},
		"securityContext": m{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true, "runAsUser": 1000,
			"capabilities": m{"drop": strs("ALL")}, "seccompProfile": m{"type": "RuntimeDefault"}},
		"volumeMounts": l{mount("tmp-dir", "/tmp")},
	}
	dep := workload("Deployment", metricsNS, "metrics-server", sel, m{
		"replicas": 1,
		"strategy": m{"rollingUpdate": m{"maxUnavailable": 0}},
	}, m{
		"serviceAccountName": "metrics-server",
		"priorityClassName":  "system-cluster-critical",
		"nodeSelector":       labelMap("kubernetes.io/os", "linux"),
		"containers":         l{c},
		"volumes":            l{m{"name": "tmp-dir", "emptyDir": m{}}},
	})
	reader := clusterRole("system:aggregated-metrics-reader", rule([]string{"metrics.k8s.io"}, []string{"pods", "nodes"}, read))
	reader.setLabels(map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true",
		"rbac.authorization.k8s.io/aggregate-to-edit": "true", "rbac.authorization.k8s.io/aggregate-to-view": "true"})
	authReader := newObject("rbac.authorization.k8s.io/v1", "RoleBinding", metricsNS, "metrics-server-auth-reader").
		with("roleRef", m{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "extension-apiserver-authentication-reader"}).
		with("subjects", l{m{"kind": "ServiceAccount", "name": "metrics-server", "namespace": metricsNS}})
	api := newObject("apiregistration.k8s.io/v1", "APIService", "", "v1beta1.metrics.k8s.io").with("spec", m{
		"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
		"insecureSkipTLSVerify": true, "service": m{"name": "metrics-server", "namespace": metricsNS},
	})
	objs := []Object{
		serviceAccount(metricsNS, "metrics-server"),
		reader,
		clusterRole("system:metrics-server",
			rule([]string{""}, []string{"nodes/metrics"}, []string{"get"}),
			rule([]string{""}, []string{"pods", "nodes"}, read)),
		authReader,
		clusterRoleBinding("metrics-server:system:auth-delegator", "system:auth-delegator", metricsNS, "metrics-server"),
		clusterRoleBinding("system:metrics-server", "system:metrics-server", metricsNS, "metrics-server"),
		svc,
		dep,
		api,
	}
	return Addon{Name: MetricsServer, Version: v, Objects: objs, Workloads: []Workload{{"Deployment", metricsNS, "metrics-server"}}}
}
