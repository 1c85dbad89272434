package content

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	databasev1 "github.com/operator-lab/lab/operator/api/v1alpha1"
)

// The tests in this file hold lesson 4.4 to the model it teaches: the
// reference operator's Database API in operator/api/v1alpha1. The snippets
// that compile are already checked by TestGoBlocksCompile; these tests cover
// what a compiler does not see: names in the prose, in diagrams, in
// fragments and in wrong code, the transition table the lesson prints, and
// the walkthroughs the lesson tells.

// modelLesson is the lesson whose examples are the Database API.
const modelLesson = "4.4"

// apiDir is the API package's source, relative to this package.
const apiDir = "../operator/api/v1alpha1"

// apiModel is what the lesson may name: the API package's exported
// constants by kind, and its JSON field names.
type apiModel struct {
	names      map[string]bool // every exported top-level name of the package
	constants  map[string]string
	phases     map[string]bool // values
	conditions map[string]bool // values of Condition* constants
	reasons    map[string]bool // values of Reason* constants
	spec       map[string]bool // DatabaseSpec's JSON fields
	status     map[string]bool // DatabaseStatus's JSON fields
}

// loadModel reads the API package's exported constants from its source
// (Go has no reflection on constants), and checks them against the compiled
// package, so the sets cannot come from some other copy of the files.
func loadModel(t *testing.T) apiModel {
	t.Helper()
	m := apiModel{
		names: map[string]bool{}, constants: map[string]string{},
		phases: map[string]bool{}, conditions: map[string]bool{}, reasons: map[string]bool{},
		spec: jsonFields(reflect.TypeFor[databasev1.DatabaseSpec]()), status: jsonFields(reflect.TypeFor[databasev1.DatabaseStatus]()),
	}
	files, err := filepath.Glob(filepath.Join(apiDir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", apiDir, err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					m.names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						m.names[s.Name.Name] = s.Name.IsExported()
					case *ast.ValueSpec:
						for i, name := range s.Names {
							if !name.IsExported() {
								continue
							}
							m.names[name.Name] = true
							if d.Tok != token.CONST || i >= len(s.Values) {
								continue
							}
							if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								value, _ := strconv.Unquote(lit.Value)
								m.constants[name.Name] = value
							}
						}
					}
				}
			}
		}
	}
	for name, value := range m.constants {
		switch {
		case strings.HasPrefix(name, "Phase"):
			m.phases[value] = true
		case strings.HasPrefix(name, "Condition"):
			m.conditions[value] = true
		case strings.HasPrefix(name, "Reason"):
			m.reasons[value] = true
		}
	}

	// The compiled package agrees with what was parsed.
	var compiled []string
	for _, p := range databasev1.Phases() {
		compiled = append(compiled, string(p))
		if m.constants["Phase"+string(p)] != string(p) {
			t.Errorf("v1alpha1.Phases() has %q, but the source has no constant Phase%s = %q", p, p, p)
		}
	}
	if got := slices.Sorted(maps.Keys(m.phases)); !slices.Equal(got, slices.Sorted(slices.Values(compiled))) {
		t.Errorf("Phase constants in the source %v, v1alpha1.Phases() %v", got, compiled)
	}
	for name, value := range map[string]string{
		"ConditionReady": databasev1.ConditionReady, "ConditionFailed": databasev1.ConditionFailed,
		"ConditionExternalSystemAvailable": databasev1.ConditionExternalSystemAvailable,
		"ReasonUnavailable":                databasev1.ReasonUnavailable, "ReasonCircuitOpen": databasev1.ReasonCircuitOpen,
		"ReasonInvalidSpec": databasev1.ReasonInvalidSpec, "ReasonRecovered": databasev1.ReasonRecovered,
	} {
		if m.constants[name] != value {
			t.Errorf("parsed %s = %q, compiled %q: %s is not the package's source", name, m.constants[name], value, apiDir)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return m
}

// jsonFields are the JSON names of a struct's fields.
func jsonFields(typ reflect.Type) map[string]bool {
	fields := map[string]bool{}
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = true
		}
	}
	return fields
}

// modelLessons loads lesson 4.4 in every language.
func modelLessons(t *testing.T) []*Lesson {
	t.Helper()
	var lessons []*Lesson
	for _, lang := range Languages {
		l, err := Load(modelLesson, lang)
		if err != nil {
			t.Fatal(err)
		}
		lessons = append(lessons, l)
	}
	return lessons
}

