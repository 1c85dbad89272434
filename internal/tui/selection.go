package tui

import "github.com/operator-lab/lab/internal/tui/state"

// selectedObject is the object actions apply to: the one selected with
// ↑/↓, else the newest object not deleted.
func (m Model) selectedObject() (*state.Object, bool) {
	if o, ok := m.state.Object(m.selected); ok {
		return o, true
	}
	objects := m.state.Objects()
	for i := len(objects) - 1; i >= 0; i-- {
		if !objects[i].Deleted {
			return objects[i], true
		}
	}
	if len(objects) > 0 {
		return objects[len(objects)-1], true
	}
	return nil, false
}

func (m *Model) moveSelection(dir int) {
	objects := m.state.Objects()
	if len(objects) == 0 {
		return
	}
	cur, _ := m.selectedObject()
	i := 0
	for j, o := range objects {
		if o == cur {
			i = j
		}
	}
	i = min(max(i+dir, 0), len(objects)-1)
	m.selected = objects[i].Key
}

// pinReconcile moves the sequence pane to an older (-1) or newer (+1)
// reconcile; moving past the newest follows live again.
func (m *Model) pinReconcile(dir int) {
	n := m.state.ReconcileCount()
	if n == 0 {
		return
	}
	idx := n - 1
	if m.pinned != 0 {
		for i := 0; i < n; i++ {
			if m.state.ReconcileAt(i).N == m.pinned {
				idx = i
			}
		}
	} else if dir > 0 {
		return
	} else {
		idx = n // so one step back lands on the newest
	}
	idx += dir
	switch {
	case idx >= n:
		m.pinned = 0
	case idx < 0:
		m.pinned = m.state.ReconcileAt(0).N
	default:
		m.pinned = m.state.ReconcileAt(idx).N
	}
}
