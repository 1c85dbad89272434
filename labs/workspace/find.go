package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/operator-lab/lab/labs"
)

// Ref is a workspace a command works on: its lab and its folder (absolute).
type Ref struct {
	Lab *labs.Lab
	Dir string
}

// Resolve finds the existing workspace a command is about, from an
// optional lab id and an optional folder: dir wins; else the workspace
// the current folder is in; else ./lab-LAB; else the only ./lab-*
// workspace here. The errors say how to go on.
func Resolve(labID, dir string) (*Ref, error) {
	var lab *labs.Lab
	if labID != "" {
		l, err := labs.Get(labID)
		if err != nil {
			return nil, err
		}
		lab = l
	}
	pick := func(d string) (*Ref, error) {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		id, err := Detect(abs)
		if err != nil {
			return nil, err
		}
		if lab != nil && id != lab.ID {
			return nil, fmt.Errorf("%s is a workspace of lab %s, not %s", d, id, lab.ID)
		}
		l, err := labs.Get(id)
		if err != nil {
			return nil, err
		}
		return &Ref{Lab: l, Dir: abs}, nil
	}
	if dir != "" {
		return pick(dir)
	}
	if found := enclosingHere(); found != "" {
		if ref, err := pick(found); err == nil || lab == nil {
			return ref, err
		}
	}
	if lab != nil {
		d := DefaultDir(lab.ID)
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("no workspace for lab %s here (looked for %s): create it with `lab init %s`", lab.ID, d, lab.ID)
		}
		return pick(d)
	}
	all, err := labs.All()
	if err != nil {
		return nil, err
	}
	var found []*Ref
	for _, l := range all {
		if ref, err := pick(DefaultDir(l.ID)); err == nil {
			found = append(found, ref)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errors.New("not in a lab workspace: run `lab init 3.1` to create one, or name it with LAB or --dir")
	default:
		return nil, errors.New("several lab workspaces here: say which with LAB or --dir")
	}
}

// OpenOrCreate returns lab's workspace the way `lab start` finds it: dir
// if given, else the workspace the current folder is in, else ./lab-LAB;
// created says whether it was made now. An existing workspace is used
// exactly as it is (Create is what restores deleted files); a new one is
// made only in a missing or empty folder, so lab never spreads its files
// into someone else's project.
func OpenOrCreate(lab *labs.Lab, dir, lang string) (ref *Ref, created bool, err error) {
	if dir == "" {
		if found := enclosingHere(); found != "" {
			id, err := Detect(found)
			switch {
			case err != nil:
				return nil, false, fmt.Errorf("%s looks like a lab workspace but is not readable as one: %w (pass --dir to use another folder)", found, err)
			case id != lab.ID:
				return nil, false, fmt.Errorf("you are inside the workspace of lab %s (%s): start lab %s from outside it, or pass --dir", id, found, lab.ID)
			}
			return &Ref{Lab: lab, Dir: found}, false, nil
		}
		dir = DefaultDir(lab.ID)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, fmt.Errorf("workspace folder %s: %w", dir, err)
	}
	if id, err := Detect(abs); err == nil {
		if id != lab.ID {
			return nil, false, fmt.Errorf("%s is a workspace of lab %s, not %s: choose another folder with --dir", dir, id, lab.ID)
		}
		return &Ref{Lab: lab, Dir: abs}, false, nil
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, false, fmt.Errorf("workspace folder %s: %w", dir, err)
	case len(entries) > 0:
		return nil, false, fmt.Errorf("%s is not empty and not a lab workspace, so lab start leaves it alone: choose a new or empty folder with --dir", dir)
	}
	made, err := Create(lab, abs, lang)
	if err != nil {
		return nil, false, fmt.Errorf("create the workspace of lab %s: %w", lab.ID, err)
	}
	return &Ref{Lab: lab, Dir: abs}, len(made.Written) > 0, nil
}

// enclosingHere is the nearest workspace from the current folder up (see
// Enclosing), or "".
func enclosingHere() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return Enclosing(dir)
}
