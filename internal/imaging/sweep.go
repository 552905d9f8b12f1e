package imaging

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// Swept is what Sweep did: the resources it deleted and those it left
// because a build still holds their lease, each named "server NAME",
// "ssh key NAME" or "image ID".
type Swept struct {
	Deleted []string
	// Live are the servers and SSH keys of builds in progress (lease until
	// the time shown); their unfinished snapshots are kept silently.
	Live []string
}

// Sweep deletes the temporary servers, SSH keys and unfinished snapshots
// that interrupted builds left behind, found by their labels. Resources of
// a build in progress (a live LabelLease) are kept and listed in Live,
// unless force is set.
func (b *Builder) Sweep(ctx context.Context, force bool) (Swept, error) {
	var out Swept
	out.Live = b.live(ctx, temporarySelector(), force)
	deleted, err := b.sweep(ctx, temporarySelector(), force)
	out.Deleted = deleted
	return out, err
}

// SweepEnded deletes the temporary resources of builds that are over:
// expired leases, and the runs Options.Ended names (a killed process's
// builds, whose leases still run). It returns what it deleted.
func (b *Builder) SweepEnded(ctx context.Context) ([]string, error) {
	return b.sweep(ctx, temporarySelector(), false)
}

// live names the resources matching sel that a build still holds; none
// when force is set.
func (b *Builder) live(ctx context.Context, sel string, force bool) []string {
	if force {
		return nil
	}
	var out []string
	now := b.opts.Now()
	note := func(what string, labels map[string]string) {
		if !b.reclaimable(labels, now) {
			until, _ := leaseUntil(labels)
			out = append(out, fmt.Sprintf("%s (lease until %s)", what, until.UTC().Format(time.RFC3339)))
		}
	}
	if servers, err := b.c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}}); err == nil {
		for _, s := range servers {
			note("server "+s.Name, s.Labels)
		}
	}
	if keys, err := b.c.SSHKey.AllWithOpts(ctx, hcloud.SSHKeyListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}}); err == nil {
		for _, k := range keys {
			note("ssh key "+k.Name, k.Labels)
		}
	}
	return out
}

// sweep deletes everything temporary matching sel whose lease has run out
// (everything when force is set): servers first (they use the keys), then
// keys, then images. It goes on after a failure and reports all of them.
func (b *Builder) sweep(ctx context.Context, sel string, force bool) ([]string, error) {
	var deleted []string
	var errs []error
	now := b.opts.Now()
	expired := func(labels map[string]string) bool { return force || b.reclaimable(labels, now) }
	servers, err := b.c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	if err != nil {
		return nil, fmt.Errorf("list temporary servers (%s): %w", sel, err)
	}
	for _, s := range servers {
		if !expired(s.Labels) {
			continue
		}
		if err := b.deleteServer(ctx, s); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, "server "+s.Name)
	}
	keys, err := b.c.SSHKey.AllWithOpts(ctx, hcloud.SSHKeyListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	if err != nil {
		return deleted, errors.Join(append(errs, fmt.Errorf("list temporary ssh keys (%s): %w", sel, err))...)
	}
	for _, k := range keys {
		if !expired(k.Labels) {
			continue
		}
		if _, err := b.c.SSHKey.Delete(ctx, k); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
			errs = append(errs, fmt.Errorf("delete temporary ssh key %s (%d): %w", k.Name, k.ID, err))
			continue
		}
		deleted = append(deleted, "ssh key "+k.Name)
	}
	imgs, err := b.c.Image.AllWithOpts(ctx, hcloud.ImageListOpts{
		ListOpts: hcloud.ListOpts{LabelSelector: sel},
		Type:     []hcloud.ImageType{hcloud.ImageTypeSnapshot},
	})
	if err != nil {
		return deleted, errors.Join(append(errs, fmt.Errorf("list unfinished snapshots (%s): %w", sel, err))...)
	}
	for _, img := range imgs {
		if !expired(img.Labels) {
			continue
		}
		if _, err := b.c.Image.Delete(ctx, img); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
			errs = append(errs, fmt.Errorf("delete unfinished snapshot %d: %w", img.ID, err))
			continue
		}
		deleted = append(deleted, fmt.Sprintf("image %d", img.ID))
	}
	if len(errs) > 0 {
		return deleted, fmt.Errorf("sweep temporary resources: %w", errors.Join(errs...))
	}
	return deleted, nil
}

// keySelector selects the temporary resources of builds of k.
func keySelector(k Key) string {
	return selector(LabelManagedBy, managedByValue, LabelTemporary, "true",
		LabelPurpose, purposeValue, LabelBuildKey, buildKey(k))
}

// cleanKey removes what interrupted builds of k left behind. A failure is
// only a warning: the snapshot is fine, and the next run tries again.
func (b *Builder) cleanKey(ctx context.Context, k Key) {
	deleted, err := b.sweep(ctx, keySelector(k), false)
	if len(deleted) > 0 {
		b.emit(Event{Key: k, Stage: StageCleanup, Message: "removed leftovers of an interrupted build: " + strings.Join(deleted, ", ")})
	}
	if err != nil {
		err = fmt.Errorf("remove leftovers of an interrupted build of %s (the next run retries; or run the sweep): %w", k, err)
		b.emit(Event{Key: k, Stage: StageCleanup, Message: err.Error(), Err: err})
	}
}
