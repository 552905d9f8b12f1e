package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// errNewRootRefused marks refuseNewRoot's refusal (servers exist), as
// opposed to a failed check.
var errNewRootRefused = errors.New("refusing to create")

// refuseNewRoot fails when a new root secret (the Talos secrets bundle, the
// disk passphrase) would be created while servers labelled for the cluster
// exist: they were configured with the old one, so a new one would lock
// the operator out of them for good (the old CA and keys would be gone).
func (d *Deps) refuseNewRoot(ctx context.Context, env *engine.Env, what, name string) error {
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	sel := cloud.Selector(map[string]string{cloud.LabelCluster: env.Spec.Name})
	servers, err := c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	if err != nil {
		return fmt.Errorf("list servers labelled %s before creating a %s: %w; a new one is made only once Hetzner confirms that no server of the cluster exists (they would need the old one): check secrets.hcloudToken and the network, then run again", sel, what, err)
	}
	if len(servers) == 0 {
		return nil
	}
	names := make([]string, 0, len(servers))
	for _, s := range servers {
		names = append(names, fmt.Sprintf("%s (%d)", s.Name, s.ID))
	}
	return fmt.Errorf("%w a new %s: %d servers labelled %s exist (%s) and %s is missing, so they were made with another one that a new %s would replace for good; "+
		"if they are this cluster's, put the kept %s back (from the secrets/ folder of the state you moved away, or your backup) and run apply again; "+
		"if they belong to another cluster of the same name, give this spec another name",
		errNewRootRefused, what, len(servers), sel, strings.Join(names, ", "), env.State.SecretPath(name), what, env.State.SecretPath(name))
}
