package privatefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// wideFile is a new file name holding content with mode 0644 (whatever
// the umask), wider than the 0600 the package narrows it to.
func wideFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteNarrowsAWiderMode(t *testing.T) {
	p := wideFile(t, "kubeconfig", "old")
	got, err := Write(p, []byte("new"))
	if err != nil {
		t.Fatal(err)
	}
	if got != p {
		t.Errorf("wrote %s, want %s", got, p)
	}
	if m := mode(t, p); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
}

func TestWriteFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]bool{"existing target": true, "dangling link": false}
	for name, exists := range cases {
		t.Run(name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			target := filepath.Join(sub, "dotfiles", "config")
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if exists {
				os.WriteFile(target, []byte("old"), 0o644)
			}
			link := filepath.Join(sub, "config")
			if err := os.Symlink("dotfiles/config", link); err != nil {
				t.Fatal(err)
			}
			got, err := Write(link, []byte("new"))
			if err != nil {
				t.Fatal(err)
			}
			if got != target {
				t.Errorf("wrote %s, want the link's target %s", got, target)
			}
			fi, err := os.Lstat(link)
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the symlink was replaced by a file: %v", err)
			}
			if b, _ := os.ReadFile(link); string(b) != "new" {
				t.Errorf("content through the link %q", b)
			}
			if m := mode(t, target); m != 0o600 {
				t.Errorf("target mode %v", m)
			}
		})
	}
}

func TestWriteRefusesASymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if _, err := Write(a, []byte("x")); err == nil || !strings.Contains(err.Error(), "symlinks") {
		t.Errorf("loop: %v", err)
	}
}

func TestWriteCreatesFoldersAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new", "talosconfig")
	if _, err := Write(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(entries))
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct{ path, target, want string }{
		{"a", "a", "a (mode 0600)"},
		{"a", "", "a (mode 0600)"},
		{"a", "b", "a -> b (mode 0600)"},
	}
	for _, c := range cases {
		if got := Describe(c.path, c.target); got != c.want {
			t.Errorf("Describe(%q, %q) = %q, want %q", c.path, c.target, got, c.want)
		}
	}
}

func TestOpenAppendNarrowsAWiderMode(t *testing.T) {
	p := wideFile(t, "ohmytalos.log", "old\n")
	f, err := OpenAppend(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new\n")
	f.Close()
	if m := mode(t, p); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\nnew\n" {
		t.Errorf("content %q: the log was not appended to", b)
	}
	fresh := filepath.Join(t.TempDir(), "new.log")
	f, err = OpenAppend(fresh)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if m := mode(t, fresh); m != 0o600 {
		t.Errorf("new log mode %v, want 0600", m)
	}
}
