package spec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// commented is an operator's spec file with comments everywhere a person
// puts them.
const commented = `# Production cluster. Owner: ops@example.com
name: demo # never rename: resources are found by it
talos: {version: v1.13.9}
kubernetes: {version: "1.36.3"}
location: nbg1
network:
  # Shared with the VPN: keep 10.0.0.0/16.
  cidr: 10.0.0.0/16
  zone: eu-central
controlPlane:
  serverType: cpx22
  count: 3 # odd, for etcd
  subnet: 10.0.1.0/24
  vip: 10.0.1.100
pools:
  # The app nodes.
  - name: worker
    serverType: cpx32
    count: 2 # scale with the traffic
    subnet: 10.0.2.0/24
    loadBalancer: true
secrets:
  hcloudToken: {provider: env, ref: HCLOUD_TOKEN} # from direnv
# End of the spec.
`

var commentsToKeep = []string{
	"# Production cluster. Owner: ops@example.com", "# never rename: resources are found by it",
	"# Shared with the VPN: keep 10.0.0.0/16.", "# odd, for etcd", "# The app nodes.", "# scale with the traffic",
	"# from direnv", "# End of the spec.",
}

// commentedFile writes the commented spec to a new ohmytalos.yaml with
// perm and returns its path.
func commentedFile(t *testing.T, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ohmytalos.yaml")
	if err := os.WriteFile(path, []byte(commented), perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadCommented is commentedFile's path and its spec as loaded.
func loadCommented(t *testing.T, perm os.FileMode) (string, *Spec) {
	t.Helper()
	path := commentedFile(t, perm)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, s
}

func TestSaveKeepsCommentsAndUpdatesValues(t *testing.T) {
	path, s := loadCommented(t, 0o600)
	s.Pools[0].Count = 4
	s.Pools = append(s.Pools, Pool{Name: "storage", ServerType: "cpx32", Count: 1, Storage: true})
	s.Default()
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commentsToKeep {
		if !strings.Contains(string(raw), c) {
			t.Errorf("comment %q lost:\n%s", c, raw)
		}
	}
	if !strings.Contains(string(raw), "count: 4 # scale with the traffic") {
		t.Errorf("the edited count does not keep its line comment:\n%s", raw)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("saved file does not load: %v\n%s", err, raw)
	}
	if got.Hash() != s.Hash() {
		t.Errorf("saved spec differs from the edited one:\n%s", raw)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the file's own 0600", st.Mode().Perm())
	}
	// Removing the pool again removes it from the file, comments of the
	// rest stay.
	s.Pools = s.Pools[:1]
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(path)
	if strings.Contains(string(raw), "name: storage") || !strings.Contains(string(raw), "# The app nodes.") {
		t.Errorf("after removing the pool:\n%s", raw)
	}
	assertNoTemp(t, filepath.Dir(path))
}

func TestSaveNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.yaml")
	s := Default("demo")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v, want mode 0644", st, err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(raw), saveHeader) {
		t.Errorf("new file lacks the header:\n%s", raw)
	}
	if got, err := Load(path); err != nil || got.Hash() != s.Hash() {
		t.Errorf("new file: %v", err)
	}
}

// halfWriter writes half the data, then fails: a full disk.
func halfWriter(f *os.File, data []byte) error {
	if _, err := f.Write(data[:len(data)/2]); err != nil {
		return err
	}
	return errors.New("no space left on device")
}

// TestSaveFailureLeavesTheOldFile: a write that fails halfway never
// touches the file, and leaves no temporary file.
func TestSaveFailureLeavesTheOldFile(t *testing.T) {
	path, s := loadCommented(t, 0o644)
	s.Pools[0].Count = 7
	err := s.save(path, halfWriter)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("err = %v", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != commented {
		t.Errorf("the file changed after a failed write:\n%s", raw)
	}
	assertNoTemp(t, filepath.Dir(path))
}

// TestSaveKilledMidWrite runs Save in a child process that is killed
// (SIGKILL, no deferred cleanup) halfway through writing: the file is the
// old one, whole.
func TestSaveKilledMidWrite(t *testing.T) {
	if p := os.Getenv("OHMYTALOS_SAVE_CRASH"); p != "" {
		s, err := Load(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		s.Pools[0].Count = 7
		_ = s.save(p, func(f *os.File, data []byte) error {
			if _, err := f.Write(data[:len(data)/2]); err != nil {
				return err
			}
			p, _ := os.FindProcess(os.Getpid())
			_ = p.Kill()
			select {} // killed
		})
		os.Exit(3) // not reached
	}
	path := commentedFile(t, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSaveKilledMidWrite$")
	cmd.Env = append(os.Environ(), "OHMYTALOS_SAVE_CRASH="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("the child was not killed: %v\n%s", err, out)
	}
	raw, _ := os.ReadFile(path)
	if string(raw) != commented {
		t.Fatalf("after a crash mid-write the file is:\n%s", raw)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
