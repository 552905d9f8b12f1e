package ui

import (
	"fmt"
	"github.com/ohmytalos/ohmytalos/steps"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/ui/common"
	"github.com/ohmytalos/ohmytalos/ui/components"
)

// imagesScreen picks the system extensions of each schematic, shows the
// schematic IDs (computed offline on every change) and builds the
// snapshots with the images step, showing progress per image.
type imagesScreen struct {
	// page is the screen's own copy of the size, styles and keys.
	page
	c       *shared
	tab     int // index into schematicNames
	cursor  int
	exts    []factory.Extension
	loading bool
	loadErr string
	ids     map[string]string
	idErr   string
	// known are the extensions the spec named when the screen opened: they
	// stay in the picker after being unticked, even when the factory does
	// not list them.
	known []string
	// versions are the factory's stable releases, newest first.
	versions        []string
	versionsLoading bool
	versionsErr     string
	confirm         components.Confirm
	screenRun
	prog components.ProgressList
}

func newImages(c *shared, com common.Common) *imagesScreen {
	s := &imagesScreen{c: c, page: page{com}, ids: map[string]string{}}
	for _, n := range s.schematicNames() {
		for _, e := range s.schematic(n).Extensions {
			if !slices.Contains(s.known, e) {
				s.known = append(s.known, e)
			}
		}
	}
	if c.stepStatus(steps.StepImages) == engine.StatusDone {
		s.result = "ok"
	}
	s.recompute()
	return s
}

func (s *imagesScreen) enter() tea.Cmd {
	var cmds []tea.Cmd
	if s.versions == nil {
		cmds = append(cmds, s.loadVersions())
	}
	if s.exts == nil && !s.loading {
		s.loading = true
		cmds = append(cmds, extensionsCmd(s.c.ctx, s.c.backend, s.c.spec.Talos.Version))
	}
	return tea.Batch(cmds...)
}

func (s *imagesScreen) capturing() bool { return false }

func (s *imagesScreen) help() keyHelp {
	km := s.Keys
	if s.confirm.Open() {
		return keyHelp{short: s.confirm.Help(km)}
	}
	enter := km.Enter
	enter.SetHelp("enter", "build snapshots")
	if s.result == "ok" {
		enter.SetHelp("enter", "continue")
	}
	short := []key.Binding{km.NextSchematic, km.Up, km.Down, km.Toggle}
	if s.c.backend.Versions != nil {
		short = append(short, km.Version)
	}
	return keyHelp{short: append(short, enter)}
}

