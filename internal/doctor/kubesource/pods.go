package kubesource

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

var _ doctor.PodSource = (*Source)(nil)

type containerStatus struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	State struct {
		Waiting *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"waiting"`
	} `json:"state"`
}

// PullFailures lists the containers (and init containers) of every pod
// (GET /api/v1/pods) waiting with reason ErrImagePull or ImagePullBackOff,
// the reasons the kubelet sets (pkg/kubelet/images/types.go).
func (s *Source) PullFailures(ctx context.Context) ([]doctor.PullFailure, error) {
	var out []doctor.PullFailure
	err := s.list(ctx, "/api/v1/pods", nil, func(raw json.RawMessage) error {
		var p struct {
			Metadata struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				NodeName string `json:"nodeName"`
			} `json:"spec"`
			Status struct {
				InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
				ContainerStatuses     []containerStatus `json:"containerStatuses"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("decode a Pod: %w", err)
		}
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			w := c.State.Waiting
			if w == nil || (w.Reason != "ErrImagePull" && w.Reason != "ImagePullBackOff") {
				continue
			}
			out = append(out, doctor.PullFailure{Namespace: p.Metadata.Namespace, Pod: p.Metadata.Name, Node: p.Spec.NodeName,
				Container: c.Name, Image: c.Image, Reason: w.Reason, Message: w.Message})
		}
		return nil
	})
	return out, err
}
