package kubebin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// sumsFile is the cache's record of each binary's sha256, written when it
// is built, in sha256sum's format ("HEX  bin/NAME"), so that
// `sha256sum -c SHA256SUMS` in the cache directory checks it too. It sits
// beside the stamp rather than in it: an older ohmytalos sharing the cache
// compares the whole stamp file, and would delete and rebuild every binary
// on seeing lines it does not know.
const sumsFile = "SHA256SUMS"

// wanted is what Verify checks a program's binary against before it runs.
type wanted struct {
	// sum is the sha256 recorded when the cache's binary was built.
	sum string
	// from is, for a binary the environment names, the variable and its
	// directory ("KUBEBUILDER_ASSETS=/dir"); key is the file as it was
	// when its --version was checked.
	from string
	key  fileKey
}

// Verify returns the path of the named program (etcd, kube-apiserver,
// kube-controller-manager or kube-scheduler) to run now, once it is the
// binary the cache recorded when it was built: call it before every
// start.
//
// A cache binary that differs from its recorded sha256 (a wrapper script
// put in its place, a truncated copy) or is gone is never returned: it is
// rebuilt first (Ensure with the Options that made b), and rebuilt says
// which and why. A binary the environment names (BinDirEnv, AssetsEnv) is
// the user's and is not rebuilt: once the file has changed since its
// --version was checked, it is checked again, and an error names the
// variable, the binary and what it reported.
//
// Hashing ~300 MB on every start of the ~100 control planes a test suite
// runs would cost minutes of CPU, so a file's sha256 is computed once per
// process for its identity: device, inode, size, modification and change
// time (fileKey). Any write, truncation, rename or copy over the file
// changes its change time (ctime), which no system call sets back, so a
// changed binary is hashed again before it runs; a file changed in the
// seconds before it was hashed is hashed at every check (racyWindow).
// Where there is no change time to read (not Linux or macOS), every
// check hashes. What is left is the moment between this check and the
// exec: closing it would need exec by file descriptor (fexecve), which
// os/exec lacks and macOS does not have. Whoever can write to the cache
// in that moment can write to the user's other programs too; the check
// keeps a corrupted, stale or swapped binary from running, it does not
// race a local attacker.
func (b Binaries) Verify(ctx context.Context, name string) (path, rebuilt string, err error) {
	i := slices.IndexFunc(programs, func(p program) bool { return p.name == name })
	if i < 0 {
		return "", "", fmt.Errorf("kubebin: no program %q; the programs are etcd, kube-apiserver, kube-controller-manager and kube-scheduler", name)
	}

	p := programs[i]
	path = *b.path(p)

	w, ok := b.want[name]
	if !ok || path == "" {
		return "", "", fmt.Errorf("kubebin: %s (%q) was not found or checked by kubebin.Ensure, so it is not run: pass the Binaries Ensure returns", name, path)
	}

	if w.from != "" {
		return path, "", verifyExternal(ctx, path, name, w)
	}

	why := mismatch(path, w.sum)
	if why == "" {
		return path, "", nil
	}

	// Ensure checks every binary against the record again and rebuilds the
	// ones that fail, under the lock; another process may have rebuilt it.
	o := b.o
	o.Status = nil

	bb := Start(ctx, o)
	defer bb.Stop()

	nb, err := bb.Wait(ctx)
	if err != nil {
		return "", "", fmt.Errorf("%s is not run: %s; rebuilding it failed: %w", name, why, err)
	}

	path = *nb.path(p)

	if r := bb.rebuiltWhy(name); r != "" {
		rebuilt = fmt.Sprintf("rebuilt %s %s: %s", name, p.version(), r)
	}

	return path, rebuilt, nil
}

// verifyExternal checks the user's binary again when the file has
// changed since its --version was checked.
func verifyExternal(ctx context.Context, path, name string, w wanted) error {
	if k, err := statKey(path); err == nil && k.valid && k == w.key {
		return nil
	}

	if err := checkVersion(ctx, path, name); err != nil {
		return fmt.Errorf("%s: %s changed since its version was checked, and is not run: %w", w.from, name, err)
	}

	return nil
}

