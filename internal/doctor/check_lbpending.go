package doctor

import (
	"context"
	"fmt"
	"strings"
)

// The hcloud cloud controller's Service annotations and environment that
// decide whether it can create a Service's load balancer
// (hetznercloud/hcloud-cloud-controller-manager internal/annotation/load_balancer.go,
// internal/config/load_balancer_envs.go, internal/config/config.go).
const (
	AnnLBLocation     = "load-balancer.hetzner.cloud/location"
	AnnLBNetworkZone  = "load-balancer.hetzner.cloud/network-zone"
	AnnLBUsePrivateIP = "load-balancer.hetzner.cloud/use-private-ip"
	EnvLBLocation     = "HCLOUD_LOAD_BALANCERS_LOCATION"
	EnvLBNetworkZone  = "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE"
	EnvLBUsePrivateIP = "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP"
	EnvNetwork        = "HCLOUD_NETWORK"
)

// LBService is a Service of type LoadBalancer as the doctor reads it.
type LBService struct {
	// Namespace and Name locate it.
	Namespace, Name string
	// Annotations are the Service's annotations.
	Annotations map[string]string
	// Ingress lists the addresses in status.loadBalancer.ingress.
	Ingress []string
	// Events are the messages of the Service's Warning events, oldest first.
	Events []string
}

// ServiceSource reads LoadBalancer Services and the cloud controller's
// configuration; a KubeSource that implements it enables lb-pending.
type ServiceSource interface {
	// LoadBalancerServices lists the Services of type LoadBalancer with
	// their Warning events.
	LoadBalancerServices(ctx context.Context) ([]LBService, error)
	// CloudControllerEnv returns the environment of the hcloud cloud
	// controller's container (a value set through valueFrom reads "(from valueFrom)");
	// nil, nil when the controller is not deployed.
	CloudControllerEnv(ctx context.Context) (map[string]string, error)
}

// checkLBPending finds LoadBalancer Services that have no address and
// names the annotation or controller flag that keeps the hcloud cloud
// controller from creating their load balancer (hcloud-ccm #1070, #224).
func checkLBPending(ctx context.Context, env *Env) Result {
	if env.Kube == nil {
		return skip(noKube)
	}
	src, ok := env.Kube.(ServiceSource)
	if !ok {
		return skip("this Kubernetes source cannot list Services")
	}
	svcs, err := src.LoadBalancerServices(ctx)
	if err != nil {
		return sourceError("the Services of type LoadBalancer", err)
	}
	if len(svcs) == 0 {
		return pass("no Service of type LoadBalancer")
	}
	ccm, err := src.CloudControllerEnv(ctx)
	if err != nil {
		return sourceError("the hcloud cloud controller's Deployment", err)
	}
	var evidence, problems, fixes []string
	for _, s := range svcs {
		ref := s.Namespace + "/" + s.Name
		if len(s.Ingress) > 0 {
			evidence = append(evidence, fmt.Sprintf("%s: address %s", ref, strings.Join(s.Ingress, ", ")))
			continue
		}
		why, fix := lbPendingCause(s, ccm)
		problems = append(problems, fmt.Sprintf("%s has no address (<pending>): %s", ref, why))
		if n := len(s.Events); n > 0 {
			evidence = append(evidence, fmt.Sprintf("%s: last warning event: %s", ref, s.Events[n-1]))
		}
		fixes = append(fixes, fix)
	}
	if len(problems) == 0 {
		return pass(evidence...)
	}
	return failed(problems, evidence,
		"the hcloud cloud controller creates a Service's load balancer only when it knows where (a location or a network zone) and, with private IPs, in which network; until then the Service stays <pending> and only its events say why",
		strings.Join(uniq(fixes), "; "))
}

// lbPendingCause mirrors the controller's checks in the order it makes
// them: LoadBalancerOps.Create refuses without a location or network zone,
// ReconcileHCLBTargets refuses use-private-ip without a network
// (internal/hcops/load_balancer.go).
func lbPendingCause(s LBService, ccm map[string]string) (why, fix string) {
	ref := s.Namespace + "/" + s.Name
	if ccm == nil {
		return "no hcloud cloud controller is deployed", "install the hcloud cloud controller (the ccm add-on) in kube-system"
	}
	loc, hasLoc := s.Annotations[AnnLBLocation]
	if !hasLoc {
		loc = ccm[EnvLBLocation]
	}
	zone, hasZone := s.Annotations[AnnLBNetworkZone]
	if !hasZone {
		zone = ccm[EnvLBNetworkZone]
	}
	if loc == "" && zone == "" {
		return fmt.Sprintf("neither the annotation %s nor %s is set, and the controller has neither %s nor %s", AnnLBLocation, AnnLBNetworkZone, EnvLBLocation, EnvLBNetworkZone),
			fmt.Sprintf("annotate %s with %s=<location, e.g. nbg1> (or %s=eu-central), or set %s on the cloud controller", ref, AnnLBLocation, AnnLBNetworkZone, EnvLBLocation)
	}
	private, set := s.Annotations[AnnLBUsePrivateIP]
	if !set {
		private = ccm[EnvLBUsePrivateIP]
	}
	if private == "true" && ccm[EnvNetwork] == "" {
		return fmt.Sprintf("it uses private IPs (%s or %s) but the controller has no %s", AnnLBUsePrivateIP, EnvLBUsePrivateIP, EnvNetwork),
			fmt.Sprintf("set %s (the cluster network's name or ID) on the cloud controller, or annotate %s with %s=\"false\"", EnvNetwork, ref, AnnLBUsePrivateIP)
	}
	if n := len(s.Events); n > 0 {
		return "the controller reports: " + s.Events[n-1], "act on the controller's event (kubectl describe service -n " + s.Namespace + " " + s.Name + ")"
	}
	return "the controller has reported nothing yet", "wait a minute, then read the controller's logs (kubectl -n kube-system logs deploy/hcloud-cloud-controller-manager)"
}
