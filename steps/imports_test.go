package steps

import (
	"go/build"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/ohmytalos/ohmytalos"

// TestNoProvisioningPackageImportsTheSandbox walks the non-test imports of
// every package of the module outside cmd/, the sandbox itself and the
// test support (internal/testworld and internal/testpki, which no
// non-test file may import either): none may reach internal/sandbox (cmd wires it and hands the steps plain values),
// and nothing under internal/ may reach steps or ui (the dependency rule
// cmd -> ui -> steps -> internal/*).
func TestNoProvisioningPackageImportsTheSandbox(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := modulePackages(t, root)
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s: the walk is broken", len(pkgs), root)
	}
	deps := map[string][]string{}
	for _, p := range pkgs {
		deps[p] = localImports(t, root, p)
	}
	sandbox := module + "/internal/sandbox"
	testSupport := func(p string) bool { // for _test files only
		return under(p, module+"/internal/testworld") || under(p, module+"/internal/testpki")
	}
	for _, p := range pkgs {
		if under(p, module+"/cmd") || under(p, sandbox) || testSupport(p) {
			continue
		}
		for _, q := range reach(p, deps) {
			if testSupport(q) {
				t.Errorf("%s imports %s (through its non-test imports): test support is for _test files only", p, q)
			}
			if under(q, sandbox) {
				t.Errorf("%s imports %s (through its non-test imports): only cmd may wire the sandbox", p, q)
			}
			if under(p, module+"/internal") && (under(q, module+"/steps") || under(q, module+"/ui")) {
				t.Errorf("%s imports %s: internal packages never import steps or ui", p, q)
			}
		}
	}
}

// modulePackages lists the import paths of the module's Go packages.
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		if _, err := build.ImportDir(p, 0); err == nil {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(filepath.Join(module, rel)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// localImports is the module-local part of a package's non-test imports.
func localImports(t *testing.T, root, pkg string) []string {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")))
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	var out []string
	for _, imp := range bp.Imports {
		if under(imp, module) {
			out = append(out, imp)
		}
	}
	return out
}

// reach is every package p imports, directly or not.
func reach(p string, deps map[string][]string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, r := range deps[q] {
			if !seen[r] {
				seen[r] = true
				walk(r)
			}
		}
	}
	walk(p)
	return slices.Sorted(maps.Keys(seen))
}

func under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}
