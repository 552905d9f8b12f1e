package hcloudfake

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// Volume sizes Hetzner accepts, in GB.
const (
	minVolumeSize = 10
	maxVolumeSize = 10240
)

// volumeKind is the collection behind /volumes, filtered by ?status=.
func (f *Fake) volumeKind() *collection[*schema.Volume, schema.Volume] {
	c := &collection[*schema.Volume, schema.Volume]{plural: "volumes", single: "volume", noun: "volume",
		items: f.volumes, render: withOwnLabels(volumeFields), create: f.createVolume, action: f.volumeAction,
		fields: volumeFields,
		keep:   anyOf("status", func(v *schema.Volume) string { return v.Status }),
		remove: func(_ *request, id int64, v *schema.Volume) (*action, error) {
			if v.Server != nil {
				return nil, errCode(http.StatusUnprocessableEntity, "resource_in_use",
					fmt.Sprintf("volume %d is attached to server %d; detach it first", id, *v.Server))
			}
			return nil, nil
		},
	}
	c.update = patchBy(c, func(r *schema.VolumeUpdateRequest) (*string, *map[string]string) { return optName(r.Name), r.Labels })
	return c
}

func (f *Fake) createVolume(rq *request) (int, any, error) {
	req, err := decodeCreate(rq, f.volumeKind(), func(r *schema.VolumeCreateRequest) string { return r.Name })
	if err != nil {
		return 0, nil, err
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
	if err := checkNewLabels(req.Labels); err != nil {
		return 0, nil, err
	}
	if err := f.checkLimit("volumes", 1); err != nil {
		return 0, nil, err
	}
	v := &schema.Volume{ID: f.nextID(), Name: req.Name, Status: "creating", Location: loc, Size: req.Size, Format: req.Format,
		Labels: labelsOrEmpty(req.Labels), Created: rq.created()}
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
	return http.StatusCreated, map[string]any{"volume": f.volumeKind().render(v), "action": a.render(rq.now), "next_actions": next}, nil
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
		if err := f.checkUnlocked("server", ss.s.ID); err != nil {
			return 0, nil, err
		}
		if v.Server != nil {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "volume_already_attached", fmt.Sprintf("volume %d is already attached to server %d", v.ID, *v.Server))
		}
		// API description, attach_volume: "Works only if the Server is in
		// the same Location as the Volume."
		if ss.s.Location.ID != v.Location.ID {
			return 0, nil, errInvalid("server", fmt.Sprintf("server %d is in %s, the volume in %s; a volume attaches only to servers in its location", ss.s.ID, ss.s.Location.Name, v.Location.Name))
		}
		sid := ss.s.ID
		v.Server = &sid
		refs = append(refs, ref("server", sid))
		command = "attach_volume"
	case "detach":
		if v.Server == nil {
			return 0, nil, errInvalid("volume", fmt.Sprintf("volume %d is not attached to a server", v.ID))
		}
		if err := f.checkUnlocked("server", *v.Server); err != nil {
			return 0, nil, err
		}
		refs = append(refs, ref("server", *v.Server))
		v.Server = nil
		command = "detach_volume"
	default:
		return 0, nil, errNoRoute(rq)
	}
	return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
}

// volumeFields returns the ID, name and labels of a volume for its collection.
func volumeFields(x *schema.Volume) (int64, *string, *map[string]string) {
	return x.ID, &x.Name, &x.Labels
}
