// Package kubefake is a sandbox Kubernetes API server that the real
// Kubernetes clients (client-go's typed, dynamic and discovery clients,
// kubectl) use unchanged, with a small simulated control loop.
//
// The API is a generic in-memory store of JSON objects: discovery for the
// built-in groups the product and its add-ons touch (core, apps, rbac,
// storage, apiextensions, policy, batch, scheduling, coordination,
// networking, discovery, admissionregistration) and for every served
// version of a CustomResourceDefinition once it is created; get, list (label
// and field selectors), watch, create, update, delete, the three patch
// types and server-side apply, the status subresource and pods/eviction
// (respecting PodDisruptionBudgets). Errors are metav1.Status objects with
// the reasons and messages of kube-apiserver.
//
// Approximations, documented where they are made:
//   - strategic merge patch merges the lists whose Kubernetes types declare a
//     patch merge key (containers, env, volumes, ports, conditions, ...) by
//     that key and replaces every other list; $patch: delete/replace and null
//     are honoured, $setElementOrder and $retainKeys are ignored.
//   - server-side apply tracks the fields each apply manager set (lists are
//     atomic), removes fields a manager stopped applying when no other manager
//     applied them, and reports conflicts between apply managers unless
//     force=true. Fields written by update or patch are not owned.
//   - the server speaks JSON only. Responses are JSON whatever the Accept
//     header (client-go decodes by the response's Content-Type), so reads
//     work with any client configuration; a protobuf request body is 415
//     UnsupportedMediaType, so typed clientsets that write set
//     rest.Config.ContentType = "application/json" (the eviction
//     subresource, whose body only repeats the URL's name, accepts protobuf).
//   - anonymous requests are authenticated as system:anonymous (the
//     kube-apiserver default, which Talos keeps): /version, /healthz, /livez
//     and /readyz answer them (system:public-info-viewer), everything else,
//     discovery included (system:discovery is bound to system:authenticated
//     only), is 403 Forbidden; a client certificate that does not chain to
//     the cluster CA is 401 Unauthorized.
//
// The control loop (see loop.go) registers nodes the way the kubelet does,
// assigns pod CIDRs, schedules the pods of DaemonSets, Deployments (through
// ReplicaSets) and Jobs, marks a node Ready once a CNI DaemonSet's pod runs
// on it, and plays the Hetzner cloud controller manager when its Deployment
// runs: it looks servers up by name in the Hetzner API with the token from
// the CCM's Secret, initialises nodes, creates pod routes, deletes the
// nodes whose server is gone, and gives LoadBalancer Services a Hetzner load
// balancer (targets following the nodes, deleted with the Service). A
// StorageClass of provisioner csi.hetzner.cloud binds claims once the CSI
// controller (image hetznercloud/hcloud-csi-driver) is available.
package kubefake
