package imaging

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// Leases. Two processes may build the same Key at once (two clusters using
// the same schematic), so a sweep by build key alone would delete another
// build's live server. Every temporary resource therefore carries
// LabelLease, the Unix time (seconds) until which its build claims it; a
// running build pushes that time forward every LeaseRefresh. Sweeps delete
// only resources whose lease has passed (or that carry none, as builds
// before leases left them); Sweep with force deletes live ones too.

// LabelLease holds the Unix time in seconds until which a build claims a
// temporary resource.
const LabelLease = "ohmytalos.io/lease"

// LabelRun names the build (its resource name) that made a temporary
// resource, so a build tells its own resources from another live build's.
const LabelRun = "ohmytalos.io/image-build"

const (
	defaultLeaseDuration = 10 * time.Minute
)

// leaseExpired reports whether labels carry no lease, or one that ended
// before now.
func leaseExpired(labels map[string]string, now time.Time) bool {
	until, ok := leaseUntil(labels)
	return !ok || !until.After(now)
}

// reclaimable reports whether a temporary resource's build is over: its
// lease ran out, or it belongs to a run Options.Ended knows has ended.
func (b *Builder) reclaimable(labels map[string]string, now time.Time) bool {
	if leaseExpired(labels, now) {
		return true
	}
	run, ok := labels[LabelRun]
	return ok && b.opts.Ended != nil && b.opts.Ended(run)
}

// leaseUntil parses LabelLease.
func leaseUntil(labels map[string]string) (time.Time, bool) {
	v, ok := labels[LabelLease]
	if !ok {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// lease keeps the LabelLease of one build's temporary resources in the
// future while the build runs.
type lease struct {
	b      *Builder
	k      Key
	run    string
	mu     sync.Mutex // held during a refresh round and while resources change
	until  time.Time
	keys   []*hcloud.SSHKey
	server *hcloud.Server
	image  *hcloud.Image
	stop   chan struct{}
	done   chan struct{}
}

// startLease claims a lease for a build of k and refreshes it until end.
func (b *Builder) startLease(ctx context.Context, k Key, run string) *lease {
	l := &lease{b: b, k: k, run: run, until: b.leaseDeadline(), stop: make(chan struct{}), done: make(chan struct{})}
	go l.refreshLoop(ctx)
	return l
}

func (b *Builder) leaseDeadline() time.Time {
	return b.opts.Now().Add(b.opts.LeaseDuration).Truncate(time.Second)
}

// labels returns the build's temporary labels with the current lease.
func (l *lease) labels() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.labelsLocked()
}

func (l *lease) labelsLocked() map[string]string {
	m := l.b.temporaryLabels(l.k)
	m[LabelLease] = strconv.FormatInt(l.until.Unix(), 10)
	m[LabelRun] = l.run
	return m
}

// holdKey, holdServer and holdImage add a resource to the refreshed set;
// releaseImage removes the image before it is published, waiting for a
// refresh round in flight so the round cannot overwrite the final labels.
func (l *lease) holdKey(k *hcloud.SSHKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, k)
}

func (l *lease) holdServer(s *hcloud.Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.server = s
}

func (l *lease) holdImage(img *hcloud.Image) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.image = img
}

func (l *lease) releaseImage() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.image = nil
}

// end stops the refreshing and waits for a round in flight.
func (l *lease) end() {
	close(l.stop)
	<-l.done
}

func (l *lease) refreshLoop(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.b.opts.LeaseRefresh)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if err := l.refresh(ctx); err != nil {
				l.b.emit(Event{Key: l.k, Stage: StageCleanup, Err: err,
					Message: err.Error() + "; if the lease runs out, another build's sweep may delete this build's server"})
			}
		}
	}
}

// refresh pushes the lease forward on every held resource.
func (l *lease) refresh(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until = l.b.leaseDeadline()
	labels := l.labelsLocked()
	for _, k := range l.keys {
		if _, _, err := l.b.c.SSHKey.Update(ctx, k, hcloud.SSHKeyUpdateOpts{Labels: labels}); err != nil {
			return fmt.Errorf("renew the lease of temporary ssh key %s: %w", k.Name, err)
		}
	}
	if l.server != nil {
		if _, _, err := l.b.c.Server.Update(ctx, l.server, hcloud.ServerUpdateOpts{Labels: labels}); err != nil {
			return fmt.Errorf("renew the lease of temporary server %s: %w", l.server.Name, err)
		}
	}
	if l.image != nil {
		if _, _, err := l.b.c.Image.Update(ctx, l.image, hcloud.ImageUpdateOpts{Labels: labels}); err != nil {
			return fmt.Errorf("renew the lease of unfinished snapshot %d: %w", l.image.ID, err)
		}
	}
	return nil
}
