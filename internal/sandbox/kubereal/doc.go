// Package kubereal runs a real Kubernetes control plane for the sandbox:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler as
// child processes (built by kubebin), configured as Talos configures them
// on a control plane, authenticating clients with the cluster's
// Kubernetes CA from the Talos secrets bundle so the kubeconfig ohmytalos
// writes works against it unchanged.
//
// It is the opt-in successor of kubefake's API server: what runs on the
// machines (kubelets, the cloud controller, the CSI driver) stays
// simulated and talks to this API server as a client.
package kubereal
