package hcloudfake

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// serverAction serves POST /servers/{id}/actions/{command}. Power changes and
// rescue settings take effect when the action finishes; network changes at once.
func (f *Fake) serverAction(rq *request, ss *serverState, command string) (int, any, error) {
	id := ss.s.ID
	refs := []schema.ActionResourceReference{ref("server", id)}
	later := func(fn func(s *serverState)) *action {
		a := f.newAction(command, rq.now, refs...)
		a.onSuccess = func(time.Time) {
			if s, ok := f.servers[id]; ok {
				fn(s)
			}
		}
		return a
	}
	switch command {
	case "poweron":
		if ss.s.Status == "off" {
			ss.s.Status = "starting"
		}
		a := later(func(s *serverState) {
			if s.s.Status != "running" {
				f.boot(s)
			}
		})
		a.onError = func(time.Time) { f.settle(id) }
		return http.StatusCreated, f.actionBody(a, rq.now), nil
	case "poweroff", "shutdown":
		if ss.s.Status == "running" {
			ss.s.Status = "stopping"
		}
		a := later(f.halt)
		a.onError = func(time.Time) { f.settle(id) }
		return http.StatusCreated, f.actionBody(a, rq.now), nil
	case "reset", "reboot":
		a := later(f.boot)
		return http.StatusCreated, f.actionBody(a, rq.now), nil
	case "enable_rescue":
		var req schema.ServerActionEnableRescueRequest
		if len(rq.body) > 0 {
			if err := rq.decode(&req); err != nil {
				return 0, nil, err
			}
		}
		if req.Type != nil && *req.Type != "linux64" {
			return 0, nil, errInvalid("type", fmt.Sprintf("rescue type %q is not supported; use linux64", *req.Type))
		}
		var keys []string
		for _, k := range req.SSHKeys {
			key, ok := f.sshKeys[k]
			if !ok {
				return 0, nil, errInvalid("ssh_keys", fmt.Sprintf("ssh key %d not found", k))
			}
			keys = append(keys, key.PublicKey)
		}
		a := later(func(s *serverState) {
			s.s.RescueEnabled = true
			s.rescueKeys = keys
		})
		return http.StatusCreated, map[string]any{"action": a.render(rq.now), "root_password": randomPassword()}, nil
	case "disable_rescue":
		a := later(func(s *serverState) {
			s.s.RescueEnabled = false
			s.rescueKeys = nil
		})
		return http.StatusCreated, f.actionBody(a, rq.now), nil
	case "create_image":
		return f.createImage(rq, ss)
	case "attach_to_network":
		var req schema.ServerActionAttachToNetworkRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if _, ok := f.networks[req.Network]; !ok {
			return 0, nil, errInvalid("network", fmt.Sprintf("network %d not found", req.Network))
		}
		if slices.ContainsFunc(ss.s.PrivateNet, func(pn schema.ServerPrivateNet) bool { return pn.Network == req.Network }) {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "server_already_attached", fmt.Sprintf("server %d is already attached to network %d", id, req.Network))
		}
		want := ""
		if req.IP != nil {
			want = *req.IP
		}
		ip, err := f.allocatePrivateIP(req.Network, ss.s.Location.NetworkZone, want)
		if err != nil {
			return 0, nil, err
		}
		pn := schema.ServerPrivateNet{Network: req.Network, IP: ip, AliasIPs: []string{}, MACAddress: macFor(id, req.Network)}
		for _, alias := range req.AliasIPs {
			if alias == nil {
				continue
			}
			if err := f.checkAliasIP(req.Network, *alias, ip); err != nil {
				return 0, nil, err
			}
			pn.AliasIPs = append(pn.AliasIPs, *alias)
		}
		ss.s.PrivateNet = append(ss.s.PrivateNet, pn)
		refs = append(refs, ref("network", req.Network))
		return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
	case "detach_from_network":
		var req schema.ServerActionDetachFromNetworkRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		i, err := privateNetIndex(ss, req.Network)
		if err != nil {
			return 0, nil, err
		}
		ss.s.PrivateNet = slices.Delete(ss.s.PrivateNet, i, i+1)
		refs = append(refs, ref("network", req.Network))
		return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
	case "change_alias_ips":
		var req schema.ServerActionChangeAliasIPsRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		i, err := privateNetIndex(ss, req.Network)
		if err != nil {
			return 0, nil, err
		}
		old := ss.s.PrivateNet[i].AliasIPs
		ss.s.PrivateNet[i].AliasIPs = nil // own aliases may be kept
		for _, alias := range req.AliasIPs {
			if err := f.checkAliasIP(req.Network, alias, ss.s.PrivateNet[i].IP); err != nil {
				ss.s.PrivateNet[i].AliasIPs = old
				return 0, nil, err
			}
		}
		ss.s.PrivateNet[i].AliasIPs = append([]string{}, req.AliasIPs...)
		refs = append(refs, ref("network", req.Network))
		return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
	case "add_to_placement_group":
		var req schema.ServerActionAddToPlacementGroupRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if _, ok := f.pgroups[req.PlacementGroup]; !ok {
			return 0, nil, errInvalid("placement_group", fmt.Sprintf("placement group %d not found", req.PlacementGroup))
		}
		if ss.s.Status != "off" {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "server_not_stopped", "the server must be powered off to change its placement group")
		}
		if ss.pgroup != 0 {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "already_in_placement_group",
				fmt.Sprintf("server %d is already in placement group %d; remove it first", id, ss.pgroup))
		}
		if n := len(f.placementGroupServers(req.PlacementGroup)); n >= maxPlacementGroupServers {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "placement_error", fmt.Sprintf("placement group %d is full (%d servers)", req.PlacementGroup, n))
		}
		ss.pgroup = req.PlacementGroup
		refs = append(refs, ref("placement_group", req.PlacementGroup))
		return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
	case "remove_from_placement_group":
		ss.pgroup = 0
		return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
	}
	return 0, nil, errNoRoute(rq)
}

