package ui

// applyEdit is the only place the working spec changes: it runs the
// page's edit on the root's spec, then hands the pages a fresh copy and
// recomputes what derives from the spec.
func (m *Model) applyEdit(msg SpecEditMsg) {
	if msg.Edit == nil {
		return
	}
	msg.Edit(m.spec)
	m.c.spec = cloneSpec(m.spec)
	m.c.specChanged()
}
