package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// Volume sizes Hetzner accepts, in GB.
const (
	minVolumeSize = 10
	maxVolumeSize = 10240
)

func (f *Fake) serveVolumes(rq *request) (int, any, error) {
	switch {
	case len(rq.segs) == 1 && rq.method == http.MethodGet:
		statuses := rq.query["status"]
		items := make([]schema.Volume, 0, len(f.volumes))
		for _, v := range f.volumes {
			if len(statuses) == 0 || slices.Contains(statuses, v.Status) {
				items = append(items, renderVolume(v))
			}
		}
		out, err := listResponse(rq.query, "volumes", items, accessor[schema.Volume]{
			id:     func(x schema.Volume) int64 { return x.ID },
			name:   func(x schema.Volume) string { return x.Name },
			labels: func(x schema.Volume) map[string]string { return x.Labels },
		})
		return http.StatusOK, out, err
	case len(rq.segs) == 1 && rq.method == http.MethodPost:
		return f.createVolume(rq)
	case len(rq.segs) == 1:
		return 0, nil, errMethod(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	v, ok := f.volumes[id]
	if !ok {
		return 0, nil, errNotFound("volume", id)
	}
	if len(rq.segs) == 4 && rq.segs[2] == "actions" && rq.method == http.MethodPost {
		return f.volumeAction(rq, v, rq.segs[3])
	}
	if len(rq.segs) != 2 {
		return 0, nil, errNoRoute(rq)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{"volume": renderVolume(v)}, nil
	case http.MethodPut:
		var req schema.VolumeUpdateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Name != "" && req.Name != v.Name {
			if f.volumeByName(req.Name) != nil {
				return 0, nil, errUniqueness("name")
			}
			v.Name = req.Name
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
			v.Labels = maps.Clone(*req.Labels)
		}
		return http.StatusOK, map[string]any{"volume": renderVolume(v)}, nil
	case http.MethodDelete:
		if v.Server != nil {
			return 0, nil, errCode(http.StatusPreconditionFailed, "resource_in_use",
				fmt.Sprintf("volume %d is attached to server %d; detach it first", id, *v.Server))
		}
		delete(f.volumes, id)
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, errMethod(rq)
}

func (f *Fake) volumeByName(name string) *schema.Volume {
	for _, v := range f.volumes {
		if v.Name == name {
			return v
		}
	}
	return nil
}

func renderVolume(v *schema.Volume) schema.Volume {
	out := *v
	out.Labels = maps.Clone(v.Labels)
	return out
}

func (f *Fake) createVolume(rq *request) (int, any, error) {
	var req schema.VolumeCreateRequest
	if err := rq.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, errInvalid("name", "name is required")
	}
	if f.volumeByName(req.Name) != nil {
		return 0, nil, errUniqueness("name")
	}
	if req.Size < minVolumeSize || req.Size > maxVolumeSize {
		return 0, nil, errInvalid("size", fmt.Sprintf("size %d GB is outside %d-%d GB", req.Size, minVolumeSize, maxVolumeSize))
	}
	var loc schema.Location
	var server *serverState
	switch {
	case req.Server != nil:
		ss, ok := f.servers[*req.Server]
		if !ok {
			return 0, nil, errInvalid("server", fmt.Sprintf("server %d not found", *req.Server))
		}
		server, loc = ss, ss.s.Location
	case req.Location != nil:
		name := req.Location.Name
		if req.Location.ID != 0 {
			name = fmt.Sprint(req.Location.ID)
		}
		loc = f.cat.location(name)
	}
	if loc.ID == 0 {
		return 0, nil, errInvalid("location", "a known location or an existing server is required")
	}
	if req.Format != nil && *req.Format != "ext4" && *req.Format != "xfs" {
		return 0, nil, errInvalid("format", fmt.Sprintf("format %q is not ext4 or xfs", *req.Format))
	}
	if req.Labels != nil {
		if err := checkLabels(*req.Labels); err != nil {
			return 0, nil, err
		}
	}
	v := &schema.Volume{ID: f.nextID(), Name: req.Name, Status: "creating", Location: loc, Size: req.Size, Format: req.Format,
		Labels: labelsOrEmpty(req.Labels), Created: rq.now.UTC().Truncate(time.Second)}
	v.LinuxDevice = fmt.Sprintf("/dev/disk/by-id/scsi-0HC_Volume_%d", v.ID)
	f.volumes[v.ID] = v
	vid := v.ID
	a := f.newAction("create_volume", rq.now, ref("volume", vid))
	a.onSuccess = func(time.Time) {
		if vol, ok := f.volumes[vid]; ok {
			vol.Status = "available"
		}
	}
	next := []schema.Action{}
	if server != nil {
		sid := server.s.ID
		v.Server = &sid
		next = append(next, f.newAction("attach_volume", rq.now, ref("volume", vid), ref("server", sid)).render(rq.now))
	}
	return http.StatusCreated, map[string]any{"volume": renderVolume(v), "action": a.render(rq.now), "next_actions": next}, nil
}

func (f *Fake) volumeAction(rq *request, v *schema.Volume, command string) (int, any, error) {
	refs := []schema.ActionResourceReference{ref("volume", v.ID)}
	switch command {
	case "attach":
		var req schema.VolumeActionAttachVolumeRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		ss, ok := f.servers[req.Server]
		if !ok {
			return 0, nil, errInvalid("server", fmt.Sprintf("server %d not found", req.Server))
		}
		if v.Server != nil {
			return 0, nil, errCode(http.StatusPreconditionFailed, "volume_already_attached", fmt.Sprintf("volume %d is already attached to server %d", v.ID, *v.Server))
		}
		if ss.s.Location.ID != v.Location.ID {
			return 0, nil, errInvalid("server", fmt.Sprintf("server %d is in %s, the volume in %s", ss.s.ID, ss.s.Location.Name, v.Location.Name))
		}
		sid := ss.s.ID
		v.Server = &sid
		refs = append(refs, ref("server", sid))
		command = "attach_volume"
	case "detach":
		if v.Server == nil {
			return 0, nil, errCode(http.StatusPreconditionFailed, "invalid_input", fmt.Sprintf("volume %d is not attached", v.ID))
		}
		refs = append(refs, ref("server", *v.Server))
		v.Server = nil
		command = "detach_volume"
	default:
		return 0, nil, errNoRoute(rq)
	}
	return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
}
