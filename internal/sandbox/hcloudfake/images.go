package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

func (f *Fake) serveImages(rq *request) (int, any, error) {
	switch {
	case len(rq.segs) == 1 && rq.method == http.MethodGet:
		q := rq.query
		types, statuses, arches := q["type"], q["status"], q["architecture"]
		boundTo := q.Get("bound_to")
		includeDeprecated := q.Get("include_deprecated") == "true"
		items := make([]schema.Image, 0, len(f.images))
		for _, img := range f.images {
			if (len(types) > 0 && !slices.Contains(types, img.Type)) ||
				(len(statuses) > 0 && !slices.Contains(statuses, img.Status)) ||
				(len(arches) > 0 && !slices.Contains(arches, img.Architecture)) ||
				(boundTo != "" && (img.BoundTo == nil || strconv.FormatInt(*img.BoundTo, 10) != boundTo)) ||
				(!includeDeprecated && img.Deprecated != nil) {
				continue
			}
			items = append(items, renderImage(img))
		}
		out, err := listResponse(rq.query, "images", items, accessor[schema.Image]{
			id: func(x schema.Image) int64 { return x.ID },
			name: func(x schema.Image) string {
				if x.Name == nil {
					return ""
				}
				return *x.Name
			},
			labels: func(x schema.Image) map[string]string { return x.Labels },
			field: func(x schema.Image, field string) string {
				if field == "description" {
					return x.Description
				}
				return x.Status
			},
		})
		return http.StatusOK, out, err
	case len(rq.segs) == 1:
		return 0, nil, errMethod(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	img, ok := f.images[id]
	if !ok {
		return 0, nil, errNotFound("image", id)
	}
	if len(rq.segs) == 4 && rq.segs[2] == "actions" && rq.segs[3] == "change_protection" && rq.method == http.MethodPost {
		var req schema.ImageActionChangeProtectionRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Delete != nil {
			img.Protection.Delete = *req.Delete
		}
		return http.StatusCreated, f.actionBody(f.newAction("change_protection", rq.now, ref("image", id)), rq.now), nil
	}
	if len(rq.segs) != 2 {
		return 0, nil, errNoRoute(rq)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{"image": renderImage(img)}, nil
	case http.MethodPut:
		if img.Type == "system" || img.Type == "app" {
			return 0, nil, errCode(http.StatusForbidden, "forbidden", fmt.Sprintf("image %d is a public %s image and cannot be changed", id, img.Type))
		}
		var req schema.ImageUpdateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Description != nil {
			img.Description = *req.Description
		}
		if req.Type != nil {
			if *req.Type != "snapshot" {
				return 0, nil, errInvalid("type", "an image can only be converted to snapshot")
			}
			img.Type = "snapshot"
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
			img.Labels = maps.Clone(*req.Labels)
		}
		return http.StatusOK, map[string]any{"image": renderImage(img)}, nil
	case http.MethodDelete:
		if img.Type == "system" || img.Type == "app" {
			return 0, nil, errCode(http.StatusForbidden, "forbidden", fmt.Sprintf("image %d is a public %s image and cannot be deleted", id, img.Type))
		}
		if img.Protection.Delete {
			return 0, nil, errCode(http.StatusForbidden, "protected", fmt.Sprintf("image %d is protected against deletion; remove the protection first", id))
		}
		delete(f.images, id)
		return http.StatusNoContent, nil, nil
	}
	return 0, nil, errMethod(rq)
}

func renderImage(img *schema.Image) schema.Image {
	out := *img
	out.Labels = maps.Clone(img.Labels)
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	return out
}
