package kubereal

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ports are the loopback ports of one control plane.
type ports struct {
	etcdClient, etcdPeer, apiServer, controllerManager, scheduler int
}

// etcdArgs run a single-member etcd on loopback over plain HTTP: the
// sandbox's etcd is private to its kube-apiserver (Talos runs it with the
// etcd CA's mTLS on the node's addresses; nothing else here dials it).
// Writes skip fsync: the sandbox's data is disposable.
func etcdArgs(dir string, p ports) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", p.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPeer)

	return []string{
		"--name=sandbox",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=sandbox=" + peer,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

// apiServerArgs are Talos' kube-apiserver flags (siderolabs/talos
// internal/app/machined/pkg/controllers/k8s/control_plane_static_pod.go,
// manageAPIServer) with the sandbox's paths and ports. Left out: the audit
// log (disk churn), the kubelet client certificate (no kubelet serves
// logs or exec here) and etcd's mTLS (see etcdArgs). Talos passes the Node
// and RBAC authorizers through --authorization-config
// (machinery v1alpha1 APIServerDefaultAuthorizationConfigAuthorizers);
// --authorization-mode=Node,RBAC is the same chain.
func (c *Config) apiServerArgs(pki map[string]string, admission, encryption string, p ports) []string {
	args := []string{
		"--admission-control-config-file=" + admission,
		"--allow-privileged=true",
		"--anonymous-auth=false",
		"--api-audiences=" + c.Endpoint,
		"--authorization-mode=Node,RBAC",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.apiServer),
		"--advertise-address=" + c.advertise(),
		"--client-ca-file=" + pki["ca.crt"],
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--tls-min-version=VersionTLS12",
		"--profiling=false",
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", p.etcdClient),
		"--service-account-issuer=" + c.Endpoint,
		"--service-account-key-file=" + pki["service-account.key"],
		"--service-account-signing-key-file=" + pki["service-account.key"],
		"--service-cluster-ip-range=" + strings.Join(c.ServiceCIDRs, ","),
		"--tls-cert-file=" + pki["apiserver.crt"],
		"--tls-private-key-file=" + pki["apiserver.key"],
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
	}

	if encryption != "" {
		args = append(args, "--encryption-provider-config="+encryption)
	}

	if ca := pki["aggregator-ca.crt"]; ca != "" {
		args = append(args,
			"--requestheader-client-ca-file="+ca,
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-username-headers=X-Remote-User",
			"--proxy-client-cert-file="+pki["front-proxy-client.crt"],
			"--proxy-client-key-file="+pki["front-proxy-client.key"],
		)
	}

	return args
}

func (c *Config) advertise() string {
	if c.AdvertiseAddress != "" {
		return c.AdvertiseAddress
	}

	return "127.0.0.1"
}

// controllerManagerArgs are Talos' kube-controller-manager flags (same
// file, manageControllerManager) on a loopback port of their own.
func (c *Config) controllerManagerArgs(pki map[string]string, p ports) []string {
	kc := filepath.Join(c.Dir, "pki", "controller-manager.kubeconfig")
	args := []string{
		"--use-service-account-credentials",
		"--allocate-node-cidrs=" + fmt.Sprint(len(c.PodCIDRs) > 0),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.controllerManager),
		"--service-cluster-ip-range=" + strings.Join(c.ServiceCIDRs, ","),
		"--cluster-signing-cert-file=" + pki["ca.crt"],
		"--cluster-signing-key-file=" + pki["ca.key"],
		"--controllers=*,tokencleaner",
		"--configure-cloud-routes=false",
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--leader-elect=true",
		"--root-ca-file=" + pki["ca.crt"],
		"--service-account-private-key-file=" + pki["service-account.key"],
		"--profiling=false",
		"--tls-min-version=VersionTLS13",
		// Not Talos': kube-controller-manager's client defaults to 20
		// requests a second, 30 at once (k8s.io/kubernetes v1.36.3
		// pkg/controller/apis/config/v1alpha1/defaults.go), and its start
		// sends about 130 (a ServiceAccount and a token for each
		// controller, with --use-service-account-credentials): ~5 s in
		// which no controller runs, on every sandbox cluster. A client's
		// pace changes nothing the API server accepts or refuses.
		"--kube-api-qps=200", "--kube-api-burst=300",
	}

	if len(c.PodCIDRs) > 0 {
		args = append(args, "--cluster-cidr="+strings.Join(c.PodCIDRs, ","))
	}

	return args
}

// schedulerArgs are Talos' kube-scheduler flags (same file,
// manageScheduler); Talos passes the kubeconfig through its
// KubeSchedulerConfiguration, --kubeconfig says the same.
func (c *Config) schedulerArgs(p ports) []string {
	kc := filepath.Join(c.Dir, "pki", "scheduler.kubeconfig")

	return []string{
		"--kubeconfig=" + kc,
		"--authentication-tolerate-lookup-failure=false",
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.scheduler),
		"--leader-elect=true",
		"--profiling=false",
		"--tls-min-version=VersionTLS13",
	}
}
