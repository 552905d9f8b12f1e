// Package talosfake runs fake Talos nodes for the sandbox: one per fake Hetzner
// server, each speaking the real Talos gRPC API (machinery's MachineService and
// the COSI state service) over real mutual TLS, with certificates issued from
// the OS CA of the machine config the node was given.
//
// The real machinery client connects to a fake node unchanged
// (client.New with the talosconfig generated from the same secrets bundle).
// Behaviour follows the machine config: the machine type decides which calls
// are allowed, etcd starts only after exactly one Bootstrap per cluster, and a
// VIP is claimed by one control plane only when the link it names exists on
// the node (Talos' hcloud platform boots with net.ifnames=0, so links are
// eth0/eth1, never enp1s0/enp7s0).
//
// Once etcd is bootstrapped, every control plane with a public IP also serves
// a tiny Kubernetes API on PublicIP:6443 (TLS from cluster.ca): /version,
// /api/v1/nodes and the kube-system ConfigMaps, so the admin kubeconfig the
// node hands out works. A config applied through the API persists across
// StopNode/StartNode of the same server, as Talos' STATE partition does.
//
// Error codes and messages mirror Talos' machined
// (internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go):
//   - a second Bootstrap: AlreadyExists "etcd data directory is not empty";
//   - Bootstrap on a worker: FailedPrecondition "bootstrap can only be
//     performed on a control plane node";
//   - control-plane-only calls on a worker: Unimplemented
//     "<api> is only available on control plane nodes".
package talosfake
