// Package imaging builds the Hetzner Cloud snapshots Talos servers boot from.
//
// Hetzner cannot import a disk image, so a snapshot is made the way
// hcloud-upload-image and Packer do it: a throwaway server (not started) is
// booted into the rescue system with a temporary SSH key, the Image Factory's
// raw disk image is streamed onto /dev/sda, and the powered-off server is
// snapshotted. The temporary key, server (and an unfinished image) are deleted
// on success, failure and cancellation alike, and carry labels so that Sweep
// finds whatever a killed process left behind; the leftovers of one Key are
// also removed whenever that Key is built or reused again. A running build
// renews a lease label on its resources, so sweeps never delete the server
// of another live build of the same Key (see lease.go). One snapshot
// exists per Key; Ensure reuses it when it exists and builds the missing ones
// in parallel, polling all their actions together.
package imaging

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
)

// Request asks for the snapshot of Key, built from ImageURL if missing.
type Request struct {
	Key Key
	// ImageURL is the factory disk image, BASE/image/ID/VERSION/hcloud-ARCH.raw.xz.
	ImageURL string
	// Location is where the temporary server runs, e.g. "fsn1" ("" = fsn1).
	// Snapshots are global: any location can use the result.
	Location string
	// ServerType of the temporary server; "" picks the cheapest orderable
	// type of the architecture at Location (cx23 / cax11 in 2026).
	ServerType string
}

// Options tunes a Builder. The zero value works against the real API.
type Options struct {
	// SSHPort is the rescue system's SSH port (default 22; the sandbox uses another).
	SSHPort int
	// SSHTimeout bounds the wait until the rescue system accepts SSH (default 5 min).
	SSHTimeout time.Duration
	// PollInterval is the pause between SSH attempts and image status polls
	// (default 2 s).
	PollInterval time.Duration
	// ActionBackoff is the wait before an action's n-th poll (n from 0).
	// All builds' running actions are polled together, one request per
	// round, whenever any of them is due. Default: cloud.NewClient's schedule,
	// from PollInterval (500 ms if PollInterval is unset) growing ×1.5 up to
	// ten times that.
	ActionBackoff hcloud.BackoffFunc
	// Labels are extra labels on the temporary resources and the snapshot,
	// e.g. a created-by label. The builder's own labels win on conflict.
	Labels map[string]string
	// Emit receives progress events. Calls are serialised; it may be nil.
	Emit func(Event)
	// MaxParallel bounds concurrent builds (default 4, well under the
	// default per-project server limit).
	MaxParallel int
	// HTTPClient reads the size of the disk image (xz index) for progress
	// fractions; default an http.Client with a 30 s timeout. Failure is not
	// fatal: progress then has bytes but no total.
	HTTPClient *http.Client
	// LeaseDuration is how far ahead a running build claims its temporary
	// resources (LabelLease); sweeps leave resources with a live lease alone
	// (default 10 min).
	LeaseDuration time.Duration
	// LeaseRefresh is the pause between renewals of the lease (default a
	// quarter of LeaseDuration).
	LeaseRefresh time.Duration
	// Now is the clock for leases (default time.Now).
	Now func() time.Time
	// OnStart is called with a build's run name (LabelRun) before the build
	// creates anything; an error stops the build. The images step records
	// the name in the cluster's state.
	OnStart func(run string) error
	// Ended reports whether run is a build known to have ended: one started
	// by an earlier process of the same state, which the state lock proves
	// gone (a kill -9 leaves its lease running). Sweeps remove its
	// resources whatever their lease says. Nil means none is known.
	Ended func(run string) bool
}

// Stages reported in Event.Stage.
const (
	StageLookup   = "lookup"
	StageKey      = "key"
	StageServer   = "server"
	StageRescue   = "rescue"
	StageBoot     = "boot"
	StageSSH      = "ssh"
	StageWrite    = "write"
	StageShutdown = "shutdown"
	StageSnapshot = "snapshot"
	StageCleanup  = "cleanup"
	StageDone     = "done"
	StageReused   = "reused"
	StageFailed   = "failed"
)

// Event reports the progress of one key's build.
type Event struct {
	Key Key
	// Stage is one of the Stage* constants.
	Stage   string
	Message string
	// Bytes written to disk so far and the image's uncompressed Total (0 if
	// unknown), during StageWrite.
	Bytes, Total int64
	// Fraction of the current stage in [0,1] when known (write, action progress).
	Fraction float64
	// SnapshotID is set with StageDone and StageReused.
	SnapshotID int64
	// Err is set with StageFailed and with cleanup problems. A StageCleanup
	// event with Err is a warning when the build still ends in StageDone or
	// StageReused: the leftovers are removed by the next run of that key.
	Err error
}

// Builder reuses or builds Talos snapshots on one Hetzner Cloud project.
type Builder struct {
	c       *hcloud.Client
	opts    Options
	actions *actionWatcher
	cat     catalog
	mu      sync.Mutex // serialises Emit
}

