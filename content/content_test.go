package content

import (
	"go/scanner"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParity: every lesson exists in every language with the catalog's
// sections, in the same order, each with a title and text.
func TestParity(t *testing.T) {
	for _, id := range LessonIDs() {
		var reference *Lesson
		for _, lang := range Languages {
			l, err := Load(id, lang)
			if err != nil {
				t.Errorf("lesson %s (%s): %v", id, lang, err)
				continue
			}
			if l.Title == "" || l.Intro == "" {
				t.Errorf("lesson %s (%s): missing title or introduction", id, lang)
			}
			for _, s := range l.Sections {
				if strings.TrimSpace(s.Title) == "" || len(strings.TrimSpace(s.Body)) < 200 {
					t.Errorf("lesson %s (%s) section %s: title %q, %d bytes of text: too little", id, lang, s.ID, s.Title, len(s.Body))
				}
			}
			if reference == nil {
				reference = l
				continue
			}
			if !slices.Equal(l.SectionIDs(), reference.SectionIDs()) {
				t.Errorf("lesson %s: sections differ between %s %v and %s %v", id, reference.Lang, reference.SectionIDs(), lang, l.SectionIDs())
			}
		}
	}
}

// TestTranslationsShareCode: a translation changes prose and comments, never
// code. Per section, the code blocks of every language must be the same
// blocks, of the same kinds, with the same Go tokens once comments are
// dropped. (Diagrams and shell blocks may be translated.)
func TestTranslationsShareCode(t *testing.T) {
	type key struct{ lesson, section string }
	byLang := map[string]map[key][]codeBlock{}
	for _, b := range allBlocks(t) {
		if byLang[b.lang] == nil {
			byLang[b.lang] = map[key][]codeBlock{}
		}
		k := key{b.lesson, b.section}
		byLang[b.lang][k] = append(byLang[b.lang][k], b)
	}
	for k, en := range byLang[English] {
		for _, lang := range Languages[1:] {
			other := byLang[lang][k]
			if kinds(en) != kinds(other) {
				t.Errorf("lesson %s section %s: code blocks %s in en, %s in %s", k.lesson, k.section, kinds(en), kinds(other), lang)
				continue
			}
			for i := range en {
				if !strings.HasPrefix(en[i].kind, "go") {
					continue
				}
				if a, b := goTokens(en[i].code), goTokens(other[i].code); a != b {
					t.Errorf("lesson %s section %s: go block %d differs between en and %s beyond comments:\n en: %s\n %s: %s",
						k.lesson, k.section, i+1, lang, firstDifference(a, b), lang, firstDifference(b, a))
				}
			}
		}
	}
}

func kinds(blocks []codeBlock) string {
	var ks []string
	for _, b := range blocks {
		ks = append(ks, b.kind)
	}
	return "[" + strings.Join(ks, " ") + "]"
}

// goTokens is the code's token stream without comments, one token per line.
func goTokens(code string) string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	src := []byte(code)
	s.Init(fset.AddFile("", fset.Base(), len(src)), src, nil, 0)
	var b strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return b.String()
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		b.WriteString(tok.String() + " " + lit + "\n")
	}
}

// firstDifference shows where a starts to differ from b.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range al {
		if i >= len(bl) || al[i] != bl[i] {
			return strings.Join(al[i:min(i+4, len(al))], " ")
		}
	}
	return "(end)"
}

// wrongPatterns are mistakes of the original lessons (DESIGN.md, "What the
// lessons get wrong"). A plain go block must never contain them; where a
// lesson shows one, it is in a go-wrong block.
var wrongPatterns = map[string]*regexp.Regexp{
	"options removed in v0.16":              regexp.MustCompile(`MetricsBindAddress|\bPort:\s*9443,\n\s*HealthProbe`),
	"deprecated Requeue: true":              regexp.MustCompile(`Requeue:\s*true`),
	"RequeueAfter returned with an error":   regexp.MustCompile(`RequeueAfter:[^}]*\},\s*err\b`),
	"Duration times float64 (math.Pow)":     regexp.MustCompile(`time\.(Second|Minute)\s*\*\s*math\.Pow`),
	"reconciler-wide lastAPICall (a race)":  regexp.MustCompile(`lastAPICall`),
	"NotFound returned as an error":         regexp.MustCompile(`r\.Get\(ctx, req\.NamespacedName, [^)]*\); err != nil \{\n\s*return ctrl\.Result\{\}, err\n`),
	"breaker state without synchronization": regexp.MustCompile(`(?s)type CircuitBreaker struct \{[^}]*state\s+string[^}]*\}`),
}

