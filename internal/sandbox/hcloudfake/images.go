package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// imageKind is the collection behind /images. Images are created by
// create_image server actions, never through POST, and cannot be renamed.
func (f *Fake) imageKind() *collection[*schema.Image, schema.Image] {
	c := &collection[*schema.Image, schema.Image]{plural: "images", single: "image", noun: "image",
		items: f.images, render: renderImage, keep: keepImage, action: f.imageAction,
		fields: func(x *schema.Image) (int64, *string, *map[string]string) {
			name := "" // a copy: images have no rename
			if x.Name != nil {
				name = *x.Name
			}
			return x.ID, &name, &x.Labels
		},
		sortField: func(x *schema.Image, field string) string {
			if field == "description" {
				return x.Description
			}
			return x.Status
		},
		remove: func(_ *request, id int64, img *schema.Image) (*action, error) {
			if img.Type == "system" || img.Type == "app" {
				return nil, errCode(http.StatusForbidden, "forbidden", fmt.Sprintf("image %d is a public %s image and cannot be deleted", id, img.Type))
			}
			if img.Protection.Delete {
				// 423, as hcloud-go's retry tests note ("HTTP 423 is used
				// in many situations (e.g. protected)").
				return nil, errCode(http.StatusLocked, "protected", fmt.Sprintf("image %d is protected against deletion; remove the protection first", id))
			}
			delete(f.imageDisks, id)
			return nil, nil
		},
	}
	c.update = func(rq *request, img *schema.Image) error {
		if img.Type == "system" || img.Type == "app" {
			return errCode(http.StatusForbidden, "forbidden", fmt.Sprintf("image %d is a public %s image and cannot be changed", img.ID, img.Type))
		}
		var req schema.ImageUpdateRequest
		if err := rq.decode(&req); err != nil {
			return err
		}
		if req.Description != nil {
			img.Description = *req.Description
		}
		if req.Type != nil {
			if *req.Type != "snapshot" {
				return errInvalid("type", "an image can only be converted to snapshot")
			}
			img.Type = "snapshot"
		}
		return c.patch(img, nil, req.Labels)
	}
	return c
}

// keepImage applies the image list filters type, status, architecture,
// bound_to and include_deprecated.
func keepImage(q url.Values, img *schema.Image) bool {
	types, statuses, arches, boundTo := q["type"], q["status"], q["architecture"], q.Get("bound_to")
	return (len(types) == 0 || slices.Contains(types, img.Type)) &&
		(len(statuses) == 0 || slices.Contains(statuses, img.Status)) &&
		(len(arches) == 0 || slices.Contains(arches, img.Architecture)) &&
		(boundTo == "" || (img.BoundTo != nil && fmt.Sprint(*img.BoundTo) == boundTo)) &&
		(q.Get("include_deprecated") == "true" || img.Deprecated == nil)
}

// imageAction serves POST /images/{id}/actions/change_protection.
func (f *Fake) imageAction(rq *request, img *schema.Image, command string) (int, any, error) {
	if command != "change_protection" {
		return 0, nil, errNoRoute(rq)
	}
	var req schema.ImageActionChangeProtectionRequest
	if err := rq.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Delete != nil {
		img.Protection.Delete = *req.Delete
	}
	return http.StatusCreated, f.actionBody(f.newAction("change_protection", rq.now, ref("image", img.ID)), rq.now), nil
}

func renderImage(img *schema.Image) schema.Image {
	out := *img
	out.Labels = maps.Clone(img.Labels)
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	return out
}
