// Package kubereal runs a real Kubernetes control plane for the sandbox:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler as
// child processes (built by kubebin), configured as Talos configures them
// on a control plane, authenticating clients with the cluster's
// Kubernetes CA from the Talos secrets bundle so the kubeconfig ohmytalos
// writes works against it unchanged.
//
// It is the sandbox's only Kubernetes API server: what runs on the
// machines (kubelets, the cloud controller, the CSI driver, the Traefik
// stand-in) stays simulated, as client-go controllers that talk to this
// API server as clients.
package kubereal
