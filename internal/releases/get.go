package releases

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// Current is a release as the cluster holds it: its latest revision.
type Current struct {
	Found        bool
	Revision     int
	ChartVersion string
	// Values are the values the release was installed or upgraded with
	// (helm get values).
	Values map[string]any
	// Status is helm's: deployed, failed, pending-install, ...
	Status string
}

// Get reads release name in namespace ("not found" is Found false).
func (c *Client) Get(ctx context.Context, name, namespace string) (Current, error) {
	cfg, _, err := c.action(namespace)
	if err != nil {
		return Current{}, err
	}

	return get(cfg, name, namespace)
}

func get(cfg *action.Configuration, name, namespace string) (Current, error) {
	r, err := action.NewGet(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return Current{}, nil
	}

	if err != nil {
		return Current{}, fmt.Errorf("read helm release %s in %s: %w", name, namespace, err)
	}

	rel, err := v1(r)
	if err != nil {
		return Current{}, err
	}

	cur := Current{Found: true, Revision: rel.Version, Values: rel.Config}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		cur.ChartVersion = rel.Chart.Metadata.Version
	}

	if rel.Info != nil {
		cur.Status = rel.Info.Status.String()
	}

	return cur, nil
}

// Listed is one release as `helm list -A` shows it.
type Listed struct {
	Name, Namespace string
	Revision        int
	Status          string
	Chart           string // NAME-VERSION
}

// List lists the releases of every namespace, as `helm list -A` does
// (deployed and failed ones).
func (c *Client) List(ctx context.Context) ([]Listed, error) {
	cfg, _, err := c.action("")
	if err != nil {
		return nil, err
	}

	l := action.NewList(cfg)
	l.AllNamespaces = true
	l.SetStateMask()

	rs, err := l.Run()
	if err != nil {
		return nil, fmt.Errorf("list helm releases: %w", err)
	}

	out := make([]Listed, 0, len(rs))
	for _, r := range rs {
		rel, err := v1(r)
		if err != nil {
			return nil, err
		}

		item := Listed{Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Version}
		if rel.Info != nil {
			item.Status = rel.Info.Status.String()
		}

		if rel.Chart != nil && rel.Chart.Metadata != nil {
			item.Chart = rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version
		}

		out = append(out, item)
	}

	return out, nil
}
