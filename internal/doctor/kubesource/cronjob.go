package kubesource

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// CronJob reads a batch/v1 CronJob's schedule and last runs; nil, nil when
// it does not exist.
func (s *Source) CronJob(ctx context.Context, namespace, name string) (*doctor.CronJobStatus, error) {
	var cj struct {
		Spec struct {
			Schedule string `json:"schedule"`
			Suspend  *bool  `json:"suspend"`
		} `json:"spec"`
		Status struct {
			LastScheduleTime   *time.Time `json:"lastScheduleTime"`
			LastSuccessfulTime *time.Time `json:"lastSuccessfulTime"`
		} `json:"status"`
	}
	err := s.get(ctx, "/apis/batch/v1/namespaces/"+url.PathEscape(namespace)+"/cronjobs/"+url.PathEscape(name), &cj)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := &doctor.CronJobStatus{Schedule: cj.Spec.Schedule, Suspended: cj.Spec.Suspend != nil && *cj.Spec.Suspend}
	if t := cj.Status.LastSuccessfulTime; t != nil {
		out.LastSuccessful = *t
	}
	if t := cj.Status.LastScheduleTime; t != nil {
		out.LastScheduled = *t
	}
	return out, nil
}
