//go:build linux || darwin

package kubebin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The sha256 is computed once per file identity, and a file rewritten in
// place with its size and modification time kept is still caught (by its
// change time).
func TestVerifyHashesOncePerFile(t *testing.T) {
	// Remember even a file just built; the rewrite below waits for the
	// file system's clock to move on instead.
	old := racyWindow
	racyWindow = 0

	t.Cleanup(func() { racyWindow = old })

	bins, _, _, _ := built(t)

	count := func() int { hashes.Lock(); defer hashes.Unlock(); return hashes.n }
	before := count()

	for range 3 {
		if _, _, err := bins.Verify(context.Background(), "kube-scheduler"); err != nil {
			t.Fatal(err)
		}
	}

	if n := count() - before; n != 0 {
		t.Errorf("three Verifys of a binary hashed at its build read it %d times, want 0", n)
	}

	st, err := os.Stat(bins.Scheduler)
	if err != nil {
		t.Fatal(err)
	}

	waitClockTick(t, bins.Scheduler)

	was := []byte(contents(t, bins.Scheduler))
	forged := append([]byte("X"), was[1:]...)

	f, err := os.OpenFile(bins.Scheduler, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := f.WriteAt(forged, 0); err != nil {
		t.Fatal(err)
	}

	_ = f.Close()

	if err := os.Chtimes(bins.Scheduler, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}

	_, rebuilt, err := bins.Verify(context.Background(), "kube-scheduler")
	if err != nil || !strings.Contains(rebuilt, "rebuilt kube-scheduler") {
		t.Errorf("Verify of a kube-scheduler rewritten in place = %q, %v; want it rebuilt", rebuilt, err)
	}

	if contents(t, bins.Scheduler) != string(was) {
		t.Errorf("kube-scheduler holds %q after Verify, want the build's %q", contents(t, bins.Scheduler), was)
	}
}

// waitClockTick waits until the file system's clock has moved on from
// path's last change: a file written in its directory after it gets a
// later modification time than the first one written there now.
func waitClockTick(t *testing.T, path string) {
	t.Helper()

	probe := filepath.Join(filepath.Dir(path), ".tick")
	defer os.Remove(probe)

	touch := func() time.Time {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}

		st, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}

		return st.ModTime()
	}

	first := touch()

	for deadline := time.Now().Add(10 * time.Second); !touch().After(first); {
		if time.Now().After(deadline) {
			t.Fatal("the file system's clock did not move on within 10 s")
		}

		time.Sleep(time.Millisecond)
	}
}
