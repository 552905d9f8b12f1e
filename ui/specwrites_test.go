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

// rootWriters are the functions besides the root model's methods that may
// write the shared state: the root's constructor and the recomputation of
// what derives from the spec, which only the root calls.
var rootWriters = map[string]bool{"newModelOn": true, "specChanged": true}

// sharedFields are the selectors that lead into the root's state: the
// working spec's copy and the pages' pointer to the shared state.
var sharedFields = map[string]bool{"spec": true, "c": true}

// TestOnlyTheRootWritesTheSpec reads every non-test file of package ui and
// fails on a write through a `.spec` or `.c` field (or a variable taken
// from one, or a *shared parameter) outside the root's functions: pages
// send SpecEditMsg and keep everything else in their own fields.
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
			t.Errorf("%s writes the root's state from a page: send a SpecEditMsg (c.editSpec) for the spec, a message for the rest, and let the root apply it", v)
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
	s.c.savedHash = "x"
	c := s.c
	c.runs++
	s.cursor = 2
}
func pageHelper(c *shared) { c.fullErrors = true }
func (m *Model) root() { m.c.savedHash, m.spec.Name = "ok", "ok" }`
	got := specWrites(t, token.NewFileSet(), "bad.go", src)
	if len(got) != 8 {
		t.Fatalf("found %d writes, want 8: %v", len(got), got)
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
		if !ok || fn.Body == nil || rootWriters[fn.Name.Name] || isRootMethod(fn) {
			continue
		}
		w := &writeFinder{fset: fset, tainted: map[string]bool{}}
		for _, p := range fn.Type.Params.List {
			if isSharedPtr(p.Type) {
				for _, id := range p.Names {
					w.tainted[id.Name] = true
				}
			}
		}
		w.block(fn.Body)
		out = append(out, w.found...)
	}
	return out
}

// isRootMethod says fn is a method of the root model.
func isRootMethod(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return false
	}
	star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Model"
}

// isSharedPtr says a parameter's type is *shared.
func isSharedPtr(x ast.Expr) bool {
	star, ok := x.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "shared"
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
// root name: true when one selector is a shared field or the root is
// tainted.
func (w *writeFinder) chainFromSpec(x ast.Expr) bool {
	for {
		switch e := x.(type) {
		case *ast.SelectorExpr:
			if sharedFields[e.Sel.Name] {
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
		return sharedFields[e.Sel.Name]
	case *ast.Ident:
		return w.tainted[e.Name]
	}
	return false
}
