package doctor

import (
	"github.com/ohmytalos/ohmytalos/internal/cloud"

	"context"
	"fmt"
	"sort"
	"strings"
)

const (
	noCloud = "no Hetzner token: the Hetzner Cloud API is not available to the doctor"
	noKube  = "no kubeconfig: the Kubernetes API is not available to the doctor"

	// LabelExcludeFromLB is the node label that makes the hcloud CCM leave a
	// node out of load balancer targets; Talos >= 1.8 sets it on control planes.
	LabelExcludeFromLB = "node.kubernetes.io/exclude-from-external-load-balancers"
	// LabelCCMServiceUID marks load balancers the hcloud CCM created for a
	// Service of type LoadBalancer.
	LabelCCMServiceUID = "hcloud-ccm/service-uid"
)

// checkLBTargets verifies that every load balancer of the cluster has
// healthy targets: a load balancer without targets answers with an empty
// reply and nothing in the chain says why (field notes, pitfall 3).
func checkLBTargets(ctx context.Context, env *Env) Result {
	lbs, r, ok := fetch(ctx, env.Cloud, noCloud, CloudSource.LoadBalancers, "the Hetzner load balancers")
	if !ok {
		return r
	}
	if len(lbs) == 0 {
		return skip("no load balancer found for this cluster")
	}
	var (
		evidence, problems, causes, fixes []string
		warn                              bool
		servers                           []Server
		serversRead                       bool
	)
	loadServers := func() ([]Server, error) {
		if serversRead {
			return servers, nil
		}
		s, err := env.Cloud.Servers(ctx)
		servers, serversRead = s, err == nil
		return s, err
	}
	for _, lb := range lbs {
		total, unhealthy := 0, 0
		var names []string
		for _, t := range lb.Targets {
			if t.Type == "server" && len(t.Resolved) == 0 && t.ServerName != "" {
				total++
				names = append(names, t.ServerName+" (health unknown)")
			}
			for _, r := range t.Resolved {
				total++
				names = append(names, r.ServerName+" ("+orUnknown(r.Health)+")")
				if r.Health == "unhealthy" {
					unhealthy++
				}
			}
		}
		evidence = append(evidence, fmt.Sprintf("%s: %d configured target(s), %d resolved server(s): %s", lb.Name, len(lb.Targets), total, orNone(names)))
		switch {
		case total == 0:
			problems = append(problems, fmt.Sprintf("%s has no targets", lb.Name))
			c, f, err := diagnoseNoTargets(ctx, env, lb, loadServers)
			if err != nil {
				return sourceError("the cluster's servers or nodes", err)
			}
			causes = append(causes, c...)
			fixes = append(fixes, f...)
		case unhealthy == total:
			problems = append(problems, fmt.Sprintf("%s: all %d targets are unhealthy", lb.Name, total))
			causes = append(causes, "Every target fails the load balancer's health check: the ingress (e.g. Traefik) is not listening on the destination port of the targets.")
			fixes = append(fixes, "check the ingress pods and the Service's node ports, and that the load balancer uses the private network (use_private_ip) when the nodes have a firewall")
		case unhealthy > 0:
			warn = true
			evidence = append(evidence, fmt.Sprintf("%s: %d of %d targets unhealthy", lb.Name, unhealthy, total))
		}
	}
	if len(problems) > 0 {
		return failed(problems, evidence,
			"a Hetzner load balancer without healthy targets accepts connections and closes them: clients see `curl: (52) Empty reply from server` while every component reports green. "+
				strings.Join(uniq(causes), " "),
			strings.Join(uniq(fixes), "; "))
	}
	if warn {
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: "some load balancer targets fail their health check; traffic only reaches the healthy ones",
			Fix:         "look at the unhealthy nodes' ingress pods (kubectl get pods -o wide) and their node ports"}
	}
	return pass(evidence...)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// diagnoseNoTargets explains why lb has no target.
func diagnoseNoTargets(ctx context.Context, env *Env, lb LoadBalancer, loadServers func() ([]Server, error)) (causes, fixes []string, err error) {
	for _, t := range lb.Targets {
		if t.Type != "label_selector" {
			continue
		}
		servers, err := loadServers()
		if err != nil {
			return nil, nil, err
		}
		reqs, perr := cloud.ParseSelector(t.Selector)
		if perr != nil {
			causes = append(causes, fmt.Sprintf("The target selector of %s cannot be parsed: %v.", lb.Name, perr))
			fixes = append(fixes, "fix the label selector of "+lb.Name)
			continue
		}
		var matching []string
		for _, s := range servers {
			if reqs.Matches(s.Labels) {
				matching = append(matching, s.Name)
			}
		}
		sort.Strings(matching)
		if len(matching) == 0 {
			causes = append(causes, fmt.Sprintf("The target selector %q of %s matches none of the cluster's %d servers.", t.Selector, lb.Name, len(servers)))
			fixes = append(fixes, fmt.Sprintf("label the worker pool's servers so that %q matches them, or correct the selector", t.Selector))
		} else {
			causes = append(causes, fmt.Sprintf("The selector %q matches %s, yet Hetzner resolved no target: with use_private_ip the servers must be in the load balancer's network.", t.Selector, strings.Join(matching, ", ")))
			fixes = append(fixes, fmt.Sprintf("attach %s to the cluster network", lb.Name))
		}
	}
	if env.Kube == nil {
		if len(causes) == 0 {
			causes = append(causes, "No target is configured.")
			fixes = append(fixes, "add the worker pool as target (label selector), or let the hcloud CCM manage the load balancer through a Service of type LoadBalancer")
		}
		return causes, fixes, nil
	}
	nodes, err := env.Kube.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	var eligible, excluded []string
	for _, n := range nodes {
		if _, ok := n.Labels[LabelExcludeFromLB]; ok {
			excluded = append(excluded, n.Name)
		} else {
			eligible = append(eligible, n.Name)
		}
	}
	if len(eligible) == 0 {
		causes = append(causes, fmt.Sprintf("Every Kubernetes node (%s) carries %s: Talos labels control planes so, the hcloud CCM honours it, and no worker has joined yet.",
			orNone(excluded), LabelExcludeFromLB))
		fixes = append(fixes, "add or repair a worker pool (its nodes must join and be Ready); do not remove the label from control planes")
	} else if _, ccm := lb.Labels[LabelCCMServiceUID]; ccm && len(causes) == 0 {
		causes = append(causes, fmt.Sprintf("The hcloud CCM created %s but added none of the eligible nodes (%s).", lb.Name, strings.Join(eligible, ", ")))
		fixes = append(fixes, "check the hcloud-cloud-controller-manager logs and that every node's providerID is hcloud:// (provider-id check)")
	}
	if len(causes) == 0 {
		causes = append(causes, "No target is configured.")
		fixes = append(fixes, "add the worker pool as target (label selector), or let the hcloud CCM manage the load balancer")
	}
	return causes, fixes, nil
}
