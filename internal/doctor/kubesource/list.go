package kubesource

import (
	"context"
	"encoding/json"
	"net/url"
)

// list pages through a list endpoint (limit/continue, as kube-apiserver
// pages) and calls each with every item's raw JSON.
func (s *Source) list(ctx context.Context, path string, q url.Values, each func(json.RawMessage) error) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set("limit", "500")
	for {
		var l struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := s.getQuery(ctx, path, q, &l); err != nil {
			return err
		}
		for _, it := range l.Items {
			if err := each(it); err != nil {
				return err
			}
		}
		if l.Metadata.Continue == "" {
			return nil
		}
		q.Set("continue", l.Metadata.Continue)
	}
}
