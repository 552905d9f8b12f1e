package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seedWith is the seed spec with extra appended, written as spec.yaml in
// a new folder; it returns the file and the seed's number of lines.
func seedWith(t *testing.T, extra string) (string, int) {
	t.Helper()
	seed, err := os.ReadFile("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, append(seed, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, strings.Count(string(seed), "\n")
}

// TestSecondDocumentIsRefused: a second YAML document in a spec file is an
// error naming the file and the line where it starts, never dropped.
func TestSecondDocumentIsRefused(t *testing.T) {
	path, n := seedWith(t, "---\nname: other\ncontrolPlane: {count: 1}\n")
	_, err := Load(path)
	want := path + ": line " + strconv.Itoa(n+1) + ": a second YAML document"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Load = %v, want an error starting %q", err, want)
	}
	if !strings.Contains(err.Error(), "move them to a file of their own") {
		t.Errorf("the error names no fix: %v", err)
	}
	// After a document of only comments, the second one is still refused.
	if _, err := Parse([]byte("name: demo\n---\n# notes\n---\nname: other\n")); err == nil || !strings.HasPrefix(err.Error(), "line 4: a second YAML document") {
		t.Errorf("Parse = %v, want the document at line 4 refused", err)
	}
}

// TestEmptyDocumentsAreNoDocuments: a trailing "---", with nothing or only
// comments after it, and a leading "---" are not a second document. An
// explicit null after "---" is one.
func TestEmptyDocumentsAreNoDocuments(t *testing.T) {
	for _, extra := range []string{"---\n", "---\n# later\n\n", "---\n---\n", "...\n"} {
		path, _ := seedWith(t, extra)
		if _, err := Load(path); err != nil {
			t.Errorf("seed + %q: %v", extra, err)
		}
	}
	seed, _ := os.ReadFile("../../examples/seed.yaml")
	for _, lead := range []string{"---\n", "# header\n---\n", "---\n---\n"} {
		s, err := Parse(append([]byte(lead), seed...))
		if err != nil || s.Name != "demo" {
			t.Errorf("%q + seed: %v (name %q)", lead, err, s.Name)
		}
	}
	if _, err := Parse(append(seed, "--- ~\n"...)); err == nil || !strings.Contains(err.Error(), "a second YAML document") {
		t.Errorf("seed + an explicit null document: %v, want a second document refused", err)
	}
	if _, err := Parse([]byte("# nothing yet\n")); !errors.As(err, new(Problems)) {
		t.Errorf("a spec of only comments: %v, want the usual problems (name is required, ...)", err)
	}
}

// TestDuplicateKeyNamesBothLines: a key written twice is an error naming
// the key and both lines, not a value of the wrong type followed by
// problems for every key the mapping held ("name is required").
func TestDuplicateKeyNamesBothLines(t *testing.T) {
	path, n := seedWith(t, "name: again\n")
	_, err := Load(path)
	want := path + ": line " + strconv.Itoa(n+1) + `: key "name" appears twice (first at line 2); remove one`
	if err == nil || err.Error() != want {
		t.Fatalf("Load = %v\nwant %s", err, want)
	}
	for _, bad := range []string{"wrong type", "required"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("the error says %q: %v", bad, err)
		}
	}

	// Nested keys are named by their path; every duplicate is reported.
	_, err = Parse([]byte("name: demo\ncontrolPlane:\n  count: 3\n  count: 1\npools:\n  - name: a\n    count: 1\n    name: b\n    name: c\n"))
	if err == nil {
		t.Fatal("duplicates parsed")
	}
	for _, line := range []string{
		`line 4: key "controlPlane.count" appears twice (first at line 3); remove one`,
		`lines 8, 9: key "pools[0].name" appears 3 times (first at line 6); keep one`,
	} {
		if !strings.Contains(err.Error(), line) {
			t.Errorf("error lacks %q:\n%v", line, err)
		}
	}
	// Keys yaml.v3 reads as the same (a quoted and a plain "name") too.
	if _, err := Parse([]byte("name: demo\n\"name\": other\n")); err == nil || !strings.Contains(err.Error(), `key "name" appears twice`) {
		t.Errorf("quoted duplicate: %v", err)
	}
}