// prose is a section's text with its fenced blocks left out.
func prose(s Section) string {
	var b strings.Builder
	in := false
	for line := range strings.SplitSeq(s.Body, "\n") {
		if isFence(line) {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
			b.WriteString("\n")
		}
	}
	return b.String()
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// modelName is a Go name the API package would define: PhaseReady,
	// databasev1.ConditionFailed, ReasonUnavailable. The qualifier tells
	// metav1.ConditionTrue apart.
	modelName = regexp.MustCompile(`(?:\b(\w+)\.)?\b((?:Phase|Condition|Reason)[A-Z]\w*)`)
	// qualified is any name taken from the API package in code.
	qualified = regexp.MustCompile(`\bdatabasev1\.(\w+)`)
	// conditionState is Type=Status, with a reason after a slash or in
	// parentheses: ExternalSystemAvailable=False/Unavailable,
	// `Failed=False` (`Recovered`).
	conditionState = regexp.MustCompile("\\b(\\w+)=(True|False|Unknown)\\b(?:/(\\w+)|`? \\(`(\\w+)`\\))?")
	// reasonSpan is a code span the prose calls a reason ("with reason
	// `Unavailable`", "с причиной `Unavailable`").
	reasonSpan = regexp.MustCompile("(?i)(?:\\breasons?|причин\\p{L}*)\\s+`(\\w+)`")
	// dottedField is spec.x or status.x in the prose.
	dottedField = regexp.MustCompile(`\b(spec|status)\.([a-z]\w*)`)
	// camelWord is a code span of one capitalised word.
	camelWord = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// TestLessonNamesAreTheModels: every phase, condition type, reason and
// Database field lesson 4.4 names — in code spans, diagrams and code of every
// kind, in every language — is one the API package defines.
func TestLessonNamesAreTheModels(t *testing.T) {
	m := loadModel(t)
	queueCalls := map[QueueCall]bool{}
	for _, c := range ResultCases {
		for _, call := range c.Calls {
			queueCalls[call] = true
		}
	}
	// Tests that replay what the lesson claims of the operator.
	scenarioTests := testNames(t, "../operator/scenario")
	maps.Copy(scenarioTests, testNames(t, "../operator"))
	for _, l := range modelLessons(t) {
		var goIdents = map[string]bool{}
		for _, s := range l.Sections {
			for _, b := range sectionBlocks(l, s) {
				if strings.HasPrefix(b.kind, "go") {
					for _, id := range goIdentifiers(b.code) {
						goIdents[id] = true
					}
				}
			}
		}
		intro := Section{ID: "(introduction)", Body: l.Intro}
		for _, s := range append([]Section{intro}, l.Sections...) {
			where := "lessons/" + l.ID + "/" + l.Lang + ".md, section " + s.ID
			text := prose(s)
			var code []string // every block, and every code span of the prose
			for _, b := range sectionBlocks(l, s) {
				code = append(code, b.code)
				if strings.HasPrefix(b.kind, "go") {
					checkGoLiterals(t, m, where+" ("+b.kind+" block)", b.code)
				}
			}
			for _, span := range codeSpan.FindAllStringSubmatch(text, -1) {
				code = append(code, span[1])
				word := span[1]
				switch {
				case !camelWord.MatchString(word):
				case m.phases[word], m.conditions[word], m.reasons[word], m.names[word], goIdents[word]:
				case strings.HasPrefix(word, "Test") && scenarioTests[word]:
				case queueCalls[QueueCall(word)]: // the work queue's, as the Result table names them
				case word == "GenerateName": // metav1.ObjectMeta's
				default:
					t.Errorf("%s: `%s` is no phase, condition or reason of %s, and no name of the lesson's code", where, word, apiDir)
				}
			}
			all := strings.Join(code, "\n") // blocks and code spans
			blocks := strings.Join(code[:len(sectionBlocks(l, s))], "\n")
			for _, match := range modelName.FindAllStringSubmatch(all, -1) {
				if q := match[1]; q != "" && q != "databasev1" {
					continue // metav1.ConditionTrue and the like
				}
				if _, ok := m.constants[match[2]]; !ok {
					t.Errorf("%s: %s is not a constant of %s", where, match[0], apiDir)
				}
			}
			for _, match := range qualified.FindAllStringSubmatch(all, -1) {
				if !m.names[match[1]] {
					t.Errorf("%s: %s: the API package has no %s", where, match[0], match[1])
				}
			}
			for _, match := range conditionState.FindAllStringSubmatch(blocks+"\n"+text, -1) {
				if !m.conditions[match[1]] {
					t.Errorf("%s: %s: %q is no condition type of %s", where, match[0], match[1], apiDir)
				}
				for _, reason := range match[3:] {
					if reason != "" && !m.reasons[reason] {
						t.Errorf("%s: %s: %q is no reason of %s", where, match[0], reason, apiDir)
					}
				}
			}
			for _, match := range reasonSpan.FindAllStringSubmatch(text, -1) {
				if !m.reasons[match[1]] {
					t.Errorf("%s: %q: %q is no reason of %s", where, match[0], match[1], apiDir)
				}
			}
			for _, match := range dottedField.FindAllStringSubmatch(blocks+"\n"+text, -1) {
				fields := map[string]map[string]bool{"spec": m.spec, "status": m.status}[match[1]]
				if !fields[match[2]] {
					t.Errorf("%s: %s: a Database has no %s field %q", where, match[0], match[1], match[2])
				}
			}
		}
	}
}

// goIdentifiers are the identifiers of a code block.
func goIdentifiers(code string) []string {
	var ids []string
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(code)), []byte(code), nil, 0)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return ids
		}
		if tok == token.IDENT {
			ids = append(ids, lit)
		}
	}
}