// TestWrongCodeIsMarked: code from the original lessons that is wrong for
// v0.25 must be shown as a go-wrong block, and a go-wrong block must say so
// in its first line, so a reader who copies code never copies it unwarned.
func TestWrongCodeIsMarked(t *testing.T) {
	warning := map[string]string{English: "// Don't do this", Russian: "// Так не делайте"}
	wrongBlocks := 0
	for _, b := range allBlocks(t) {
		switch b.kind {
		case fenceGo:
			for name, re := range wrongPatterns {
				if re.MatchString(b.code) {
					t.Errorf("%s: a go block contains %s; show it as ```%s with a warning, or fix it", b.where(), name, fenceGoWrong)
				}
			}
		case fenceGoWrong:
			wrongBlocks++
			if !strings.HasPrefix(b.code, warning[b.lang]) {
				t.Errorf("%s: a %s block must start with %q, got %q", b.where(), fenceGoWrong, warning[b.lang], strings.SplitN(b.code, "\n", 2)[0])
			}
		case fenceGoFragment, "text", "sh":
		default:
			t.Errorf("%s: unknown code block kind %q (use go, go-wrong, go-fragment, text or sh)", b.where(), b.kind)
		}
	}
	if wrongBlocks == 0 {
		t.Error("no go-wrong blocks found: the corrections of the original lessons are missing")
	}
	// The patterns themselves must keep catching what they are for.
	for name, sample := range map[string]string{
		"RequeueAfter returned with an error": "return ctrl.Result{RequeueAfter: 5 * time.Second}, err",
		"deprecated Requeue: true":            "return ctrl.Result{Requeue: true}, nil",
	} {
		if !wrongPatterns[name].MatchString(sample) {
			t.Errorf("pattern %q no longer matches %q", name, sample)
		}
	}
}

// maxCodeColumns keeps code and diagrams intact on an 80-column terminal:
// the renderer indents code blocks by 4 columns and wraps anything longer,
// which breaks diagrams and Go code alike. Tabs count as the 4 spaces they
// are displayed as. kubebuilder markers are exempt: a marker must be one line.
const maxCodeColumns = 76

// TestLessonsRenderWell checks the markdown against things glamour renders
// badly.
func TestLessonsRenderWell(t *testing.T) {
	codeInBold := regexp.MustCompile("\\*\\*[^*\n]*`[^*\n]*\\*\\*")
	for _, l := range allLessons(t) {
		{
			for _, s := range l.Sections {
				where := "lessons/" + l.ID + "/" + l.Lang + ".md, section " + s.ID
				inFence := false
				for _, line := range strings.Split(s.Body, "\n") {
					if isFence(line) {
						inFence = !inFence
						continue
					}
					if inFence {
						if strings.HasPrefix(line, "// +kubebuilder:") {
							continue
						}
						if w := utf8.RuneCountInString(strings.ReplaceAll(line, "\t", "    ")); w > maxCodeColumns {
							t.Errorf("%s: code line is %d columns (max %d): %s", where, w, maxCodeColumns, line)
						}
						continue
					}
					if strings.HasPrefix(line, ">") {
						t.Errorf("%s: blockquotes are mis-wrapped by the renderer; use a paragraph: %s", where, line)
					}
					if codeInBold.MatchString(line) {
						t.Errorf("%s: inline code inside bold renders badly: %s", where, codeInBold.FindString(line))
					}
				}
			}
		}
	}
}
