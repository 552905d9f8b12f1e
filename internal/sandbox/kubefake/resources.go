package kubefake

import (
	"slices"
	"strings"
)

// resource is one REST resource the server serves.
type resource struct {
	group, version, name, kind string
	singular                   string
	namespaced                 bool
	shortNames                 []string
	// subresources served besides the object itself ("status", "eviction", "scale").
	subresources []string
	// crd is true for resources defined by a CustomResourceDefinition.
	crd bool
}

// groupResource is "deployments.apps", or "pods" for the core group, as
// kube-apiserver names resources in its error messages.
func (r resource) groupResource() string {
	if r.group == "" {
		return r.name
	}

	return r.name + "." + r.group
}

// groupKind is "Deployment.apps" (or "Pod"), as in Invalid errors.
func (r resource) groupKind() string {
	if r.group == "" {
		return r.kind
	}

	return r.kind + "." + r.group
}

func (r resource) apiVersion() string {
	if r.group == "" {
		return r.version
	}

	return r.group + "/" + r.version
}

// key identifies the resource's storage, the same across versions.
func (r resource) key() string { return r.group + "/" + r.name }

func (r resource) hasSub(s string) bool { return slices.Contains(r.subresources, s) }

func (r resource) hasStatus() bool { return r.hasSub("status") }

func res(group, version, name, kind string, namespaced bool, short string, subs ...string) resource {
	var sn []string
	if short != "" {
		sn = strings.Split(short, ",")
	}

	return resource{
		group: group, version: version, name: name, kind: kind,
		singular: strings.ToLower(kind), namespaced: namespaced, shortNames: sn, subresources: subs,
	}
}

// builtinResources lists the built-in resources, with the names, kinds,
// scopes and short names of `kubectl api-resources` on Kubernetes 1.35.
func builtinResources() []resource {
	const ns, cluster = true, false

	return []resource{
		res("", "v1", "configmaps", "ConfigMap", ns, "cm"),
		res("", "v1", "endpoints", "Endpoints", ns, "ep"),
		res("", "v1", "events", "Event", ns, "ev"),
		res("", "v1", "limitranges", "LimitRange", ns, "limits"),
		res("", "v1", "namespaces", "Namespace", cluster, "ns", "status"),
		res("", "v1", "nodes", "Node", cluster, "no", "status"),
		res("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", ns, "pvc", "status"),
		res("", "v1", "persistentvolumes", "PersistentVolume", cluster, "pv", "status"),
		res("", "v1", "pods", "Pod", ns, "po", "status", "eviction"),
		res("", "v1", "podtemplates", "PodTemplate", ns, ""),
		res("", "v1", "replicationcontrollers", "ReplicationController", ns, "rc", "status", "scale"),
		res("", "v1", "resourcequotas", "ResourceQuota", ns, "quota", "status"),
		res("", "v1", "secrets", "Secret", ns, ""),
		res("", "v1", "serviceaccounts", "ServiceAccount", ns, "sa"),
		res("", "v1", "services", "Service", ns, "svc", "status"),
		res("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", cluster, ""),
		res("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", cluster, ""),
		res("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", cluster, "crd,crds", "status"),
		res("apiregistration.k8s.io", "v1", "apiservices", "APIService", cluster, "", "status"),
		res("apps", "v1", "controllerrevisions", "ControllerRevision", ns, ""),
		res("apps", "v1", "daemonsets", "DaemonSet", ns, "ds", "status"),
		res("apps", "v1", "deployments", "Deployment", ns, "deploy", "status", "scale"),
		res("apps", "v1", "replicasets", "ReplicaSet", ns, "rs", "status", "scale"),
		res("apps", "v1", "statefulsets", "StatefulSet", ns, "sts", "status", "scale"),
		res("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", ns, "hpa", "status"),
		res("batch", "v1", "cronjobs", "CronJob", ns, "cj", "status"),
		res("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", cluster, "csr", "status"),
		res("batch", "v1", "jobs", "Job", ns, "", "status"),
		res("coordination.k8s.io", "v1", "leases", "Lease", ns, ""),
		res("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", ns, ""),
		res("networking.k8s.io", "v1", "ingressclasses", "IngressClass", cluster, ""),
		res("networking.k8s.io", "v1", "ingresses", "Ingress", ns, "ing", "status"),
		res("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", ns, "netpol"),
		res("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", cluster, ""),
		res("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", ns, "pdb", "status"),
		res("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", cluster, ""),
		res("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", cluster, ""),
		res("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", ns, ""),
		res("rbac.authorization.k8s.io", "v1", "roles", "Role", ns, ""),
		res("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", cluster, "pc"),
		res("storage.k8s.io", "v1", "csidrivers", "CSIDriver", cluster, ""),
		res("storage.k8s.io", "v1", "csinodes", "CSINode", cluster, ""),
		res("storage.k8s.io", "v1", "storageclasses", "StorageClass", cluster, "sc"),
		res("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", cluster, "", "status"),
	}
}

// verbsFor lists the verbs discovery reports for a resource or subresource.
func verbsFor(r resource, sub string) []string {
	switch sub {
	case "":
	case "eviction":
		return []string{"create"}
	default:
		return []string{"get", "patch", "update"}
	}

	switch r.name {
	case "namespaces":
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}

	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// preferredVersion of a built-in group is its only version here.
func groupVersions(rs []resource) map[string][]string {
	out := map[string][]string{}

	for _, r := range rs {
		if !slices.Contains(out[r.group], r.version) {
			out[r.group] = append(out[r.group], r.version)
		}
	}

	return out
}
