package hcloudfake

import (
	"crypto/rand"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// maxUserData is Hetzner's user_data limit: 32 KiB.
const maxUserData = 32 * 1024

// maxPlacementGroupServers is the size limit of a spread placement group.
const maxPlacementGroupServers = 10

// serverState is a fake server: its API view plus what only the sandbox sees.
type serverState struct {
	s          schema.Server // firewalls, load balancers, volumes are filled in at render time
	userData   string
	rescueKeys []string // authorized keys of the rescue system, OpenSSH format
	inRescue   bool     // the current boot is into the rescue system
	imageID    int64
	imageType  string
	imageLabel map[string]string // the image's labels when the server was created
	pgroup     int64
}

// info returns the sandbox's view of the server.
func (ss *serverState) info() ServerInfo {
	info := ServerInfo{ID: ss.s.ID, Name: ss.s.Name, PublicIPv4: ss.s.PublicNet.IPv4.IP, UserData: ss.userData,
		Rescue: ss.inRescue, RescueSSHKeys: slices.Clone(ss.rescueKeys), ImageID: ss.imageID,
		ImageType: ss.imageType, ImageLabels: maps.Clone(ss.imageLabel), Labels: maps.Clone(ss.s.Labels), ServerType: ss.s.ServerType.Name, Location: ss.s.Location.Name}
	for _, pn := range ss.s.PrivateNet {
		info.PrivateIPs = append(info.PrivateIPs, pn.IP)
	}
	if p, err := netip.ParsePrefix(ss.s.PublicNet.IPv6.IP); err == nil {
		info.PublicIPv6 = p.Masked().Addr().Next().String()
	}
	return info
}

// serverInfo is info with the ranges of the server's networks; callers
// hold f.mu.
func (f *Fake) serverInfo(ss *serverState) ServerInfo {
	info := ss.info()
	for _, pn := range ss.s.PrivateNet {
		r := ""
		if ns := f.networks[pn.Network]; ns != nil {
			r = ns.n.IPRange
		}
		info.PrivateRanges = append(info.PrivateRanges, r)
	}
	return info
}

// serverKind is the collection behind /servers, filtered by ?status= and
// sortable by status.
func (f *Fake) serverKind() *collection[*serverState, schema.Server] {
	c := &collection[*serverState, schema.Server]{plural: "servers", single: "server", noun: "server",
		items: f.servers, render: f.renderServer, create: f.createServer, action: f.serverAction,
		fields:    func(x *serverState) (int64, *string, *map[string]string) { return x.s.ID, &x.s.Name, &x.s.Labels },
		keep:      anyOf("status", func(ss *serverState) string { return ss.s.Status }),
		sortField: func(ss *serverState, _ string) string { return ss.s.Status },
		remove: func(rq *request, _ int64, ss *serverState) (*action, error) {
			return f.deleteServer(ss, rq.now), nil
		},
	}
	c.update = patchBy(c, func(r *schema.ServerUpdateRequest) (*string, *map[string]string) { return optName(r.Name), r.Labels })
	return c
}

func labelsOrEmpty(p *map[string]string) map[string]string {
	if p == nil || *p == nil {
		return map[string]string{}
	}
	return maps.Clone(*p)
}

func (f *Fake) createServer(rq *request) (int, any, error) {
	req, err := decodeCreate(rq, f.serverKind(), func(r *schema.ServerCreateRequest) string { return r.Name })
	if err != nil {
		return 0, nil, err
	}
	st, ok := f.cat.serverType(req.ServerType)
	if !ok {
		return 0, nil, errInvalid("server_type", fmt.Sprintf("server type %v not found", idOrNameString(req.ServerType)))
	}
	st = f.renderServerType(st)
	locName := req.Location
	if locName == "" {
		locName = "fsn1"
		for _, stl := range st.Locations {
			if stl.Available {
				locName = stl.Name
				break
			}
		}
	}
	loc := f.cat.location(locName)
	if loc.ID == 0 {
		return 0, nil, errInvalid("location", fmt.Sprintf("location %q not found", locName))
	}
	if err := f.checkOrderable(st, loc.Name); err != nil {
		return 0, nil, err
	}
	img, err := f.resolveImage(req.Image, st.Architecture)
	if err != nil {
		return 0, nil, err
	}
	if len(req.UserData) > maxUserData {
		return 0, nil, errInvalid("user_data", fmt.Sprintf("user_data is %d bytes, longer than the 32 KiB (32768 bytes) Hetzner accepts", len(req.UserData)))
	}
	var labels map[string]string
	if err := checkNewLabels(req.Labels); err != nil {
		return 0, nil, err
	}
	labels = labelsOrEmpty(req.Labels)
	for _, k := range req.SSHKeys {
		if _, ok := f.sshKeys[k]; !ok {
			return 0, nil, errInvalid("ssh_keys", fmt.Sprintf("ssh key %d not found", k))
		}
	}
	for _, n := range req.Networks {
		if _, ok := f.networks[n]; !ok {
			return 0, nil, errInvalid("networks", fmt.Sprintf("network %d not found", n))
		}
	}
	for _, fw := range req.Firewalls {
		if _, ok := f.firewalls[fw.Firewall]; !ok {
			return 0, nil, errInvalid("firewalls", fmt.Sprintf("firewall %d not found", fw.Firewall))
		}
	}
	if req.PlacementGroup != 0 {
		if _, ok := f.pgroups[req.PlacementGroup]; !ok {
			return 0, nil, errInvalid("placement_group", fmt.Sprintf("placement group %d not found", req.PlacementGroup))
		}
		if n := len(f.placementGroupServers(req.PlacementGroup)); n >= maxPlacementGroupServers {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "placement_error",
				fmt.Sprintf("placement group %d already holds %d servers, the most a spread group allows", req.PlacementGroup, n))
		}
	}
	for _, v := range req.Volumes {
		vol, ok := f.volumes[v]
		if !ok {
			return 0, nil, errInvalid("volumes", fmt.Sprintf("volume %d not found", v))
		}
		if vol.Server != nil {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "volume_already_attached", fmt.Sprintf("volume %d is already attached to server %d", v, *vol.Server))
		}
		// API description, create_volume: "a Volume can be attached to a
		// Server only in the same Location as the Volume itself". The
		// description names no specific code for this refusal; the fake
		// answers invalid_input on the field, as for other bad references.
		if vol.Location.Name != loc.Name {
			return 0, nil, errInvalid("volumes", fmt.Sprintf("volume %d is in %s, the server would be in %s; a volume attaches only to servers in its location", v, vol.Location.Name, loc.Name))
		}
	}
	enableV4, enableV6 := true, true
	if req.PublicNet != nil {
		enableV4, enableV6 = req.PublicNet.EnableIPv4 || req.PublicNet.IPv4ID != 0, req.PublicNet.EnableIPv6 || req.PublicNet.IPv6ID != 0
	}
	if err := f.checkLimit("servers", 1); err != nil {
		return 0, nil, err
	}
	newIPs := 0
	if enableV4 && pubID(req.PublicNet, 4) == 0 {
		newIPs++
	}
	if enableV6 && pubID(req.PublicNet, 6) == 0 {
		newIPs++
	}
	if err := f.checkLimit("primary_ips", newIPs); err != nil {
		return 0, nil, err
	}
	for _, pid := range []int64{pubID(req.PublicNet, 4), pubID(req.PublicNet, 6)} {
		if pid == 0 {
			continue
		}
		pip, ok := f.primaryIPs[pid]
		if !ok {
			return 0, nil, errInvalid("public_net", fmt.Sprintf("primary ip %d not found", pid))
		}
		if pip.AssigneeID != nil {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "primary_ip_assigned", fmt.Sprintf("primary ip %d is already assigned to server %d", pid, *pip.AssigneeID))
		}
	}

	id := f.nextID()
	now := rq.now.UTC().Truncate(time.Second)
	ss := &serverState{userData: req.UserData, imageID: img.ID, imageType: img.Type, imageLabel: maps.Clone(img.Labels), pgroup: req.PlacementGroup}
	ss.s = schema.Server{ID: id, Name: req.Name, Status: "initializing", Created: now, ServerType: st,
		IncludedTraffic: 20 * tib, Location: loc, Image: img, Labels: labels, PrimaryDiskSize: st.Disk,
		PrivateNet: []schema.ServerPrivateNet{}}
	if enableV4 {
		pip, err := f.assignPrimaryIP(pubID(req.PublicNet, 4), "ipv4", ss, now)
		if err != nil {
			return 0, nil, err
		}
		ss.s.PublicNet.IPv4 = schema.ServerPublicNetIPv4{ID: pip.ID, IP: pip.IP, DNSPtr: fmt.Sprintf("static.%s.clients.your-server.de", pip.IP)}
	}
	if enableV6 {
		pip, err := f.assignPrimaryIP(pubID(req.PublicNet, 6), "ipv6", ss, now)
		if err != nil {
			return 0, nil, err
		}
		ss.s.PublicNet.IPv6 = schema.ServerPublicNetIPv6{ID: pip.ID, IP: pip.IP, DNSPtr: []schema.ServerPublicNetIPv6DNSPtr{}}
	}
	for _, n := range req.Networks {
		ip, err := f.allocatePrivateIP(n, loc.NetworkZone, "")
		if err != nil {
			f.releasePrimaryIPs(ss)
			return 0, nil, err
		}
		ss.s.PrivateNet = append(ss.s.PrivateNet, schema.ServerPrivateNet{Network: n, IP: ip, AliasIPs: []string{}, MACAddress: macFor(id, n)})
	}
	if err := f.installDisk(id, img.ID); err != nil {
		f.releasePrimaryIPs(ss)
		return 0, nil, err
	}
	f.servers[id] = ss
	for _, fw := range req.Firewalls {
		f.firewalls[fw.Firewall].AppliedTo = append(f.firewalls[fw.Firewall].AppliedTo,
			schema.FirewallResource{Type: "server", Server: &schema.FirewallResourceServer{ID: id}})
	}
	for _, v := range req.Volumes {
		sid := id
		f.volumes[v].Server = &sid
	}

	start := req.StartAfterCreate == nil || *req.StartAfterCreate
	create := f.newAction("create_server", rq.now, ref("server", id))
	create.onSuccess = func(time.Time) {
		if s, ok := f.servers[id]; ok {
			if start {
				f.boot(s)
			} else {
				s.s.Status = "off"
			}
		}
	}
	create.onError = func(time.Time) {
		if s, ok := f.servers[id]; ok {
			s.s.Status = "off"
		}
	}
	var next []*action
	if start {
		next = append(next, f.newAction("start_server", rq.now, ref("server", id)))
	}
	for _, n := range req.Networks {
		next = append(next, f.newAction("attach_to_network", rq.now, ref("server", id), ref("network", n)))
	}
	body := map[string]any{"server": f.renderServer(ss), "action": create.render(rq.now),
		"next_actions": f.actionsBody(rq.now, next...)["actions"], "root_password": nil}
	if len(req.SSHKeys) == 0 {
		body["root_password"] = randomPassword()
	}
	return http.StatusCreated, body, nil
}

