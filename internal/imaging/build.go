package imaging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"golang.org/x/crypto/ssh"
)

// cleanupTimeout bounds the deletion of temporary resources, which runs on
// a fresh context so that Ctrl-C still cleans up.
const cleanupTimeout = 2 * time.Minute

// cleanups is a stack of deferred deletions, run newest first.
type cleanups []func(context.Context) error

// build makes the snapshot of one request. Every created resource pushes its
// deletion before the next step, and all run at the end whatever happened.
func (b *Builder) build(ctx context.Context, r Request) (id int64, err error) {
	k := r.Key
	var undo cleanups
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if len(undo) > 0 {
			b.emit(Event{Key: k, Stage: StageCleanup, Message: "deleting the temporary server and key"})
		}
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			if cerr := undo[i](cctx); cerr != nil {
				errs = append(errs, cerr)
			}
		}
		if cerr := errors.Join(errs...); cerr != nil {
			cerr = fmt.Errorf("clean up temporary resources (the next run of this image removes them, or run the sweep): %w", cerr)
			b.emit(Event{Key: k, Stage: StageCleanup, Message: cerr.Error(), Err: cerr})
			// A published snapshot stays a success: the leftovers carry
			// this key's labels, and cleanKey or build removes them next time.
			if err != nil {
				err = errors.Join(err, cerr)
			}
		}
	}()

	// An interrupted earlier build of this key may have left a server
	// behind; a live build of the same key elsewhere keeps its lease.
	if _, err := b.sweep(ctx, keySelector(k), false); err != nil {
		return 0, fmt.Errorf("remove leftovers of an earlier build: %w", err)
	}
	// Another run may have finished this key meanwhile: never make two.
	if img, err := b.Find(ctx, k); err != nil {
		return 0, err
	} else if img != nil {
		img, err = b.waitAvailable(ctx, k, img)
		if err != nil {
			return 0, err
		}
		return img.ID, nil
	}

	cmd, err := writeCommand(r.ImageURL)
	if err != nil {
		return 0, err
	}
	location := r.Location
	if location == "" {
		location = defaultLocation
	}
	name := resourceName(k)
	if b.opts.OnStart != nil {
		if err := b.opts.OnStart(name); err != nil {
			return 0, fmt.Errorf("record the build %s before it starts: %w", name, err)
		}
	}
	ls := b.startLease(ctx, k, name)
	defer ls.end() // before the cleanups above: no renewal of deleted resources
	labels := ls.labels()

	// 1. Temporary SSH key.
	b.emit(Event{Key: k, Stage: StageKey, Message: "registering a temporary ssh key"})
	signer, pub, err := newSSHKey()
	if err != nil {
		return 0, err
	}
	key, _, err := b.c.SSHKey.Create(ctx, hcloud.SSHKeyCreateOpts{Name: name, PublicKey: pub, Labels: labels})
	if hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		key, err = b.adoptKey(ctx, name, pub, err)
	}
	if err != nil {
		return 0, fmt.Errorf("register temporary ssh key %s: %w", name, err)
	}
	ls.holdKey(key)
	undo = append(undo, func(ctx context.Context) error {
		if _, err := b.c.SSHKey.Delete(ctx, key); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
			return fmt.Errorf("delete temporary ssh key %s (%d): %w", key.Name, key.ID, err)
		}
		return nil
	})

	// 2. Temporary server, not started.
	st, err := b.chooseServerType(ctx, k.Arch, location, r.ServerType)
	if err != nil {
		return 0, err
	}
	debian, err := b.debianImage(ctx, k.Arch)
	if err != nil {
		return 0, err
	}
	b.emit(Event{Key: k, Stage: StageServer, Message: fmt.Sprintf("creating temporary server %s (%s in %s)", name, st.Name, location)})
	res, _, err := b.c.Server.Create(ctx, hcloud.ServerCreateOpts{
		Name:             name,
		ServerType:       &hcloud.ServerType{ID: st.ID, Name: st.Name},
		Image:            &hcloud.Image{ID: debian.ID},
		Location:         &hcloud.Location{Name: location},
		SSHKeys:          []*hcloud.SSHKey{key}, // else Hetzner mails a root password
		StartAfterCreate: hcloud.Ptr(false),
		Labels:           labels,
	})
	if hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		res, err = b.adoptServer(ctx, k, name, err)
	}
	server := res.Server
	if server != nil {
		ls.holdServer(server)
		undo = append(undo, func(ctx context.Context) error { return b.deleteServer(ctx, server) })
	}
	if err != nil {
		return 0, fmt.Errorf("create temporary server %s (%s in %s): %w", name, st.Name, location, err)
	}
	if err := b.wait(ctx, k, StageServer, append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
		return 0, fmt.Errorf("create temporary server %s: %w", name, err)
	}

	// 3. Rescue system with the key, then boot.
	b.emit(Event{Key: k, Stage: StageRescue, Message: "enabling the rescue system"})
	err = b.act(ctx, k, StageRescue, "enable rescue on temporary server "+name, func() (*hcloud.Action, error) {
		rescue, _, err := b.c.Server.EnableRescue(ctx, server, hcloud.ServerEnableRescueOpts{
			Type: hcloud.ServerRescueTypeLinux64, SSHKeys: []*hcloud.SSHKey{key},
		})
		return rescue.Action, err
	})
	if err != nil {
		return 0, err
	}
	b.emit(Event{Key: k, Stage: StageBoot, Message: "booting into the rescue system"})
	err = b.act(ctx, k, StageBoot, "power on temporary server "+name, func() (*hcloud.Action, error) {
		on, _, err := b.c.Server.Poweron(ctx, server)
		return on, err
	})
	if err != nil {
		return 0, err
	}

	// 4. SSH in and write the image.
	ip, err := b.publicIPv4(ctx, server)
	if err != nil {
		return 0, err
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(b.opts.SSHPort))
	b.emit(Event{Key: k, Stage: StageSSH, Message: "connecting to " + addr})
	client, err := b.dialRescue(ctx, addr, signer, func(n int, err error) {
		b.emit(Event{Key: k, Stage: StageSSH, Message: fmt.Sprintf("rescue system not ready yet (attempt %d): %v", n, err)})
	})
	if err != nil {
		return 0, err
	}
	defer func() { _ = client.Close() }()
	if err := b.writeImage(ctx, k, client, r.ImageURL, cmd); err != nil {
		return 0, err
	}

	// 5. Power off, snapshot, publish.
	b.emit(Event{Key: k, Stage: StageShutdown, Message: "powering off"})
	_ = client.Close()
	err = b.act(ctx, k, StageShutdown, "power off temporary server "+name, func() (*hcloud.Action, error) {
		off, _, err := b.c.Server.Poweroff(ctx, server)
		return off, err
	})
	if err != nil {
		return 0, err
	}
	return b.snapshot(ctx, k, server, ls, &undo)
}

