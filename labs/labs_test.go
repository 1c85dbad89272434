package labs_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/operator-lab/lab/labs"
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
