package tui

import "github.com/operator-lab/lab/internal/tui/state"

// focus is what the learner points at on the dashboard: the object the
// actions apply to and the reconcile pinned in the sequence pane. The
// dashboard owns it; the panes that follow it and the live controls read it.
type focus struct {
	selected string // key of the selected object
	pinned   int    // number of the reconcile pinned in the sequence pane; 0 follows the latest
}

// object is the object actions apply to: the one selected with ↑/↓,
// else the newest object not deleted.
func (f *focus) object(s *state.State) (*state.Object, bool) {
	if o, ok := s.Object(f.selected); ok {
		return o, true
	}
	objects := s.Objects()
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

// move selects the previous (-1) or next (+1) object.
func (f *focus) move(s *state.State, dir int) {
	objects := s.Objects()
	if len(objects) == 0 {
		return
	}
	cur, _ := f.object(s)
	i := 0
	for j, o := range objects {
		if o == cur {
			i = j
		}
	}
	i = min(max(i+dir, 0), len(objects)-1)
	f.selected = objects[i].Key
}

// pin moves the sequence pane to an older (-1) or newer (+1) reconcile;
// moving past the newest follows live again.
func (f *focus) pin(s *state.State, dir int) {
	n := s.ReconcileCount()
	if n == 0 {
		return
	}
	idx := n - 1
	if f.pinned != 0 {
		for i := 0; i < n; i++ {
			if s.ReconcileAt(i).N == f.pinned {
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
		f.pinned = 0
	case idx < 0:
		f.pinned = s.ReconcileAt(0).N
	default:
		f.pinned = s.ReconcileAt(idx).N
	}
}
