package labs

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/operator-lab/lab/operator"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

//go:embed all:3.1 all:4.4
var definitions embed.FS

// embedded loads and validates the embedded labs on first use; every later
// call returns the same labs (or the same error).
var embedded = sync.OnceValues(func() ([]*Lab, error) {
	return loadAll(definitions, operator.Labs())
})

// All returns every embedded lab, ordered by id. The labs are loaded and
// validated once per process and shared by every caller, so they are
// read-only: change none of their fields. The slice is the caller's own.
func All() ([]*Lab, error) {
	all, err := embedded()
	if err != nil {
		return nil, err
	}
	return slices.Clone(all), nil
}

// Get returns the embedded lab with the given id (shared and read-only, as
// All's).
func Get(id string) (*Lab, error) {
	all, err := embedded()
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(all, func(l *Lab) bool { return l.ID == id }); i >= 0 {
		return all[i], nil
	}
	return nil, fmt.Errorf("no lab %q (labs: %s)", id, strings.Join(ids(all), ", "))
}

// ByModule returns the embedded lab whose workspace module path is module,
// or nil when no lab's is.
func ByModule(module string) (*Lab, error) {
	all, err := embedded()
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(all, func(l *Lab) bool { return l.Module == module }); i >= 0 {
		return all[i], nil
	}
	return nil, nil
}

// loadAll loads every lab folder at the top of fsys, ordered by id, and
// checks that their ids are exactly the labs the reference operator
// implements (implemented, from operator.Labs): that list says which labs
// exist, and a lab.yaml may neither add one nor leave one out.
func loadAll(fsys fs.FS, implemented []string) ([]*Lab, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read embedded labs: %w", err)
	}
	var all []*Lab
	for _, entry := range entries {
		if !entry.IsDir() {
			continue
		}
		sub, err := fs.Sub(fsys, entry.Name())
		if err != nil {
			return nil, fmt.Errorf("open embedded lab %s: %w", entry.Name(), err)
		}
		lab, err := Load(sub)
		if err != nil {
			return nil, err
		}
		all = append(all, lab)
	}
	slices.SortFunc(all, func(a, b *Lab) int { return strings.Compare(a.ID, b.ID) })

	got, want := ids(all), slices.Sorted(slices.Values(implemented))
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("embedded labs are %s, but the reference operator implements %s: "+
			"each lab needs both a lab.yaml and its controllers (operator.Labs)",
			strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return all, nil
}

// ids returns the labs' ids, in order.
func ids(all []*Lab) []string {
	out := make([]string, len(all))
	for i, l := range all {
		out[i] = l.ID
	}
	return out
}

// Load parses and validates the lab definition in root (a lab folder).
func Load(root fs.FS) (*Lab, error) {
	raw, err := fs.ReadFile(root, "lab.yaml")
	if err != nil {
		return nil, fmt.Errorf("read lab.yaml: %w", err)
	}
	var lab Lab
	if err := yaml.UnmarshalStrict(raw, &lab); err != nil {
		return nil, fmt.Errorf("parse lab.yaml: %w", err)
	}
	lab.root = root
	for i, e := range lab.Exercises {
		if e == nil {
			return nil, fmt.Errorf("lab.yaml: exercise %d is empty", i+1)
		}
		e.Number = i + 1
		e.lab = &lab
	}
	if lab.API != nil {
		names, err := fs.Glob(v1alpha1.Sources, "*.go")
		if err != nil {
			return nil, fmt.Errorf("list the operator's API files: %w", err)
		}
		lab.apiFiles = names
	}
	if err := lab.validate(); err != nil {
		return nil, fmt.Errorf("lab %q: %w", lab.ID, err)
	}
	return &lab, nil
}
