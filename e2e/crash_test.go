package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

var (
	crashPoints = flag.Int("crash.points", 8, "how many times TestCrashResume kills apply with SIGKILL (3 with -short)")
	crashSeed   = flag.Uint64("crash.seed", 1, "PRNG seed of the kill points (0 = from the clock; the seed used is logged)")
)

// TestCrashResume kills "ohmytalos apply" with SIGKILL at random points
// against a standalone sandbox, resumes it, and proves the end state is
// exactly the planned one: no duplicate, no temporary server or key left,
// a readable state, etcd bootstrapped once, and a final apply that
// creates nothing.
func TestCrashResume(t *testing.T) {
	t.Parallel()
	points := *crashPoints
	if testing.Short() {
		points = min(points, 3)
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("kill points: %d, seed %d (rerun with -crash.seed=%d)", points, seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	bin := buildBinary(t)
	for round, left := 1, points; left > 0; round++ {
		t.Logf("round %d: a fresh sandbox and cluster, up to %d kills", round, left)
		left -= crashRound(t, bin, rng, left)
	}
}

// crashRound kills apply up to maxKills times against a fresh standalone
// sandbox until a run finishes by itself, resumes it to the end, and
// checks the result. It returns how many kills it made (at least one, so
// rounds always end).
func crashRound(t *testing.T, bin string, rng *rand.Rand, maxKills int) int {
	sb := startServe(t, bin, "--action-duration", "100ms", "--boot-delay", "500ms")
	dir, keyFile := seedDir(t)
	env := sb.environ("OHMYTALOS_AGE_KEY_FILE="+keyFile, "NO_COLOR=1")

	var all []engine.Event
	kills := 0
	for i := 1; kills < maxKills; i++ {
		p := startCLI(t, bin, dir, env, "apply", "--json")
		where := killWhen(rng)
		finished := where.wait(p)
		if !finished {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
			kills++
		}
		evs := p.events()
		all = append(all, evs...)
		last := "nothing"
		if len(evs) > 0 {
			e := evs[len(evs)-1]
			last = fmt.Sprintf("%s %s %s %s", e.Step, e.Kind, e.Action, e.Resource)
		}
		t.Logf("run %d: %s; %d events, last: %s; finished by itself: %v", i, where, len(evs), last, finished)
		if finished {
			if p.err != nil {
				t.Fatalf("run %d failed on its own: %v\n%s%s", i, p.err, p.out.String(), p.errb.String())
			}
			break
		}
	}
	kills = max(kills, 1)

	final := startCLI(t, bin, dir, env, "apply", "--json")
	if err := final.wait(3 * time.Minute); err != nil {
		t.Fatalf("resumed apply failed: %v\nstdout:\n%s\nstderr:\n%s", err, final.out.String(), final.errb.String())
	}
	all = append(all, final.events()...)

	c := hcloud.NewClient(hcloud.WithEndpoint(sb.env["HCLOUD_ENDPOINT"]), hcloud.WithToken(sb.env["HCLOUD_TOKEN"]))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want := inventory{networks: 1, placementGroups: 2, firewalls: 1, loadBalancers: 1, servers: 5, snapshots: 2}
	checkInventory(ctx, t, c, want)

	st := checkState(t, filepath.Join(dir, ".ohmytalos", "demo"), "demo", keyFile)

	// Nothing left to create: neither a plain apply nor any Hetzner step
	// forced to run again.
	for _, args := range [][]string{{"apply", "--json"}, {"apply", "--json", "--only", "images"},
		{"apply", "--json", "--only", "network"}, {"apply", "--json", "--only", "pools"}, {"apply", "--json", "--only", "servers"}} {
		p := startCLI(t, bin, dir, env, args...)
		if err := p.wait(2 * time.Minute); err != nil {
			t.Fatalf("ohmytalos %v after the cluster is up: %v\n%s", args, err, p.errb.String())
		}
		for _, ev := range p.events() {
			if ev.Kind == engine.KindResource && ev.Action == engine.ActionCreate {
				t.Errorf("ohmytalos %v created %s again (%s)", args, ev.Resource, ev.Message)
			}
		}
	}
	checkInventory(ctx, t, c, want)

	// etcd: bootstrapped at most once in what the runs printed, and every
	// control plane sees the same three voting members over the wire.
	boots := 0
	for _, ev := range all {
		if ev.Action == "bootstrap" && ev.Message == "etcd bootstrapped" {
			boots++
		}
	}
	if boots > 1 {
		t.Errorf("the runs report %d etcd bootstraps, want at most 1", boots)
	}
	checkEtcd(ctx, t, c, st, 3)
	return kills
}

// killPoint is when a run is killed: after a delay, or a short delay
// after its n-th step of progress (see progressEvents).
type killPoint struct {
	afterEvents int
	delay       time.Duration
}

func (k killPoint) String() string {
	if k.afterEvents > 0 {
		return fmt.Sprintf("kill %v after progress event %d", k.delay.Round(time.Millisecond), k.afterEvents)
	}
	return fmt.Sprintf("kill after %v", k.delay.Round(time.Millisecond))
}

// killWhen draws a kill point: during start-up and the resume logic,
// shortly after a few steps of new work (which reaches the later steps
// however long the images took), or up to 2.5 s into the new work (the
// image builds' rescue, SSH, write and snapshot stages on a fresh run).
func killWhen(rng *rand.Rand) killPoint {
	switch r := rng.IntN(20); {
	case r < 5:
		return killPoint{delay: 20*time.Millisecond + time.Duration(rng.Int64N(int64(400*time.Millisecond)))}
	case r < 13:
		return killPoint{afterEvents: 1 + rng.IntN(6), delay: time.Duration(rng.Int64N(int64(300 * time.Millisecond)))}
	default:
		return killPoint{afterEvents: 1, delay: time.Duration(rng.Int64N(int64(2500 * time.Millisecond)))}
	}
}

// wait blocks until the kill point or the end of the run; it reports
// whether the run ended by itself.
func (k killPoint) wait(p *applyProc) bool {
	deadline := time.Now().Add(k.delay)
	if k.afterEvents > 0 {
		deadline = time.Now().Add(time.Minute)
	}
	for {
		select {
		case <-p.done:
			return true
		case <-time.After(5 * time.Millisecond):
		}
		if k.afterEvents > 0 && progressEvents(p.events()) >= k.afterEvents {
			k.afterEvents = 0
			deadline = time.Now().Add(k.delay)
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// progressEvents counts new work: resources created, changed or waited
// for, and steps finished; reuse of what an earlier run made is not
// progress.
func progressEvents(evs []engine.Event) int {
	n := 0
	for _, ev := range evs {
		if (ev.Kind == engine.KindResource && ev.Action != engine.ActionReuse) || ev.Kind == engine.KindDone {
			n++
		}
	}
	return n
}

// TestCrashDuringImageCleanup kills apply the moment an image build
// starts deleting its temporary server and key, after its snapshot was
// published: the window where the snapshot is final but the temporary
// resources still exist. The resumed apply reuses the snapshot and must
// still leave no temporary server or key behind.
func TestCrashDuringImageCleanup(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	sb := startServe(t, bin, "--action-duration", "200ms", "--boot-delay", "300ms")
	dir, keyFile := seedDir(t)
	env := sb.environ("OHMYTALOS_AGE_KEY_FILE="+keyFile, "NO_COLOR=1")

	p := startCLI(t, bin, dir, env, "apply", "--json")
	killed := false
	deadline := time.Now().Add(2 * time.Minute)
	for !killed && time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("apply ended before any image cleanup started: %v\n%s", p.err, p.errb.String())
		case <-time.After(time.Millisecond):
		}
		for _, ev := range p.events() {
			if ev.Step == "images" && strings.HasPrefix(ev.Message, "cleanup: deleting") {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				<-p.done
				killed = true
				t.Logf("killed at %s %q", ev.Resource, ev.Message)
				break
			}
		}
	}
	if !killed {
		t.Fatal("no image cleanup seen within 2 minutes")
	}
	final := startCLI(t, bin, dir, env, "apply", "--json")
	if err := final.wait(3 * time.Minute); err != nil {
		t.Fatalf("resumed apply failed: %v\n%s", err, final.errb.String())
	}
	c := hcloud.NewClient(hcloud.WithEndpoint(sb.env["HCLOUD_ENDPOINT"]), hcloud.WithToken(sb.env["HCLOUD_TOKEN"]))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	checkInventory(ctx, t, c, inventory{networks: 1, placementGroups: 2, firewalls: 1, loadBalancers: 1, servers: 5, snapshots: 2})
}

// seedDir is a working directory holding the seed spec as ohmytalos.yaml,
// and the age key file apply will create there.
func seedDir(t *testing.T) (dir, keyFile string) {
	t.Helper()
	dir = t.TempDir()
	spec, err := os.ReadFile(seedPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ohmytalos.yaml"), spec, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "age.key")
}