// New returns a Builder using c for every API call.
func New(c *hcloud.Client, opts Options) *Builder {
	if opts.ActionBackoff == nil {
		opts.ActionBackoff = cloud.Backoff(opts.PollInterval)
	}
	if opts.SSHPort <= 0 {
		opts.SSHPort = 22
	}
	if opts.SSHTimeout <= 0 {
		opts.SSHTimeout = 5 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = 4
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = defaultLeaseDuration
	}
	if opts.LeaseRefresh <= 0 {
		opts.LeaseRefresh = opts.LeaseDuration / 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Builder{c: c, opts: opts, actions: newActionWatcher(c, opts.ActionBackoff)}
}

func (b *Builder) emit(e Event) {
	if b.opts.Emit == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opts.Emit(e)
}

// Find returns the snapshot of k, or nil if there is none. Candidates are
// found by label and confirmed by the full schematic ID in the description;
// two confirmed snapshots for one key is an error the operator must resolve.
func (b *Builder) Find(ctx context.Context, k Key) (*hcloud.Image, error) {
	if err := k.validate(); err != nil {
		return nil, err
	}
	match, err := b.published(ctx, k)
	if err != nil {
		return nil, err
	}
	switch len(match) {
	case 0:
		return nil, nil
	case 1:
		return match[0], nil
	}
	ids := make([]int64, 0, len(match))
	for _, m := range match {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return nil, fmt.Errorf("found %d snapshots for talos %s (images %v); delete all but one (hcloud image delete ID) and retry", len(match), k, ids)
}

// published lists the finished snapshots of k: found by label, confirmed
// by the full schematic ID in the description.
func (b *Builder) published(ctx context.Context, k Key) ([]*hcloud.Image, error) {
	imgs, err := b.c.Image.AllWithOpts(ctx, hcloud.ImageListOpts{
		ListOpts:     hcloud.ListOpts{LabelSelector: findSelector(k)},
		Type:         []hcloud.ImageType{hcloud.ImageTypeSnapshot},
		Architecture: []hcloud.Architecture{hcloudArch(k.Arch)},
	})
	if err != nil {
		return nil, fmt.Errorf("look up the talos snapshot for %s: list images: %w", k, err)
	}
	var match []*hcloud.Image
	for _, img := range imgs {
		if descriptionSchematic(img.Description) == k.SchematicID && img.Labels[LabelTemporary] == "" {
			match = append(match, img)
		}
	}
	return match, nil
}

// Ensure returns a snapshot ID per requested key, reusing existing snapshots
// and building the missing ones concurrently (at most MaxParallel at once).
// A failed build does not stop the others; each cleans up after itself. The
// map holds every key that succeeded; the error joins every failure.
func (b *Builder) Ensure(ctx context.Context, reqs []Request) (map[Key]int64, error) {
	seen := map[Key]bool{}
	var todo []Request
	for _, r := range reqs {
		if err := r.Key.validate(); err != nil {
			return nil, fmt.Errorf("snapshot request: %w", err)
		}
		if !seen[r.Key] {
			seen[r.Key] = true
			todo = append(todo, r)
		}
	}
	out := make(map[Key]int64, len(todo))
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, b.opts.MaxParallel)
	for _, r := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				err := fmt.Errorf("snapshot %s: %w", r.Key, ctx.Err())
				b.emit(Event{Key: r.Key, Stage: StageFailed, Message: err.Error(), Err: err})
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			id, err := b.ensureOne(ctx, r)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[r.Key] = id
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// ensureOne reuses or builds the snapshot of one request.
func (b *Builder) ensureOne(ctx context.Context, r Request) (int64, error) {
	k := r.Key
	b.emit(Event{Key: k, Stage: StageLookup, Message: "looking for an existing snapshot"})
	img, err := b.Find(ctx, k)
	if err == nil && img != nil {
		img, err = b.waitAvailable(ctx, k, img)
		if err == nil {
			// A run killed after publishing the snapshot but before its
			// cleanup left the temporary server and key: only here can they
			// still be found, since no build of this key runs again.
			b.cleanKey(ctx, k)
			b.emit(Event{Key: k, Stage: StageReused, SnapshotID: img.ID, Fraction: 1,
				Message: fmt.Sprintf("reusing snapshot %d", img.ID)})
			return img.ID, nil
		}
	}
	if err != nil {
		b.emit(Event{Key: k, Stage: StageFailed, Message: err.Error(), Err: err})
		return 0, err
	}
	id, err := b.build(ctx, r)
	if err != nil {
		err = fmt.Errorf("build talos snapshot %s: %w", k, err)
		b.emit(Event{Key: k, Stage: StageFailed, Message: err.Error(), Err: err})
		return 0, err
	}
	b.emit(Event{Key: k, Stage: StageDone, SnapshotID: id, Fraction: 1, Message: fmt.Sprintf("snapshot %d ready", id)})
	return id, nil
}

// waitAvailable polls an image until Hetzner reports it available.
func (b *Builder) waitAvailable(ctx context.Context, k Key, img *hcloud.Image) (*hcloud.Image, error) {
	for img.Status != hcloud.ImageStatusAvailable {
		if img.Status != hcloud.ImageStatusCreating {
			return nil, fmt.Errorf("snapshot %d for %s is in state %q; delete it (hcloud image delete %d) and retry", img.ID, k, img.Status, img.ID)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for snapshot %d to become available: %w", img.ID, ctx.Err())
		case <-time.After(b.opts.PollInterval):
		}
		next, _, err := b.c.Image.GetByID(ctx, img.ID)
		if err != nil {
			return nil, fmt.Errorf("wait for snapshot %d to become available: %w", img.ID, err)
		}
		if next == nil {
			return nil, fmt.Errorf("snapshot %d disappeared while it was being created; retry to build it again", img.ID)
		}
		img = next
	}
	return img, nil
}

func hcloudArch(arch string) hcloud.Architecture {
	if arch == "arm64" {
		return hcloud.ArchitectureARM
	}
	return hcloud.ArchitectureX86
}
