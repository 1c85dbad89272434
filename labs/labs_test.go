package labs_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/operator-lab/lab/labs"
	"github.com/operator-lab/lab/operator"
)

func TestEmbeddedLabsLoad(t *testing.T) {
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[0].ID != "3.1" {
		t.Fatalf("labs = %v, want 3.1 first", all)
	}
	lab := all[0]
	if got := len(lab.Exercises); got != 4 {
		t.Errorf("lab 3.1 has %d exercises, want 4", got)
	}
	for _, e := range lab.Exercises {
		for _, lang := range labs.Languages {
			if !strings.HasPrefix(e.Instructions(lang), "# ") {
				t.Errorf("exercise %s has no %s instructions", e.ID, lang)
			}
		}
	}
	if e, err := lab.Exercise("3"); err != nil || e.ID != "results" {
		t.Errorf(`Exercise("3") = %v, %v; want results`, e, err)
	}
	if _, err := lab.Exercise("nope"); err == nil || !strings.Contains(err.Error(), "1 manager") {
		t.Errorf("an unknown exercise should list the exercises, got %v", err)
	}
	if _, err := labs.Get("9.9"); err == nil || !strings.Contains(err.Error(), "3.1") {
		t.Errorf("an unknown lab should list the labs, got %v", err)
	}
}

// TestEmbeddedLabsAreLoadedOnce: every call returns the same loaded labs
// (commands look labs up several times), and the slice All returns is the
// caller's, so reordering it changes no other caller's.
func TestEmbeddedLabsAreLoadedOnce(t *testing.T) {
	first, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	second, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, second) {
		t.Fatalf("two calls of All loaded the labs twice: %p, %p", first[0], second[0])
	}
	for _, l := range first {
		if got, err := labs.Get(l.ID); err != nil || got != l {
			t.Errorf("Get(%q) = %p, %v; want All's %p", l.ID, got, err, l)
		}
		if got, err := labs.ByModule(l.Module); err != nil || got != l {
			t.Errorf("ByModule(%q) = %p, %v; want All's %p", l.Module, got, err, l)
		}
	}
	slices.Reverse(first)
	first[0] = nil
	if again, _ := labs.All(); !slices.Equal(again, second) {
		t.Errorf("changing All's slice changed the next caller's: %v", again)
	}
}

// TestEmbeddedLabsAreTheOperatorsLabs: the reference operator's list of labs
// (operator.Labs) says which labs exist; the embedded lab.yaml files declare
// exactly those, so a command may check an id with either package.
func TestEmbeddedLabsAreTheOperatorsLabs(t *testing.T) {
	all, err := labs.All()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range all {
		ids = append(ids, l.ID)
		if err := operator.CheckLab(l.ID); err != nil {
			t.Errorf("embedded lab %s: %v", l.ID, err)
		}
	}
	if want := slices.Sorted(slices.Values(operator.Labs())); !slices.Equal(ids, want) {
		t.Errorf("embedded labs = %v, operator.Labs() = %v", ids, want)
	}
}

// TestLoadAllMatchesLabsToTheOperator: a lab.yaml for a lab the operator
// does not implement, and a lab the operator implements without a lab.yaml,
// are both rejected.
func TestLoadAllMatchesLabsToTheOperator(t *testing.T) {
	fsys := fstest.MapFS{}
	for name, f := range minimalLab() {
		fsys["0.1/"+name] = f
	}
	if all, err := labs.LoadAll(fsys, []string{"0.1"}); err != nil || len(all) != 1 || all[0].ID != "0.1" {
		t.Fatalf("LoadAll = %v, %v; want lab 0.1", all, err)
	}
	for _, implemented := range [][]string{nil, {"0.1", "9.9"}, {"9.9"}} {
		_, err := labs.LoadAll(fsys, implemented)
		want := "embedded labs are 0.1, but the reference operator implements " + strings.Join(implemented, ", ")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("implemented %v: LoadAll error = %v, want one containing %q", implemented, err, want)
		}
	}
	if _, err := labs.LoadAll(fstest.MapFS{"0.1/lab.yaml": {Data: []byte("schemaVersion: 1\n")}}, []string{"0.1"}); err == nil {
		t.Error("LoadAll accepted an invalid lab folder")
	}
}

// minimalLab is a valid one-exercise lab; each case below breaks one thing.
func minimalLab() fstest.MapFS {
	return fstest.MapFS{
		"lab.yaml": {Data: []byte(`schemaVersion: 1
id: "0.1"
title: {en: Tiny, ru: Крошка}
module: example.com/tiny
exercises:
  - id: one
    title: {en: One, ru: Один}
    package: one
    files: [one/one.go]
    checks: [one/one_check_test.go]
    timeout: 30s
    points: 5
    hints:
      en: [a, b]
      ru: [а, б]
`)},
		"_starter/one/one.go":           {Data: []byte("package one // TODO(lab): write it\n")},
		"_solution/one/one.go":          {Data: []byte("package one\n")},
		"_checks/one/one_check_test.go": {Data: []byte("package one_test\n")},
		"instructions/en/one.md":        {Data: []byte("# One\n")},
		"instructions/ru/one.md":        {Data: []byte("# Один\n")},
	}
}

func TestLoadValidates(t *testing.T) {
	if _, err := labs.Load(minimalLab()); err != nil {
		t.Fatalf("the minimal lab should load: %v", err)
	}
	cases := []struct {
		name   string
		break_ func(fstest.MapFS)
		want   string
	}{
		{"starter without TODO marker", func(m fstest.MapFS) { m["_starter/one/one.go"] = &fstest.MapFile{Data: []byte("package one\n")} }, "no TODO(lab) marker"},
		{"undeclared file", func(m fstest.MapFS) { m["_solution/one/extra.go"] = &fstest.MapFile{Data: []byte("package one\n")} }, "_solution/one/extra.go is not declared"},
		{"missing solution", func(m fstest.MapFS) { delete(m, "_solution/one/one.go") }, "_solution/one/one.go, which is missing"},
		{"missing Russian instructions", func(m fstest.MapFS) { delete(m, "instructions/ru/one.md") }, "instructions/ru/one.md, which is missing"},
		{"too few Russian hints", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "ru: [а, б]", "ru: [а]", 1))
		}, "at least 2 hints in ru"},
		{"unknown field", func(m fstest.MapFS) {
			m["lab.yaml"].Data = append(m["lab.yaml"].Data, []byte("extra: 1\n")...)
		}, "unknown field"},
		{"future schema", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "schemaVersion: 1", "schemaVersion: 2", 1))
		}, "schemaVersion is 2"},
		{"no points", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "    points: 5\n", "", 1))
		}, "points must be at least 1"},
		{"numeric exercise id", func(m fstest.MapFS) {
			m["lab.yaml"].Data = []byte(strings.Replace(string(m["lab.yaml"].Data), "id: one", "id: \"7\"", 1))
		}, "must be a word"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := minimalLab()
			c.break_(m)
			_, err := labs.Load(m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// BenchmarkGet is one lab look-up, as cmd does several times per command.
func BenchmarkGet(b *testing.B) {
	for b.Loop() {
		if _, err := labs.Get("4.4"); err != nil {
			b.Fatal(err)
		}
	}
}
