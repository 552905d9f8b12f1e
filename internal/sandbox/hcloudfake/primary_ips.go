package hcloudfake

import (
	"fmt"
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

// primaryIPKind is the collection behind /primary_ips, filtered by ?ip=.
// Primary IPs are created with their servers, never through POST.
func (f *Fake) primaryIPKind() *collection[*schema.PrimaryIP, schema.PrimaryIP] {
	return &collection[*schema.PrimaryIP, schema.PrimaryIP]{plural: "primary_ips", single: "primary_ip", noun: "primary ip",
		items: f.primaryIPs, render: withOwnLabels(primaryIPFields),
		fields: primaryIPFields,
		keep:   equalTo("ip", func(p *schema.PrimaryIP) string { return p.IP }),
		update: f.updatePrimaryIP,
		remove: f.unassignPrimaryIP,
	}
}

// updatePrimaryIP applies PUT /primary_ips/{id}; names need not be unique.
func (f *Fake) updatePrimaryIP(rq *request, pip *schema.PrimaryIP) error {
	var req schema.PrimaryIPUpdateRequest
	if err := rq.decode(&req); err != nil {
		return err
	}
	if req.Name != "" {
		pip.Name = req.Name
	}
	if err := f.primaryIPKind().patch(pip, nil, req.Labels); err != nil {
		return err
	}
	if req.AutoDelete != nil {
		pip.AutoDelete = *req.AutoDelete
	}
	return nil
}

// unassignPrimaryIP runs before DELETE /primary_ips/{id}: Hetzner unassigns
// an assigned primary IP, which needs the server off.
func (f *Fake) unassignPrimaryIP(_ *request, id int64, pip *schema.PrimaryIP) (*action, error) {
	if pip.AssigneeID == nil {
		return nil, nil
	}
	ss, ok := f.servers[*pip.AssigneeID]
	if !ok {
		return nil, nil
	}
	if ss.s.Status != "off" {
		return nil, errCode(http.StatusUnprocessableEntity, "server_not_stopped",
			fmt.Sprintf("primary ip %d is assigned to running server %d; power it off first", id, ss.s.ID))
	}
	if pip.Type == "ipv4" {
		ss.s.PublicNet.IPv4 = schema.ServerPublicNetIPv4{}
	} else {
		ss.s.PublicNet.IPv6 = schema.ServerPublicNetIPv6{}
	}
	return nil, nil
}

// primaryIPFields returns the ID, name and labels of a primary IP for its collection.
func primaryIPFields(x *schema.PrimaryIP) (int64, *string, *map[string]string) {
	return x.ID, &x.Name, &x.Labels
}