// mismatch is why the binary at path is not the one whose sha256 is want,
// or "" when it is.
func mismatch(path, want string) string {
	got, err := fileSum(path)

	switch {
	case errors.Is(err, os.ErrNotExist):
		return path + " is missing"
	case err != nil:
		return fmt.Sprintf("%s cannot be checked: %v", path, err)
	case want == "":
		return fmt.Sprintf("no sha256 is recorded for %s (a cache built by an older ohmytalos)", path)
	case got == want:
		return ""
	}

	what := "is not the binary built there"
	if head, _ := readHead(path, 2); string(head) == "#!" {
		what = "is a script, not the binary built there"
	}

	return fmt.Sprintf("%s %s: its sha256 is %s, the one recorded at its build %s", path, what, got[:16], want[:min(16, len(want))])
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	buf := make([]byte, n)
	n, err = io.ReadFull(f, buf)

	return buf[:n], err
}

// racyWindow: a file changed this shortly before it is read may be changed
// again within the same tick of the file system's clock (a few
// milliseconds, a second or two on some file systems) without its change
// time moving, as git's "racy git" note describes. Such a key is not
// remembered, so the file is read again at each check until it is older.
var racyWindow = 2 * time.Second

// sums is the memo of fileSum: a path's sha256 for the file's identity.
var sums = struct {
	sync.Mutex
	m map[string]*summed
}{m: map[string]*summed{}}

type summed struct {
	mu  sync.Mutex // held while the file is hashed
	key fileKey
	sum string
}

// hashes counts the files fileSum has read (a test checks the memo).
var hashes struct {
	sync.Mutex
	n int
}

// fileSum is the hex sha256 of the regular file at path, read once per
// process for each identity of the file (see Verify). The identity is
// taken from the descriptor that is hashed, before and after, so a file
// written meanwhile is not remembered.
func fileSum(path string) (string, error) {
	sums.Lock()
	e := sums.m[path]
	if e == nil {
		e = &summed{}
		sums.m[path] = e
	}
	sums.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()

	// Not opened unless regular: opening a FIFO would block.
	if st, err := os.Stat(path); err != nil {
		return "", err
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}

	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()

	before, err := fdKey(f)
	if err != nil {
		return "", err
	}

	if before.valid && before == e.key {
		return e.sum, nil
	}

	start := time.Now()

	hashes.Lock()
	hashes.n++
	hashes.Unlock()

	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}

	sum := hex.EncodeToString(h.Sum(nil))

	if after, err := fdKey(f); err == nil && after == before {
		e.key, e.sum = before.settled(start), sum
	} else {
		e.key = fileKey{}
	}

	return sum, nil
}

// fdKey is the identity of the open regular file f.
func fdKey(f *os.File) (fileKey, error) {
	st, err := f.Stat()
	if err != nil {
		return fileKey{}, err
	}

	if !st.Mode().IsRegular() {
		return fileKey{}, fmt.Errorf("%s is not a regular file", f.Name())
	}

	return keyOf(st), nil
}

// statKey is the identity of the file at path, to be remembered (none
// when it changed too recently: settled).
func statKey(path string) (fileKey, error) {
	now := time.Now()

	st, err := os.Stat(path)
	if err != nil {
		return fileKey{}, err
	}

	return keyOf(st).settled(now), nil
}

// readSums reads the cache's SHA256SUMS: program name to hex sha256.
func readSums(dir string) map[string]string {
	out := map[string]string{}

	data, err := os.ReadFile(filepath.Join(dir, sumsFile))
	if err != nil {
		return out
	}

	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || len(f[0]) != sha256.Size*2 {
			continue
		}

		if name, ok := strings.CutPrefix(strings.TrimPrefix(f[1], "*"), "bin/"); ok {
			out[name] = f[0]
		}
	}

	return out
}

// writeSums records sums (program name to hex sha256) in the cache.
func writeSums(dir string, sums map[string]string) error {
	var b strings.Builder

	for _, p := range programs {
		if s, ok := sums[p.name]; ok {
			fmt.Fprintf(&b, "%s  bin/%s\n", s, p.name)
		}
	}

	return writeAtomic(filepath.Join(dir, sumsFile), []byte(b.String()))
}
