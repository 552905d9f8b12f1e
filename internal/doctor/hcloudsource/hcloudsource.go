// Package hcloudsource implements doctor.CloudSource over the Hetzner Cloud
// API with hcloud-go: the cluster's load balancers (its own and those the
// hcloud cloud controller manager created), servers and snapshots, each read
// with one paginated list call to stay far below the API's rate limit.
package hcloudsource

import (
	"github.com/ohmytalos/ohmytalos/internal/cloud"

	"context"
	"fmt"
	"sort"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// LabelCluster is the label every resource ohmytalos creates carries, with
// the cluster name as value.
const LabelCluster = cloud.LabelCluster

// Source reads a cluster's Hetzner resources.
type Source struct {
	c       *hcloud.Client
	cluster string
}

// New returns a doctor.CloudSource for the cluster named cluster.
func New(c *hcloud.Client, cluster string) doctor.CloudSource {
	return &Source{c: c, cluster: cluster}
}

func (s *Source) selector() string { return LabelCluster + "=" + s.cluster }

// Servers lists the servers labelled with the cluster's name.
func (s *Source) Servers(ctx context.Context) ([]doctor.Server, error) {
	servers, err := s.servers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]doctor.Server, 0, len(servers))
	for _, sv := range servers {
		out = append(out, doctor.Server{Name: sv.Name, Labels: sv.Labels})
	}
	return out, nil
}

func (s *Source) servers(ctx context.Context) ([]*hcloud.Server, error) {
	servers, err := s.c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: s.selector()}})
	if err != nil {
		return nil, fmt.Errorf("list the servers of cluster %s (label %s) from the Hetzner API: %w", s.cluster, s.selector(), err)
	}
	return servers, nil
}

// LoadBalancers lists the load balancers labelled with the cluster's name
// and those the hcloud CCM created (label hcloud-ccm/service-uid, set by
// hcloud-cloud-controller-manager for each Service of type LoadBalancer).
// CCM load balancers carry no cluster label, so one is kept when it has no
// target yet or targets at least one of the cluster's servers: a project
// holding two clusters does not mix their load balancers up.
func (s *Source) LoadBalancers(ctx context.Context) ([]doctor.LoadBalancer, error) {
	own, err := s.c.LoadBalancer.AllWithOpts(ctx, hcloud.LoadBalancerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: s.selector()}})
	if err != nil {
		return nil, fmt.Errorf("list the load balancers of cluster %s from the Hetzner API: %w", s.cluster, err)
	}
	ccm, err := s.c.LoadBalancer.AllWithOpts(ctx, hcloud.LoadBalancerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: doctor.LabelCCMServiceUID}})
	if err != nil {
		return nil, fmt.Errorf("list the load balancers created by the hcloud CCM from the Hetzner API: %w", err)
	}
	servers, err := s.servers(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(servers))
	for _, sv := range servers {
		names[sv.ID] = sv.Name
	}
	seen := map[int64]bool{}
	var out []doctor.LoadBalancer
	for _, lb := range own {
		seen[lb.ID] = true
		out = append(out, convertLB(lb, names))
	}
	for _, lb := range ccm {
		if seen[lb.ID] || !ccmBelongs(lb, names) {
			continue
		}
		seen[lb.ID] = true
		out = append(out, convertLB(lb, names))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func ccmBelongs(lb *hcloud.LoadBalancer, names map[int64]string) bool {
	ids := targetServerIDs(lb.Targets)
	if len(ids) == 0 {
		return true
	}
	for _, id := range ids {
		if _, ok := names[id]; ok {
			return true
		}
	}
	return false
}

func targetServerIDs(ts []hcloud.LoadBalancerTarget) []int64 {
	var ids []int64
	for _, t := range ts {
		if t.Server != nil && t.Server.Server != nil {
			ids = append(ids, t.Server.Server.ID)
		}
		ids = append(ids, targetServerIDs(t.Targets)...)
	}
	return ids
}

func convertLB(lb *hcloud.LoadBalancer, names map[int64]string) doctor.LoadBalancer {
	out := doctor.LoadBalancer{Name: lb.Name, Labels: lb.Labels}
	for _, sv := range lb.Services {
		out.Services = append(out.Services, doctor.LBListener{Protocol: string(sv.Protocol), ListenPort: sv.ListenPort,
			DestinationPort: sv.DestinationPort, HealthPort: sv.HealthCheck.Port, Proxyprotocol: sv.Proxyprotocol})
	}
	for _, t := range lb.Targets {
		dt := doctor.LBTarget{Type: string(t.Type)}
		switch t.Type {
		case hcloud.LoadBalancerTargetTypeServer:
			if t.Server != nil && t.Server.Server != nil {
				dt.ServerName = serverName(t.Server.Server, names)
				dt.Resolved = append(dt.Resolved, doctor.LBResolved{ServerName: dt.ServerName, Health: worstHealth(t.HealthStatus)})
			}
		case hcloud.LoadBalancerTargetTypeLabelSelector:
			if t.LabelSelector != nil {
				dt.Selector = t.LabelSelector.Selector
			}
			for _, r := range t.Targets {
				if r.Server == nil || r.Server.Server == nil {
					continue
				}
				dt.Resolved = append(dt.Resolved, doctor.LBResolved{ServerName: serverName(r.Server.Server, names), Health: worstHealth(r.HealthStatus)})
			}
		case hcloud.LoadBalancerTargetTypeIP:
			if t.IP != nil {
				dt.Resolved = append(dt.Resolved, doctor.LBResolved{ServerName: "ip " + t.IP.IP, Health: worstHealth(t.HealthStatus)})
			}
		}
		out.Targets = append(out.Targets, dt)
	}
	return out
}

func serverName(sv *hcloud.Server, names map[int64]string) string {
	if n, ok := names[sv.ID]; ok {
		return n
	}
	if sv.Name != "" {
		return sv.Name
	}
	return fmt.Sprintf("server %d", sv.ID)
}

// worstHealth folds the per-service health statuses of one target into the
// worst: unhealthy, then unknown, then healthy.
func worstHealth(hs []hcloud.LoadBalancerTargetHealthStatus) string {
	if len(hs) == 0 {
		return string(hcloud.LoadBalancerTargetHealthStatusStatusUnknown)
	}
	rank := map[hcloud.LoadBalancerTargetHealthStatusStatus]int{
		hcloud.LoadBalancerTargetHealthStatusStatusHealthy:   0,
		hcloud.LoadBalancerTargetHealthStatusStatusUnknown:   1,
		hcloud.LoadBalancerTargetHealthStatusStatusUnhealthy: 2,
	}
	worst := hcloud.LoadBalancerTargetHealthStatusStatusHealthy
	for _, h := range hs {
		r, ok := rank[h.Status]
		if !ok {
			r = 1
		}
		if r > rank[worst] {
			worst = h.Status
		}
	}
	return string(worst)
}

// Snapshots lists the project's snapshot images; Talos snapshots are shared
// between clusters, so they are not filtered by the cluster label.
func (s *Source) Snapshots(ctx context.Context) ([]doctor.Snapshot, error) {
	imgs, err := s.c.Image.AllWithOpts(ctx, hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSnapshot}})
	if err != nil {
		return nil, fmt.Errorf("list snapshots from the Hetzner API: %w", err)
	}
	out := make([]doctor.Snapshot, 0, len(imgs))
	for _, im := range imgs {
		out = append(out, doctor.Snapshot{ID: im.ID, Description: im.Description, Architecture: string(im.Architecture), Labels: im.Labels})
	}
	return out, nil
}
