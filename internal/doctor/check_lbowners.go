package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
)

// AnnLBName is the Service annotation by which the hcloud cloud
// controller adopts an existing load balancer: EnsureLoadBalancer looks
// it up by the hcloud-ccm/service-uid label, then by this name
// (hetznercloud/hcloud-cloud-controller-manager internal/annotation/load_balancer.go,
// hcloud/load_balancers.go), and from then on reconciles its services and
// server targets to the Service (internal/hcops/load_balancer.go,
// ReconcileHCLBServices, ReconcileHCLBTargets).
const AnnLBName = "load-balancer.hetzner.cloud/name"

// DefaultOwnerReadGap is how long lb-owners waits between its two reads:
// ohmytalos's drift reconcile and the cloud controller's service sync
// each undo the other's change within a few seconds, so a fight shows as
// services or targets that differ between the reads.
const DefaultOwnerReadGap = 10 * time.Second

// lbClaim is a load balancer claimed by ohmytalos and by a Service.
type lbClaim struct {
	lb      LoadBalancer
	service string // NAMESPACE/NAME
}

// checkLBOwners fails when two owners change the same load balancer: it
// carries ohmytalos's labels and a Service names it, and its services or
// targets change between two reads (two reconcilers undoing each other,
// as two external-dns instances do in the field notes, pitfall 6). A load
// balancer claimed by both whose services ohmytalos did not hand over
// (Env.HandedOver) but that is stable warns: the next change starts the
// fight.
func checkLBOwners(ctx context.Context, env *Env) Result {
	if env.Cloud == nil {
		return skip(noCloud)
	}
	if env.Kube == nil {
		return skip(noKube)
	}
	src, ok := env.Kube.(ServiceSource)
	if !ok {
		return skip("this Kubernetes source cannot list Services")
	}
	first, err := env.Cloud.LoadBalancers(ctx)
	if err != nil {
		return sourceError("the Hetzner load balancers", err)
	}
	svcs, err := src.LoadBalancerServices(ctx)
	if err != nil {
		return sourceError("the Services of type LoadBalancer", err)
	}
	claims := doubleClaims(first, svcs)
	if len(claims) == 0 {
		return pass(fmt.Sprintf("no load balancer is claimed by both ohmytalos and a Service (%d load balancer(s), %d LoadBalancer Service(s))", len(first), len(svcs)))
	}
	gap := env.OwnerReadGap
	if gap <= 0 {
		gap = DefaultOwnerReadGap
	}
	select {
	case <-ctx.Done():
		return sourceError("the second read of the load balancers", ctx.Err())
	case <-time.After(gap):
	}
	second, err := env.Cloud.LoadBalancers(ctx)
	if err != nil {
		return sourceError("the Hetzner load balancers", err)
	}
	return judgeClaims(env, claims, second, gap)
}

// doubleClaims lists the load balancers ohmytalos labels that a Service
// names in its load-balancer.hetzner.cloud/name annotation.
func doubleClaims(lbs []LoadBalancer, svcs []LBService) []lbClaim {
	var out []lbClaim
	for _, lb := range lbs {
		if lb.Labels[cloud.LabelManagedBy] != cloud.ManagedBy {
			continue
		}
		for _, s := range svcs {
			if s.Annotations[AnnLBName] == lb.Name {
				out = append(out, lbClaim{lb: lb, service: s.Namespace + "/" + s.Name})
			}
		}
	}
	return out
}

func judgeClaims(env *Env, claims []lbClaim, second []LoadBalancer, gap time.Duration) Result {
	var evidence, fights, unsafe []string
	for _, c := range claims {
		who := fmt.Sprintf("%s: claimed by ohmytalos (label %s=%s) and by Service %s (annotation %s)", c.lb.Name, cloud.LabelManagedBy, cloud.ManagedBy, c.service, AnnLBName)
		evidence = append(evidence, who)
		i := slices.IndexFunc(second, func(l LoadBalancer) bool { return l.Name == c.lb.Name })
		if i < 0 {
			evidence = append(evidence, c.lb.Name+": gone at the second read")
			continue
		}
		now := second[i]
		if a, b := formatListeners(c.lb.Services), formatListeners(now.Services); a != b {
			fights = append(fights, fmt.Sprintf("%s: services changed within %s: %s -> %s", c.lb.Name, gap, a, b))
		}
		if a, b := formatLBTargets(c.lb.Targets), formatLBTargets(now.Targets); a != b {
			fights = append(fights, fmt.Sprintf("%s: targets changed within %s: %s -> %s", c.lb.Name, gap, a, b))
		}
		if env.HandedOver[c.lb.Name] != c.service {
			unsafe = append(unsafe, fmt.Sprintf("%s: ohmytalos reconciles its services and targets, and Service %s's cloud controller does too", c.lb.Name, c.service))
		} else {
			evidence = append(evidence, fmt.Sprintf("%s: ohmytalos handed its services and targets to %s", c.lb.Name, c.service))
		}
	}
	switch {
	case len(fights) > 0:
		return Result{Status: StatusFail, Evidence: append(append(fights, unsafe...), evidence...),
			Explanation: "two owners change the same load balancer: ohmytalos's drift reconcile and the hcloud cloud controller each set its services and targets to their own view and undo the other's change, so its listeners and health checks flap and connections fail in between",
			Fix: "give the services and targets one owner: keep addons.ingress on so that ohmytalos hands them to the cloud controller for its ingress Service (and apply), or remove the " + AnnLBName +
				" annotation from the Service so that the controller creates a load balancer of its own"}
	case len(unsafe) > 0:
		return Result{Status: StatusWarn, Evidence: append(unsafe, evidence...),
			Explanation: "two owners claim the same load balancer's services and targets; nothing changed between the two reads, but the next node or port change starts a fight",
			Fix:         "switch addons.ingress on for this load balancer (ohmytalos then leaves services and targets to the cloud controller), or point the Service at a load balancer of its own"}
	}
	return pass(append(evidence, fmt.Sprintf("services and targets unchanged over %s", gap))...)
}

func formatListeners(ls []LBListener) string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s %d->%d health %d proxyprotocol=%t", l.Protocol, l.ListenPort, l.DestinationPort, l.HealthPort, l.Proxyprotocol))
	}
	slices.Sort(out)
	return "[" + strings.Join(out, ", ") + "]"
}

func formatLBTargets(ts []LBTarget) string {
	var out []string
	for _, t := range ts {
		switch t.Type {
		case "label_selector":
			out = append(out, "label selector "+t.Selector)
		case "server":
			out = append(out, "server "+t.ServerName)
		default:
			var rs []string
			for _, r := range t.Resolved {
				rs = append(rs, r.ServerName)
			}
			out = append(out, t.Type+" "+strings.Join(rs, " "))
		}
	}
	slices.Sort(out)
	return "[" + strings.Join(out, ", ") + "]"
}
