package labs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// validate checks everything a learner or the checker would otherwise trip
// over later: versions, ids, both languages, and that every declared file
// exists and every file in the folder is declared.
func (l *Lab) validate() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if l.SchemaVersion != SchemaVersion {
		fail("schemaVersion is %d, this lab build reads %d", l.SchemaVersion, SchemaVersion)
	}
	if l.ID == "" || l.Module == "" {
		fail("id and module are required")
	}
	l.checkText("title", l.Title, fail)
	if len(l.Exercises) == 0 {
		fail("no exercises")
	}
	for _, crd := range l.CRDs {
		if _, err := fs.Stat(l.root, crd); err != nil {
			fail("crd %s: %v", crd, err)
		}
	}

	declared := map[string]string{} // path in the lab folder → who declared it
	declare := func(p, by string) {
		if prev, dup := declared[p]; dup {
			fail("%s is declared twice (%s and %s)", p, prev, by)
		}
		declared[p] = by
		if _, err := fs.Stat(l.root, p); err != nil {
			fail("%s declares %s, which is missing", by, p)
		}
	}
	declare("lab.yaml", "the loader")
	for _, crd := range l.CRDs {
		declared[crd] = "crds"
	}
	for _, f := range l.Common {
		declare(path.Join(commonDir, f), "common")
	}
	l.validateAPI(fail)

	seen := map[string]bool{}
	for _, e := range l.Exercises {
		who := "exercise " + e.ID
		switch {
		case e.ID == "":
			fail("exercise %d has no id", e.Number)
		case seen[e.ID]:
			fail("exercise id %q is used twice", e.ID)
		case strings.ContainsAny(e.ID, " /\\") || e.ID == strconv.Itoa(e.Number) || isNumber(e.ID):
			fail("exercise id %q must be a word (numbers address exercises by position)", e.ID)
		}
		seen[e.ID] = true
		l.checkText(who+" title", e.Title, fail)
		if e.Package == "" || path.Clean(e.Package) != e.Package || strings.HasPrefix(e.Package, "..") {
			fail("%s: package %q must be a clean relative folder", who, e.Package)
		}
		if e.Timeout.Duration <= 0 {
			fail("%s: timeout is required", who)
		}
		if e.Points < 1 {
			fail("%s: points must be at least 1", who)
		}
		if len(e.Files) == 0 || len(e.Checks) == 0 {
			fail("%s: needs files and checks", who)
		}
		for _, f := range e.Files {
			if path.Dir(f) != e.Package {
				fail("%s: file %s is outside its package %s", who, f, e.Package)
			}
			if strings.HasSuffix(f, "_test.go") {
				fail("%s: learner file %s must not be a test file (the checker ignores them)", who, f)
			}
			declare(path.Join(starterDir, f), who)
			declare(path.Join(solutionDir, f), who)
			if b, err := e.Starter(f); err == nil && !strings.Contains(string(b), TODOMarker) {
				fail("%s: starter %s has no %s marker", who, f, TODOMarker)
			}
		}
		for _, c := range e.Checks {
			if path.Dir(c) != e.Package || !strings.HasSuffix(c, "_test.go") {
				fail("%s: check %s must be a _test.go file in %s", who, c, e.Package)
			}
			declare(path.Join(checksDir, c), who)
		}
		for _, lang := range Languages {
			if len(e.Hints[lang]) < 2 {
				fail("%s: needs at least 2 hints in %s", who, lang)
			}
			declare(path.Join(instructionsDir, lang, e.ID+".md"), who)
		}
	}

	if r := l.Runner; r != nil {
		if _, err := l.Exercise(r.Exercise); err != nil {
			fail("runner: %v", err)
		}
		if path.Dir(r.Program) != runnerDir || path.Ext(r.Program) != ".go" {
			fail("runner: program %s must be a .go file in %s/", r.Program, runnerDir)
		}
		declare(r.Program, "runner")
		if r.Sample.Kind == "" || r.Sample.Name == "" || len(r.Sample.Spec) == 0 || r.Sample.Update == "" {
			fail("runner: sample needs kind, name, spec and update")
		}
		if field, ok := strings.CutPrefix(r.Sample.Update, "spec."); !ok || r.Sample.Spec[field] == nil {
			fail("runner: sample update %q must name a field of its spec (spec.<field>)", r.Sample.Update)
		}
	}

	// Every file in the folder must be declared, so nothing ships by accident
	// and nothing declared is silently ignored.
	walkErr := fs.WalkDir(l.root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if _, ok := declared[p]; !ok {
				fail("%s is not declared in lab.yaml", p)
			}
		}
		return nil
	})
	if walkErr != nil {
		fail("walk lab folder: %v", walkErr)
	}
	return errors.Join(errs...)
}

func (l *Lab) checkText(what string, t Text, fail func(string, ...any)) {
	for _, lang := range Languages {
		if strings.TrimSpace(t[lang]) == "" {
			fail("%s has no %s text", what, lang)
		}
	}
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// validateAPI checks a lab that uses the operator's API: its _common/ has
// the package's groupversion_info.go declaring the lab's group and no API
// file of its own, and each kind's CRD, moved to that group, decodes with
// the operator's schema.
func (l *Lab) validateAPI(fail func(string, ...any)) {
	if l.API == nil {
		return
	}
	if l.API.Group == "" || l.API.Group == v1alpha1.GroupVersion.Group || len(l.API.Kinds) == 0 {
		fail("api: needs kinds and a group other than the operator's %s", v1alpha1.GroupVersion.Group)
		return
	}
	info := path.Join(APIDir, "groupversion_info.go")
	for _, f := range l.Common {
		if path.Dir(f) == APIDir && f != info {
			fail("common file %s: the API's files are the operator's; only %s is the lab's", f, info)
		}
	}
	if !slices.Contains(l.Common, info) {
		fail("api: common must hold %s (declaring group %s)", info, l.API.Group)
	} else if b, err := fs.ReadFile(l.root, path.Join(commonDir, info)); err == nil && !strings.Contains(string(b), strconv.Quote(l.API.Group)) {
		fail("%s does not declare the group %s that lab.yaml's api names", info, l.API.Group)
	}
	moved, err := l.CustomResourceDefinitions()
	if err != nil {
		fail("api: %v", err)
		return
	}
	for _, crd := range moved[len(l.CRDs):] {
		if crd.Spec.Group != l.API.Group || crd.Name != crd.Spec.Names.Plural+"."+l.API.Group {
			fail("api: the CRD for %s did not move to group %s (name %s, group %s)", crd.Spec.Names.Kind, l.API.Group, crd.Name, crd.Spec.Group)
		}
	}
}