// checkGoLiterals: a string literal that code uses as a condition type, a
// reason or a phase (Type: "Ready", Reason: "Unavailable", Phase: "Failed",
// meta.FindStatusCondition(conds, "Ready")) is one of the model's.
func checkGoLiterals(t *testing.T, m apiModel, where, code string) {
	t.Helper()
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(code)), []byte(code), nil, 0)
	var field, call string // the identifier before the last ':', the function of the last '('
	var last token.Token
	var ident string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return
		}
		switch tok {
		case token.COLON:
			field = ident
		case token.LPAREN:
			call = ident
		case token.STRING:
			value, _ := strconv.Unquote(lit)
			var set map[string]bool
			switch {
			case last == token.COLON && field == "Type":
				set = m.conditions
			case last == token.COLON && field == "Reason":
				set = m.reasons
			case last == token.COLON && field == "Phase":
				set = m.phases
			case (last == token.COMMA || last == token.LPAREN) && strings.Contains(call, "StatusCondition"):
				set = m.conditions
			}
			if set != nil && !set[value] {
				t.Errorf("%s: the string %s, used as a condition type, reason or phase, is not in %s", where, lit, apiDir)
			}
		}
		if tok == token.IDENT {
			ident = lit
		}
		last = tok
	}
}

// testNames are the test functions of a package's directory.
func testNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllStringSubmatch(string(src), -1) {
			names[m[1]] = true
		}
	}
	return names
}

// TestLessonTransitionTableIsTheModels: the transition table lesson 4.4
// prints (the Go map in its state-machine section) is v1alpha1's, phase for
// phase and in order; and every move "From → To" its prose states is one the
// table allows.
func TestLessonTransitionTableIsTheModels(t *testing.T) {
	m := loadModel(t)
	for _, l := range modelLessons(t) {
		s, err := l.Section("state-machine")
		if err != nil {
			t.Fatal(err)
		}
		var table map[databasev1.Phase][]databasev1.Phase
		for _, b := range sectionBlocks(l, s) {
			if b.kind == fenceGo && strings.Contains(b.code, "var transitions = map[") {
				table = parseTransitions(t, m, b)
			}
		}
		if table == nil {
			t.Errorf("lessons/%s/%s.md, section state-machine: no go block with `var transitions = map[...]`", l.ID, l.Lang)
			continue
		}
		from := append([]databasev1.Phase{""}, databasev1.Phases()...)
		for _, p := range from {
			if got, want := table[p], databasev1.NextPhases(p); !slices.Equal(got, want) {
				t.Errorf("lessons/%s/%s.md: the lesson's transitions[%q] = %v, v1alpha1.NextPhases(%q) = %v", l.ID, l.Lang, p, got, p, want)
			}
		}
		for p := range table {
			if !slices.Contains(from, p) {
				t.Errorf("lessons/%s/%s.md: the lesson's transitions has a phase %q that v1alpha1 does not", l.ID, l.Lang, p)
			}
		}
		for _, s := range l.Sections {
			for _, e := range proseEdges(m, prose(s)) {
				if !databasev1.CanTransition(databasev1.Phase(e.from), databasev1.Phase(e.to)) {
					t.Errorf("lessons/%s/%s.md, section %s: the text says %q → %q, which v1alpha1's table does not allow", l.ID, l.Lang, s.ID, e.from, e.to)
				}
			}
		}
	}
}