// writeImage discards the disk, runs the download pipeline with progress
// events, and syncs.
func (b *Builder) writeImage(ctx context.Context, k Key, client *ssh.Client, imageURL, cmd string) error {
	if res, err := run(ctx, client, discardCommand, nil); err != nil {
		return fmt.Errorf("prepare /dev/sda: %w", err)
	} else if res.status != 0 {
		b.emit(Event{Key: k, Stage: StageWrite, Message: "blkdiscard failed, the snapshot will be larger: " + lastLines(res.stderr, 1)})
	}
	total, err := uncompressedSize(ctx, b.opts.HTTPClient, imageURL)
	if err != nil {
		total = 0 // progress without a fraction
	}
	b.emit(Event{Key: k, Stage: StageWrite, Total: total, Message: "writing the talos image to /dev/sda"})
	res, err := run(ctx, client, cmd, func(n int64) {
		e := Event{Key: k, Stage: StageWrite, Bytes: n, Total: total, Message: "writing the talos image to /dev/sda"}
		if total > 0 {
			e.Fraction = min(float64(n)/float64(total), 1)
		}
		b.emit(e)
	})
	if err != nil {
		return fmt.Errorf("write the image: %w", err)
	}
	if res.status != 0 {
		return explainWrite(imageURL, res)
	}
	if res, err := run(ctx, client, syncCommand, nil); err != nil {
		return fmt.Errorf("sync /dev/sda: %w", err)
	} else if res.status != 0 {
		return fmt.Errorf("sync /dev/sda failed (exit %d): %s", res.status, lastLines(res.stderr, 2))
	}
	return nil
}

