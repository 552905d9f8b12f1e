package hcloudsource

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

var _ doctor.BudgetSource = (*Source)(nil)

// APIBudget reads the project's rate limit from the RateLimit-Limit,
// RateLimit-Remaining and RateLimit-Reset headers (Hetzner API docs, "Rate
// Limiting") and the last hour's server and load balancer actions (GET
// /servers/actions and /load_balancers/actions, newest first, 50 each):
// four requests. The API lists no reads and names no client, so this is
// all it tells about who spends the budget.
func (s *Source) APIBudget(ctx context.Context) (*doctor.APIBudget, error) {
	servers, err := s.servers(ctx)
	if err != nil {
		return nil, err
	}
	ours := map[int64]bool{}
	for _, sv := range servers {
		ours[sv.ID] = true
	}
	lbs, err := s.c.LoadBalancer.AllWithOpts(ctx, hcloud.LoadBalancerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: s.selector()}})
	if err != nil {
		return nil, fmt.Errorf("list the load balancers of cluster %s from the Hetzner API: %w", s.cluster, err)
	}
	oursLB := map[int64]bool{}
	for _, lb := range lbs {
		oursLB[lb.ID] = true
	}
	opts := hcloud.ActionListOpts{ListOpts: hcloud.ListOpts{PerPage: 50}, Sort: []string{"started:desc"}}
	b := &doctor.APIBudget{}
	srvActions, _, err := s.c.Server.Action.List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list the project's recent server actions: %w", err)
	}
	lbActions, resp, err := s.c.LoadBalancer.Action.List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list the project's recent load balancer actions: %w", err)
	}
	if err := readRateHeaders(resp, b); err != nil {
		return nil, err
	}
	since := time.Now().Add(-time.Hour)
	add := func(kind string, as []*hcloud.Action, mine map[int64]bool, typ hcloud.ActionResourceType) {
		for _, a := range as {
			if a.Started.Before(since) {
				continue
			}
			own := false
			for _, r := range a.Resources {
				if r.Type == typ && mine[r.ID] {
					own = true
				}
			}
			b.Actions = append(b.Actions, doctor.APIAction{Kind: kind, Command: a.Command, Ours: own, Started: a.Started})
		}
	}
	add("server", srvActions, ours, hcloud.ActionResourceTypeServer)
	add("load balancer", lbActions, oursLB, hcloud.ActionResourceTypeLoadBalancer)
	return b, nil
}

func readRateHeaders(resp *hcloud.Response, b *doctor.APIBudget) error {
	if resp == nil || resp.Response == nil {
		return fmt.Errorf("the Hetzner API answered without a response to read the rate limit from")
	}
	h := resp.Header
	var err1, err2 error
	b.Limit, err1 = strconv.Atoi(h.Get("RateLimit-Limit"))
	b.Remaining, err2 = strconv.Atoi(h.Get("RateLimit-Remaining"))
	if err1 != nil || err2 != nil {
		b.Limit = 0 // the check skips: no header to judge by
		return nil
	}
	if r, err := strconv.ParseInt(h.Get("RateLimit-Reset"), 10, 64); err == nil {
		b.Reset = time.Unix(r, 0)
	}
	return nil
}