// parseTransitions reads the lesson's map[Phase][]Phase literal; its keys
// and values are "" or the Phase* constants, read as their values.
func parseTransitions(t *testing.T, m apiModel, b codeBlock) map[databasev1.Phase][]databasev1.Phase {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), b.where(), "package p\n\n"+b.code, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	phase := func(e ast.Expr) databasev1.Phase {
		switch e := e.(type) {
		case *ast.BasicLit:
			v, _ := strconv.Unquote(e.Value)
			return databasev1.Phase(v)
		case *ast.Ident:
			if v, ok := m.constants[e.Name]; ok && strings.HasPrefix(e.Name, "Phase") {
				return databasev1.Phase(v)
			}
		case *ast.SelectorExpr:
			if v, ok := m.constants[e.Sel.Name]; ok && strings.HasPrefix(e.Sel.Name, "Phase") {
				return databasev1.Phase(v)
			}
		}
		t.Errorf("%s: %T in the transitions map is not a phase", b.where(), e)
		return "?"
	}
	table := map[databasev1.Phase][]databasev1.Phase{}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "transitions" || len(spec.Values) != 1 {
			return true
		}
		lit, ok := spec.Values[0].(*ast.CompositeLit)
		if !ok {
			t.Fatalf("%s: transitions is not a map literal", b.where())
		}
		for _, elt := range lit.Elts {
			kv := elt.(*ast.KeyValueExpr)
			to := []databasev1.Phase{}
			for _, v := range kv.Value.(*ast.CompositeLit).Elts {
				to = append(to, phase(v))
			}
			table[phase(kv.Key)] = to
		}
		return false
	})
	return table
}

// edge is one move the prose states.
type edge struct{ from, to string }

var (
	arrow      = regexp.MustCompile(`→`)
	proseNoise = strings.NewReplacer("**", "", "`", "", "*", "")
)

// proseEdges are the moves "From → To" a text states, in order: every arrow
// with a phase right after it, and the phase right before it or, at the
// start of a chain ("→ Pending"), the empty phase of a new object. Arrows
// between other words (closed → open) are not moves of a Database.
func proseEdges(m apiModel, text string) []edge {
	text = proseNoise.Replace(text)
	var edges []edge
	for _, loc := range arrow.FindAllStringIndex(text, -1) {
		after := strings.Fields(text[loc[1]:])
		if len(after) == 0 {
			continue
		}
		to := strings.TrimRight(after[0], ".,;:)")
		if !m.phases[to] {
			continue
		}
		from := ""
		if before := strings.Fields(text[:loc[0]]); len(before) > 0 {
			word := before[len(before)-1]
			switch r, _ := utf8.DecodeLastRuneInString(word); {
			case m.phases[strings.TrimLeft(word, "([")]:
				from = strings.TrimLeft(word, "([")
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				continue // "closed → open", or a word the model does not know
			}
		}
		edges = append(edges, edge{from, to})
	}
	return edges
}

// TestLessonTellsItsWalkthroughs: each walkthrough in Walkthroughs is told
// by its section of the lesson, in every language: the section's text
// states the walkthrough's phase changes as "From → To", in the
// walkthrough's order (other moves may come in between; a new object's
// "→ Pending" may be told as a chain that starts at Pending), and names the
// walkthrough.
func TestLessonTellsItsWalkthroughs(t *testing.T) {
	m := loadModel(t)
	if len(Walkthroughs) == 0 {
		t.Fatal("no walkthroughs")
	}
	for _, w := range Walkthroughs {
		for _, lang := range Languages {
			l, err := Load(w.Lesson, lang)
			if err != nil {
				t.Fatal(err)
			}
			s, err := l.Section(w.Section)
			if err != nil {
				t.Errorf("walkthrough %s: %v", w.ID, err)
				continue
			}
			where := "lessons/" + l.ID + "/" + lang + ".md, section " + s.ID
			text := prose(s)
			if !strings.Contains(text, "`"+w.ID+"`") {
				t.Errorf("%s: does not name the walkthrough `%s`", where, w.ID)
			}
			told := proseEdges(m, text)
			next := 0
			for _, change := range w.Phases {
				from, to, ok := strings.Cut(change, "→")
				if !ok {
					t.Fatalf("walkthrough %s: phase change %q has no →", w.ID, change)
				}
				i := slices.IndexFunc(told[next:], func(e edge) bool {
					// A new object's first phase: "→ Pending", or a chain
					// that starts at it ("Pending → Provisioning").
					return e == edge{from, to} || from == "" && e.from == to
				})
				if i < 0 {
					t.Errorf("%s: walkthrough %s goes %s, but the text does not say %q → %q after %v; it says %v",
						where, w.ID, strings.Join(w.Phases, ", "), from, to, told[:next], told)
					break
				}
				if told[next+i] == (edge{from, to}) {
					next += i + 1
				} else {
					next += i // the chain's first move is the next change
				}
			}
		}
	}
}