// settle returns a server stuck in a transitional status to a stable one
// after a failed power action.
func (f *Fake) settle(id int64) {
	s, ok := f.servers[id]
	if !ok {
		return
	}
	switch s.s.Status {
	case "starting":
		s.s.Status = "off"
	case "stopping":
		s.s.Status = "running"
	}
}

// checkAliasIP checks that an alias IP lies in the network's subnets and is
// not used by anybody but the owner of ownIP.
func (f *Fake) checkAliasIP(networkID int64, alias, ownIP string) error {
	ip := net.ParseIP(alias)
	if ip == nil || ip.To4() == nil {
		return errInvalid("alias_ips", fmt.Sprintf("alias ip %q is not an IPv4 address", alias))
	}
	if f.subnetFor(networkID, ip) == nil {
		return errInvalid("alias_ips", fmt.Sprintf("alias ip %s is not in a subnet of network %d", alias, networkID))
	}
	owner := f.usedIPs(networkID)[alias]
	if owner != "" && owner != ownIP {
		return errCode(http.StatusUnprocessableEntity, "ip_not_available", fmt.Sprintf("ip %s is already used in network %d", alias, networkID))
	}
	return nil
}

// createImage serves create_image: the snapshot exists at once with status
// "creating" and becomes "available" when the action finishes.
func (f *Fake) createImage(rq *request, ss *serverState) (int, any, error) {
	var req schema.ServerActionCreateImageRequest
	if len(rq.body) > 0 {
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
	}
	typ := "snapshot"
	if req.Type != nil && *req.Type != "" {
		typ = *req.Type
	}
	if typ != "snapshot" && typ != "backup" {
		return 0, nil, errInvalid("type", fmt.Sprintf("image type %q is invalid; use snapshot", typ))
	}
	if req.Labels != nil {
		if err := checkLabels(*req.Labels); err != nil {
			return 0, nil, err
		}
	}
	desc := ""
	if req.Description != nil {
		desc = *req.Description
	}
	disk, err := f.snapshotDisk(ss.s.ID)
	if err != nil {
		return 0, nil, err
	}
	now := rq.now.UTC().Truncate(time.Second)
	size := float32(0.42) + float32(len(ss.userData))/float32(1<<30)
	img := &schema.Image{ID: f.nextID(), Status: "creating", Type: typ, Description: desc, ImageSize: &size,
		DiskSize: float32(ss.s.ServerType.Disk), Created: &now,
		CreatedFrom: &schema.ImageCreatedFrom{ID: ss.s.ID, Name: ss.s.Name}, OSFlavor: osFlavor(ss.s.Image),
		Architecture: ss.s.ServerType.Architecture, Labels: labelsOrEmpty(req.Labels)}
	f.images[img.ID] = img
	f.imageDisks[img.ID] = disk
	a := f.newAction("create_image", rq.now, ref("server", ss.s.ID), ref("image", img.ID))
	imgID := img.ID
	a.onSuccess = func(time.Time) {
		if im, ok := f.images[imgID]; ok {
			im.Status = "available"
		}
	}
	a.onError = func(time.Time) { delete(f.images, imgID); delete(f.imageDisks, imgID) }
	return http.StatusCreated, map[string]any{"image": renderImage(img), "action": a.render(rq.now)}, nil
}

func osFlavor(img *schema.Image) string {
	if img == nil || img.OSFlavor == "" {
		return "unknown"
	}
	return strings.ToLower(img.OSFlavor)
}

// privateNetIndex finds a server's attachment to a network.
func privateNetIndex(ss *serverState, network int64) (int, error) {
	i := slices.IndexFunc(ss.s.PrivateNet, func(pn schema.ServerPrivateNet) bool { return pn.Network == network })
	if i < 0 {
		return 0, errCode(http.StatusNotFound, "not_found", fmt.Sprintf("server %d is not attached to network %d", ss.s.ID, network))
	}
	return i, nil
}
