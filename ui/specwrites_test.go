package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// rootSpecWriters are the only functions that may assign through a spec
// field: the root model's constructor and its SpecEditMsg handler.
var rootSpecWriters = map[string]bool{"newModelOn": true, "applyEdit": true}

// TestOnlyTheRootWritesTheSpec reads every non-test file of package ui and
// fails on a write through a `.spec` field (or a variable taken from one)
// outside the root's functions: pages send SpecEditMsg instead.
func TestOnlyTheRootWritesTheSpec(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range specWrites(t, fset, name, string(src)) {
			t.Errorf("%s writes the working spec: send a SpecEditMsg (c.editSpec) and let the root apply it", v)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked %d files: the glob missed the package", checked)
	}
}

// TestSpecWritesCatchesPageWrites proves the checker sees the writes a page
// could make: direct, through an alias, through a pointer, with delete.
func TestSpecWritesCatchesPageWrites(t *testing.T) {
	src := `package ui
func (s *poolsScreen) bad() {
	s.c.spec.Name = "x"
	sp := s.c.spec
	sp.Pools = nil
	ref := &s.c.spec.Secrets.HCloudToken
	ref.Ref = "y"
	s.c.spec.ControlPlane.Count++
	delete(sp.Schematics.Extra, "a")
	s.c.editSpec(func(sp *spec.Spec) { sp.Name = "ok" })
	name := s.c.spec.Name
	name = "fine"
	_ = name
}`
	got := specWrites(t, token.NewFileSet(), "bad.go", src)
	if len(got) != 5 {
		t.Fatalf("found %d writes, want 5: %v", len(got), got)
	}
}

// TestPagesSeeACopy checks that the spec pages read is not the root's:
// a page that wrote it would change nothing.
func TestPagesSeeACopy(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	if h.m.c.spec == h.m.spec {
		t.Fatal("pages hold the root's working spec, not a copy")
	}
	h.Send(SpecEditMsg{Edit: func(sp *spec.Spec) { sp.Name = "renamed" }})
	if h.m.spec.Name != "renamed" || h.m.c.spec.Name != "renamed" {
		t.Fatalf("after an edit: root %q, view %q, want renamed", h.m.spec.Name, h.m.c.spec.Name)
	}
	h.m.c.spec.Name = "scribbled"
	if h.m.spec.Name != "renamed" {
		t.Fatal("writing the pages' view changed the root's working spec")
	}
}

// specWrites lists the spec writes in one file, outside rootSpecWriters.
func specWrites(t *testing.T, fset *token.FileSet, name, src string) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || rootSpecWriters[fn.Name.Name] {
			continue
		}
		w := &writeFinder{fset: fset, tainted: map[string]bool{}}
		w.block(fn.Body)
		out = append(out, w.found...)
	}
	return out
}

// writeFinder walks one function: names bound from a `.spec` expression
// are tainted, and a write through a tainted chain is reported. A function
// literal's parameters shadow the names around it (edit closures get the
// root's spec as a parameter).
type writeFinder struct {
	fset    *token.FileSet
	tainted map[string]bool
	found   []string
}

func (w *writeFinder) block(n ast.Node) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			inner := &writeFinder{fset: w.fset, tainted: map[string]bool{}}
			for k, v := range w.tainted {
				inner.tainted[k] = v
			}
			for _, p := range n.Type.Params.List {
				for _, id := range p.Names {
					delete(inner.tainted, id.Name)
				}
			}
			inner.block(n.Body)
			w.found = append(w.found, inner.found...)
			return false
		case *ast.AssignStmt:
			w.assign(n)
		case *ast.IncDecStmt:
			w.write(n.X)
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "delete" || id.Name == "clear") && len(n.Args) > 0 {
				w.write(n.Args[0])
			}
		}
		return true
	})
}

func (w *writeFinder) assign(n *ast.AssignStmt) {
	for i, lhs := range n.Lhs {
		if id, ok := lhs.(*ast.Ident); ok {
			if n.Tok == token.DEFINE || n.Tok == token.ASSIGN {
				rhs := n.Rhs[0]
				if len(n.Rhs) == len(n.Lhs) {
					rhs = n.Rhs[i]
				}
				w.tainted[id.Name] = w.fromSpec(rhs)
			}
			continue
		}
		w.write(lhs)
	}
}

// write reports x when it reaches into the spec.
func (w *writeFinder) write(x ast.Expr) {
	if w.chainFromSpec(x) {
		w.found = append(w.found, w.fset.Position(x.Pos()).String())
	}
}

// chainFromSpec follows selectors, indexes and dereferences down to the
// root name: true when one selector is `.spec` or the root is tainted.
func (w *writeFinder) chainFromSpec(x ast.Expr) bool {
	for {
		switch e := x.(type) {
		case *ast.SelectorExpr:
			if e.Sel.Name == "spec" {
				return true
			}
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.StarExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		case *ast.UnaryExpr:
			x = e.X
		case *ast.Ident:
			return w.tainted[e.Name]
		default:
			return false
		}
	}
}

// fromSpec says binding x to a name aliases the spec: x is the spec
// itself, a name that holds it, or the address of a part of it. Copies
// (a pool by value, a string) are no aliases; a slice or map taken out of
// the spec by value is not seen here (the pages' copy of the spec still
// keeps such a write away from the root's).
func (w *writeFinder) fromSpec(x ast.Expr) bool {
	for {
		p, ok := x.(*ast.ParenExpr)
		if !ok {
			break
		}
		x = p.X
	}
	switch e := x.(type) {
	case *ast.UnaryExpr:
		return e.Op == token.AND && w.chainFromSpec(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name == "spec"
	case *ast.Ident:
		return w.tainted[e.Name]
	}
	return false
}
