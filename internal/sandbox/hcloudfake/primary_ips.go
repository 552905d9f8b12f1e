package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// assignPrimaryIP assigns an existing primary IP (id != 0) to a new server or
// creates one that is deleted with the server, as Hetzner does for servers
// created without explicit primary IPs; callers hold f.mu.
func (f *Fake) assignPrimaryIP(id int64, typ string, ss *serverState, now time.Time) (*schema.PrimaryIP, error) {
	sid := ss.s.ID
	if id != 0 {
		pip := f.primaryIPs[id]
		if pip.Type != typ {
			return nil, errCode(http.StatusPreconditionFailed, "primary_ip_version_mismatch", fmt.Sprintf("primary ip %d is %s, not %s", id, pip.Type, typ))
		}
		pip.AssigneeID, pip.AssigneeType = &sid, "server"
		return pip, nil
	}
	pip := &schema.PrimaryIP{ID: f.nextID(), Type: typ, Labels: map[string]string{}, AssigneeID: &sid, AssigneeType: "server",
		AutoDelete: true, Created: now, Location: ss.s.Location, DNSPtr: []schema.PrimaryIPDNSPTR{}}
	pip.Name = fmt.Sprintf("primary_ip-%d", pip.ID)
	if typ == "ipv4" {
		ip, err := f.allocateIPv4()
		if err != nil {
			return nil, errCode(http.StatusPreconditionFailed, "resource_unavailable", err.Error())
		}
		pip.IP = ip
		pip.DNSPtr = []schema.PrimaryIPDNSPTR{{IP: ip, DNSPtr: "static." + ip + ".clients.your-server.de"}}
	} else {
		pip.IP = fmt.Sprintf("2001:db8:%x::/64", pip.ID&0xffff)
	}
	f.primaryIPs[pip.ID] = pip
	return pip, nil
}

// releasePrimaryIPs unassigns a server's primary IPs, deleting auto_delete ones.
func (f *Fake) releasePrimaryIPs(ss *serverState) {
	for id, pip := range f.primaryIPs {
		if pip.AssigneeID == nil || *pip.AssigneeID != ss.s.ID {
			continue
		}
		if pip.AutoDelete {
			delete(f.primaryIPs, id)
			continue
		}
		pip.AssigneeID, pip.AssigneeType = nil, "server"
	}
}

func (f *Fake) servePrimaryIPs(rq *request) (int, any, error) {
	switch {
	case len(rq.segs) == 1 && rq.method == http.MethodGet:
		ip := rq.query.Get("ip")
		items := make([]schema.PrimaryIP, 0, len(f.primaryIPs))
		for _, p := range f.primaryIPs {
			if ip == "" || p.IP == ip {
				items = append(items, renderPrimaryIP(p))
			}
		}
		out, err := listResponse(rq.query, "primary_ips", items, accessor[schema.PrimaryIP]{
			id:     func(x schema.PrimaryIP) int64 { return x.ID },
			name:   func(x schema.PrimaryIP) string { return x.Name },
			labels: func(x schema.PrimaryIP) map[string]string { return x.Labels },
		})
		return http.StatusOK, out, err
	case len(rq.segs) != 2:
		return 0, nil, errNoRoute(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	pip, ok := f.primaryIPs[id]
	if !ok {
		return 0, nil, errNotFound("primary ip", id)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{"primary_ip": renderPrimaryIP(pip)}, nil
	case http.MethodPut:
		var req schema.PrimaryIPUpdateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Name != "" {
			pip.Name = req.Name
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
			pip.Labels = maps.Clone(*req.Labels)
		}
		if req.AutoDelete != nil {
			pip.AutoDelete = *req.AutoDelete
		}
		return http.StatusOK, map[string]any{"primary_ip": renderPrimaryIP(pip)}, nil
	case http.MethodDelete:
		// Hetzner unassigns an assigned primary IP, which needs the server off.
		if pip.AssigneeID != nil {
			if ss, ok := f.servers[*pip.AssigneeID]; ok {
				if ss.s.Status != "off" {
					return 0, nil, errCode(http.StatusPreconditionFailed, "server_not_stopped",
						fmt.Sprintf("primary ip %d is assigned to running server %d; power it off first", id, ss.s.ID))
				}
				if pip.Type == "ipv4" {
					ss.s.PublicNet.IPv4 = schema.ServerPublicNetIPv4{}
				} else {
					ss.s.PublicNet.IPv6 = schema.ServerPublicNetIPv6{}
				}
			}
		}
		delete(f.primaryIPs, id)
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, errMethod(rq)
}

func renderPrimaryIP(p *schema.PrimaryIP) schema.PrimaryIP {
	out := *p
	out.Labels = maps.Clone(p.Labels)
	return out
}