// schematicNames lists the spec's schematics: control plane, worker, then
// the extra ones by name.
func (s *imagesScreen) schematicNames() []string {
	out := []string{"controlPlane", "worker"}
	var extra []string
	for n := range s.c.spec.Schematics.Extra {
		extra = append(extra, n)
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func (s *imagesScreen) schematic(name string) spec.Schematic {
	switch name {
	case "controlPlane":
		return s.c.spec.Schematics.ControlPlane
	case "worker":
		return s.c.spec.Schematics.Worker
	}
	return s.c.spec.Schematics.Extra[name]
}

func (s *imagesScreen) setSchematic(name string, sc spec.Schematic) {
	s.c.editSpec(func(sp *spec.Spec) {
		switch name {
		case "controlPlane":
			sp.Schematics.ControlPlane = sc
		case "worker":
			sp.Schematics.Worker = sc
		default:
			sp.Schematics.Extra[name] = sc
		}
	})
}

// options lists what the picker offers: the factory's official extensions,
// plus any the schematic names that the factory did not list.
func (s *imagesScreen) options() []string {
	var out []string
	for _, e := range s.exts {
		out = append(out, e.Name)
	}
	for _, n := range append(slices.Clone(s.known), s.schematic(s.current()).Extensions...) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (s *imagesScreen) current() string {
	names := s.schematicNames()
	return names[min(s.tab, len(names)-1)]
}

// recompute derives every schematic ID offline (SHA-256 of the canonical
// YAML): pure computation.
func (s *imagesScreen) recompute() {
	s.idErr = ""
	for _, n := range s.schematicNames() {
		sc := s.schematic(n)
		id, err := factory.New(sc.Extensions, sc.KernelArgs).ID()
		if err != nil {
			s.idErr = err.Error()
			continue
		}
		s.ids[n] = id
	}
}

func (s *imagesScreen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case VersionsMsg:
		s.gotVersions(msg)
		return nil
	case ExtensionsMsg:
		if msg.Version != s.c.spec.Talos.Version {
			return nil // the answer for a version picked away from
		}
		s.loading = false
		if msg.Err != nil {
			s.loadErr = msg.Err.Error()
			return nil
		}
		s.exts, s.loadErr = slices.Clone(msg.Extensions), ""
		sort.Slice(s.exts, func(i, j int) bool { return s.exts[i].Name < s.exts[j].Name })
	case tea.KeyMsg:
		return s.key(msg)
	}
	if ev, ok := s.runEvent(msg); ok {
		s.prog.Add(ev)
	}
	s.runDone(msg)
	return nil
}

func (s *imagesScreen) key(msg tea.KeyMsg) tea.Cmd {
	km := s.Keys
	if cmd, took := s.confirm.Handle(msg, km, s.build); took {
		return cmd
	}
	opts := s.options()
	switch {
	case key.Matches(msg, km.NextSchematic):
		s.tab = (s.tab + 1) % len(s.schematicNames())
		s.cursor = 0
	case key.Matches(msg, km.Up):
		s.cursor = max(s.cursor-1, 0)
	case key.Matches(msg, km.Down):
		s.cursor = min(s.cursor+1, max(len(opts)-1, 0))
	case key.Matches(msg, km.Toggle) && len(opts) > 0 && s.result != "running":
		s.toggle(opts[min(s.cursor, len(opts)-1)])
	case key.Matches(msg, km.Version):
		return s.pickVersion()
	case key.Matches(msg, km.Enter):
		if cmd, handled := s.enterKey(scrNetwork); handled {
			return cmd
		}
		imgs := neededImages(s.c.spec)
		names := make([]string, len(imgs))
		for i, im := range imgs {
			names[i] = im.String()
		}
		cost := "Each build runs a throwaway server for a few minutes, billed by the hour, then deletes it."
		if s.c.backend.Sandbox {
			cost = "Sandbox: the throwaway servers are fakes; nothing is billed."
		}
		s.confirm.Ask(fmt.Sprintf("Build %d Talos snapshot(s) (%s)? %s", len(imgs), strings.Join(names, ", "), cost))
	}
	return nil
}

// toggle adds or removes an extension, keeping the operator's order.
func (s *imagesScreen) toggle(name string) {
	sc := s.schematic(s.current())
	if i := slices.Index(sc.Extensions, name); i >= 0 {
		sc.Extensions = slices.Delete(slices.Clone(sc.Extensions), i, i+1)
	} else {
		sc.Extensions = append(slices.Clone(sc.Extensions), name)
	}
	s.setSchematic(s.current(), sc)
	s.recompute()
	if s.result == "ok" {
		s.result = ""
	}
}

// build runs the images step alone.
func (s *imagesScreen) build() tea.Cmd {
	cmd := s.startEngine(s.c, engine.Options{Only: steps.StepImages})
	if cmd != nil {
		s.prog = components.ProgressList{}
	}
	return cmd
}

func (s *imagesScreen) view() string {
	c, st := s.c, s.Styles
	var b strings.Builder
	b.WriteString(header(s.Common, "Talos images", fmt.Sprintf("Talos %s, one snapshot per schematic and architecture", c.spec.Talos.Version)) + "\n")
	b.WriteString(s.versionLine())
	idw := 12
	if s.Width >= 95 {
		idw = 64
	}
	for i, n := range s.schematicNames() {
		name := fmt.Sprintf("%-13s", n)
		if i == s.tab {
			name = st.Selected.Render("▸ " + name)
		} else {
			name = "  " + name
		}
		id := s.ids[n]
		if len(id) > idw {
			id = id[:idw] + "…"
		}
		b.WriteString(name + " " + st.Accent.Render(id) + " " + st.Subtle.Render(strings.Join(s.schematic(n).Extensions, ", ")) + "\n")
	}
	if s.idErr != "" {
		b.WriteString(errorText(s.Common, s.c.fullErrors, st.Bad, s.idErr, s.Width) + "\n")
	}
	b.WriteString("\n")
	if s.confirm.Open() {
		b.WriteString(s.confirm.View(st, s.Width) + "\n")
	}
	switch {
	case s.loading:
		b.WriteString(st.Subtle.Render("loading the official extensions…") + "\n")
	case s.loadErr != "":
		b.WriteString(errorText(s.Common, s.c.fullErrors, st.Warn, "extensions unavailable: "+s.loadErr, s.Width) + "\n")
	}
	progress := s.progressView()
	used := strings.Count(b.String(), "\n") + strings.Count(progress, "\n") + 2
	b.WriteString(s.listView(max(s.Height-used-1, 3)))
	b.WriteString("\n\n" + progress)
	return b.String()
}

// listView is the extension picker, scrolled to keep the cursor visible.
func (s *imagesScreen) listView(height int) string {
	st := s.Styles
	opts := s.options()
	selected := s.schematic(s.current()).Extensions
	desc := map[string]string{}
	for _, e := range s.exts {
		desc[e.Name] = e.Description
	}
	start := 0
	if s.cursor >= height {
		start = s.cursor - height + 1
	}
	var lines []string
	for i := start; i < len(opts) && i < start+height; i++ {
		box := "[ ]"
		if slices.Contains(selected, opts[i]) {
			box = st.Good.Render("[x]")
		}
		line := box + " " + opts[i]
		if d := desc[opts[i]]; d != "" {
			line += "  " + st.Subtle.Render(d)
		}
		if i == s.cursor {
			line = st.Accent.Render("›") + line
		} else {
			line = " " + line
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func (s *imagesScreen) progressView() string {
	st := s.Styles
	var b strings.Builder
	switch s.result {
	case "running":
		b.WriteString(st.Accent.Render("building snapshots…") + "\n")
	case "ok":
		b.WriteString(st.Good.Render("✓ snapshots ready") + "\n")
	case "failed":
		b.WriteString(s.failureView(s.Common, s.c.fullErrors, s.Width))
	}
	b.WriteString(s.noticeView(s.Common, s.c.fullErrors))
	b.WriteString(s.prog.View(st, s.Width))
	return b.String()
}
