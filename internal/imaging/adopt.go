package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"golang.org/x/crypto/ssh"
)

// Lost answers. Hetzner's gateway sometimes answers 502/504 after the API
// acted on a POST, and hcloud-go retries those (retryPolicy in
// hcloud/client_handler_retry.go). A retried create of the SSH key or the
// server then fails with uniqueness_error on the name, which has a random
// suffix per build: the resource is this build's own, so it is adopted.
// A retried create_image makes a second temporary snapshot, which
// deleteOtherSnapshots removes once the build's snapshot is published.

// adoptKey returns the SSH key this build created under name when the
// answer to its create was lost; createErr is returned if the key under
// that name holds another public key.
func (b *Builder) adoptKey(ctx context.Context, name, pub string, createErr error) (*hcloud.SSHKey, error) {
	key, _, err := b.c.SSHKey.GetByName(ctx, name)
	if err != nil {
		return nil, errors.Join(createErr, fmt.Errorf("look up ssh key %s: %w", name, err))
	}
	if key == nil || !samePublicKey(key.PublicKey, pub) {
		return nil, createErr
	}
	return key, nil
}

// samePublicKey compares two authorized_keys lines, ignoring comments.
func samePublicKey(a, b string) bool {
	ka, _, _, _, err := ssh.ParseAuthorizedKey([]byte(a))
	if err != nil {
		return false
	}
	kb, _, _, _, err := ssh.ParseAuthorizedKey([]byte(b))
	if err != nil {
		return false
	}
	return bytes.Equal(ka.Marshal(), kb.Marshal())
}

// adoptServer returns the server this build created under name when the
// answer to its create was lost, with its running actions (the create's
// action was in the lost answer) so the build can wait for them;
// createErr is returned if the server under that name is not a temporary
// server of k.
func (b *Builder) adoptServer(ctx context.Context, k Key, name string, createErr error) (hcloud.ServerCreateResult, error) {
	s, _, err := b.c.Server.GetByName(ctx, name)
	if err != nil {
		return hcloud.ServerCreateResult{}, errors.Join(createErr, fmt.Errorf("look up server %s: %w", name, err))
	}
	if s == nil || s.Labels[LabelTemporary] != "true" || s.Labels[LabelBuildKey] != buildKey(k) {
		return hcloud.ServerCreateResult{}, createErr
	}
	running, err := b.c.Server.Action.AllFor(ctx, s, hcloud.ActionListOpts{Status: []hcloud.ActionStatus{hcloud.ActionStatusRunning}})
	if err != nil {
		// The server is ours: return it so that the build's cleanup deletes it.
		return hcloud.ServerCreateResult{Server: s}, fmt.Errorf("list the running actions of temporary server %s: %w", name, err)
	}
	return hcloud.ServerCreateResult{Server: s, NextActions: running}, nil
}

// deleteOtherSnapshots deletes the temporary snapshots of k other than
// keep: a retried create_image of this build (run), or an earlier build's
// unfinished snapshot whose lease has run out. A live build's is left alone.
func (b *Builder) deleteOtherSnapshots(ctx context.Context, k Key, keep int64, run string) error {
	imgs, err := b.c.Image.AllWithOpts(ctx, hcloud.ImageListOpts{
		ListOpts: hcloud.ListOpts{LabelSelector: keySelector(k)},
		Type:     []hcloud.ImageType{hcloud.ImageTypeSnapshot},
	})
	if err != nil {
		return fmt.Errorf("list unfinished snapshots of %s: %w", k, err)
	}
	var errs []error
	for _, img := range imgs {
		if img.ID == keep || (img.Labels[LabelRun] != run && !b.reclaimable(img.Labels, b.opts.Now())) {
			continue
		}
		if _, err := b.c.Image.Delete(ctx, img); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
			errs = append(errs, fmt.Errorf("delete unfinished snapshot %d: %w", img.ID, err))
		}
	}
	return errors.Join(errs...)
}
