// Package releases installs, upgrades and uninstalls the add-ons as Helm
// releases, with helm's own action package and the "secret" storage
// driver the stock helm CLI uses, so `helm list -A`, `helm get values` and
// `helm history` (helm 3 and 4) see them, and helm or Flux can take them
// over. See docs/addons.md, "Charts and releases".
package releases

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"helm.sh/helm/v4/pkg/action"
	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// storageDriver is where release records live: Secrets of type
// helm.sh/release.v1 in the release's namespace, the helm CLI's default
// (HELM_DRIVER unset; pkg/action/action.go Init).
const storageDriver = "secret"

// DefaultTimeout is how long a release's resources get to become ready
// when Spec.Timeout is 0 (helm's --timeout default).
const DefaultTimeout = 5 * time.Minute

// maxHistory is how many revisions a release keeps (helm upgrade's
// --history-max default).
const maxHistory = 10

// Client manages Helm releases in one cluster.
type Client struct {
	kubeconfig *clientcmdapi.Config
}

// New is a client for the cluster kubeconfig names (its current context).
func New(kubeconfig []byte) (*Client, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig for helm releases: %w", err)
	}

	if _, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig(); err != nil {
		return nil, fmt.Errorf("kubeconfig for helm releases: %w: check its current context", err)
	}

	return &Client{kubeconfig: cfg}, nil
}

// action is helm's action configuration for namespace. Helm's own logs
// are discarded: they may quote values, and values may hold secrets.
func (c *Client) action(namespace string) (*action.Configuration, *getter, error) {
	g, err := newGetter(c.kubeconfig, namespace)
	if err != nil {
		return nil, nil, err
	}

	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if err := cfg.Init(g, namespace, storageDriver); err != nil {
		return nil, nil, fmt.Errorf("helm in namespace %s: %w", namespace, err)
	}

	return cfg, g, nil
}

// v1 is a stored release as helm's v1 record.
func v1(r ri.Releaser) (*release.Release, error) {
	switch rel := r.(type) {
	case *release.Release:
		return rel, nil
	case release.Release:
		return &rel, nil
	}

	return nil, errors.New("helm release record is not a v1 release")
}