func pubID(pn *schema.ServerCreatePublicNet, family int) int64 {
	if pn == nil {
		return 0
	}
	if family == 4 {
		return pn.IPv4ID
	}
	return pn.IPv6ID
}

// checkOrderable rejects server types that cannot be ordered in a location.
func (f *Fake) checkOrderable(st schema.ServerType, loc string) error {
	if f.unavailable[[2]string{st.Name, loc}] {
		return errCode(http.StatusPreconditionFailed, "resource_unavailable",
			fmt.Sprintf("server type %s is currently unavailable in %s; try another location or type", st.Name, loc))
	}
	for _, stl := range st.Locations {
		if stl.Name != loc {
			continue
		}
		if !stl.Available {
			return errCode(http.StatusPreconditionFailed, "resource_unavailable",
				fmt.Sprintf("server type %s can no longer be ordered in %s; choose a current type", st.Name, loc))
		}
		return nil
	}
	return errInvalid("location", fmt.Sprintf("server type %s is not offered in %s", st.Name, loc))
}

// resolveImage finds an available image by ID, or by name for the architecture.
func (f *Fake) resolveImage(v schema.IDOrName, arch string) (*schema.Image, error) {
	for _, id := range slices.Sorted(maps.Keys(f.images)) {
		img := f.images[id]
		match := (v.ID != 0 && img.ID == v.ID) || (v.ID == 0 && img.Name != nil && *img.Name == v.Name && img.Architecture == arch)
		if !match {
			continue
		}
		if img.Architecture != arch {
			return nil, errInvalid("image", fmt.Sprintf("image %d is for %s, the server type is %s", img.ID, img.Architecture, arch))
		}
		if img.Status != "available" {
			return nil, errCode(http.StatusPreconditionFailed, "resource_unavailable", fmt.Sprintf("image %d is %s, not available yet", img.ID, img.Status))
		}
		out := *img
		return &out, nil
	}
	return nil, errInvalid("image", fmt.Sprintf("image %s not found for architecture %s", idOrNameString(v), arch))
}

func macFor(serverID, networkID int64) string {
	return fmt.Sprintf("86:00:%02x:%02x:%02x:%02x", byte(networkID), byte(serverID>>16), byte(serverID>>8), byte(serverID))
}

// randomPassword is a root password as Hetzner returns for servers without SSH keys.
func randomPassword() string {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