// snapshot creates the image with temporary labels, waits until it is
// available and only then gives it the labels Find looks for, so an
// interrupted snapshot is never mistaken for a finished one.
func (b *Builder) snapshot(ctx context.Context, k Key, server *hcloud.Server, ls *lease, undo *cleanups) (int64, error) {
	b.emit(Event{Key: k, Stage: StageSnapshot, Message: "creating the snapshot"})
	var res hcloud.ServerCreateImageResult
	err := b.whileLocked(ctx, func() (err error) {
		res, _, err = b.c.Server.CreateImage(ctx, server, &hcloud.ServerCreateImageOpts{
			Type:        hcloud.ImageTypeSnapshot,
			Description: hcloud.Ptr(Description(k)),
			Labels:      ls.labels(),
		})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("create snapshot of temporary server %s: %w", server.Name, err)
	}
	img := res.Image
	ls.holdImage(img)
	published := false
	*undo = append(*undo, func(ctx context.Context) error {
		if published {
			return b.deleteOtherSnapshots(ctx, k, img.ID, ls.run)
		}
		if _, err := b.c.Image.Delete(ctx, img); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
			return fmt.Errorf("delete unfinished snapshot %d: %w", img.ID, err)
		}
		return nil
	})
	if err := b.wait(ctx, k, StageSnapshot, res.Action); err != nil {
		return 0, fmt.Errorf("create snapshot of temporary server %s: %w", server.Name, err)
	}
	cur, _, err := b.c.Image.GetByID(ctx, img.ID)
	if err != nil {
		return 0, fmt.Errorf("read snapshot %d: %w", img.ID, err)
	}
	if cur == nil {
		return 0, fmt.Errorf("snapshot %d vanished after it was created; retry", img.ID)
	}
	if cur, err = b.waitAvailable(ctx, k, cur); err != nil {
		return 0, err
	}
	ls.releaseImage()
	// A concurrent build of k (another cluster, same schematic) may have
	// published first: use its snapshot; the cleanup deletes ours.
	if other, err := b.Find(ctx, k); err != nil {
		return 0, err
	} else if other != nil {
		b.emit(Event{Key: k, Stage: StageSnapshot, Message: fmt.Sprintf("another build published snapshot %d meanwhile; using it", other.ID)})
		return other.ID, nil
	}
	if _, _, err := b.c.Image.Update(ctx, cur, hcloud.ImageUpdateOpts{Labels: b.finalLabels(k)}); err != nil {
		return 0, fmt.Errorf("label snapshot %d: %w", img.ID, err)
	}
	published = true
	return b.settleDuplicates(ctx, k, cur.ID)
}

// settleDuplicates resolves two builds of k that published at the same
// moment: every build keeps the snapshot with the lowest ID, and the others
// delete their own, so one snapshot per key remains.
func (b *Builder) settleDuplicates(ctx context.Context, k Key, own int64) (int64, error) {
	all, err := b.published(ctx, k)
	if err != nil {
		return 0, err
	}
	keep := own
	for _, img := range all {
		keep = min(keep, img.ID)
	}
	if keep == own {
		return own, nil
	}
	b.emit(Event{Key: k, Stage: StageSnapshot, Message: fmt.Sprintf("another build published snapshot %d at the same time; using it and deleting %d", keep, own)})
	if _, err := b.c.Image.Delete(ctx, &hcloud.Image{ID: own}); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
		return 0, fmt.Errorf("delete duplicate snapshot %d of %s (snapshot %d is kept): %w", own, k, keep, err)
	}
	return keep, nil
}

// wait waits for actions, reporting their progress as fractions.
func (b *Builder) wait(ctx context.Context, k Key, stage string, actions ...*hcloud.Action) error {
	return b.actions.wait(ctx, func(a *hcloud.Action) error {
		switch a.Status {
		case hcloud.ActionStatusError:
			return a.Error()
		case hcloud.ActionStatusRunning:
			// The fraction carries the percentage; renderers print it once.
			b.emit(Event{Key: k, Stage: stage, Fraction: float64(a.Progress) / 100, Message: a.Command})
		}
		return nil
	}, actions...)
}

func (b *Builder) publicIPv4(ctx context.Context, server *hcloud.Server) (string, error) {
	if server.PublicNet.IPv4.IP != nil && !server.PublicNet.IPv4.IsUnspecified() {
		return server.PublicNet.IPv4.IP.String(), nil
	}
	cur, _, err := b.c.Server.GetByID(ctx, server.ID)
	if err != nil {
		return "", fmt.Errorf("read temporary server %s: %w", server.Name, err)
	}
	if cur == nil || cur.PublicNet.IPv4.IP == nil || cur.PublicNet.IPv4.IsUnspecified() {
		return "", fmt.Errorf("temporary server %s has no public IPv4; the builder needs one to reach the rescue system over SSH", server.Name)
	}
	return cur.PublicNet.IPv4.IP.String(), nil
}

// deleteServer asks for a server's deletion without waiting for the
// delete_server action: nothing needs the server gone, and waiting only
// lengthens the build. If the action fails, the server keeps its
// temporary labels and the next per-key sweep (build, cleanKey) or Sweep
// deletes it once its lease has run out.
func (b *Builder) deleteServer(ctx context.Context, server *hcloud.Server) error {
	if _, _, err := b.c.Server.DeleteWithResult(ctx, server); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
		return fmt.Errorf("delete temporary server %s (%d): %w", server.Name, server.ID, err)
	}
	return nil
}

// resourceName names a build's key and server: a valid hostname, unique per run.
func resourceName(k Key) string {
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("ohmytalos-image-%s-%s-%s", k.Arch, buildKey(k)[:8], hex.EncodeToString(rnd[:]))
}
