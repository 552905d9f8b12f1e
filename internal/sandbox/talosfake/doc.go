// Package talosfake runs fake Talos nodes for the sandbox: one per fake Hetzner
// server, each speaking the real Talos gRPC API (machinery's MachineService and
// the COSI state service) over real mutual TLS, with certificates issued from
// the OS CA of the machine config the node was given.
//
// The real machinery client connects to a fake node unchanged
// (client.New with the talosconfig generated from the same secrets bundle).
// Behaviour follows the machine config and the disk: the machine type
// decides which calls are allowed; a node reports the Talos version and
// Image Factory schematic (as the "schematic" extension) of the image it
// booted; a node without a config is in maintenance mode, served over a
// self-signed certificate (a client expecting the cluster CA sees a trust
// error); Bootstrap answers FailedPrecondition "bootstrap is not available
// yet" until the node's services are up, and the etcd member list blocks
// until the caller's deadline before bootstrap, as machined does. etcd starts
// after exactly one Bootstrap per cluster; members leave, are removed (never
// below quorum) and are recovered from a snapshot (EtcdRecover + Bootstrap
// with recover_etcd). Upgrades follow both the legacy MachineService.Upgrade
// and Talos 1.13's ImageService.Pull -> LifecycleService.Upgrade path: the
// node reboots into the installer's version and schematic (FailUpgrade makes
// one node's upgrade fail).
//
// The VIP is claimed by one control plane only when the link it names exists
// on the node (Talos' hcloud platform boots with net.ifnames=0: eth0 is the
// public NIC, eth1 the private one, and eth0 stays public on an IPv6-only
// server) and only through the Hetzner API (change_alias_ips with the
// token from the machine config): with a wrong token nobody holds it.
// Connections the server's Hetzner firewalls would drop (ClusterOptions.Admit)
// are closed at once, on 50000 and 6443.
//
// Once etcd is bootstrapped, every control plane with a public IP serves the
// cluster's one real Kubernetes control plane (internal/sandbox/kubereal,
// ClusterOptions.RealKubernetes; without it no Kubernetes API is served)
// on PublicIP:6443, forwarded TLS and all, with the API server
// certificate SANs Talos gives it; the
// kubeconfig Talos hands out names the machine config's cluster endpoint
// (by default the private VIP), not the address the client dialled. A config
// applied through the API persists across StopNode/StartNode of the same
// server, as Talos' STATE partition does; ForgetServer drops it with the disk.
//
// Error codes and messages mirror Talos' machined
// (internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go):
//   - a second Bootstrap: AlreadyExists "etcd data directory is not empty";
//   - Bootstrap on a worker: FailedPrecondition "bootstrap can only be
//     performed on a control plane node";
//   - control-plane-only calls on a worker: Unimplemented
//     "<api> is only available on control plane nodes".
package talosfake
