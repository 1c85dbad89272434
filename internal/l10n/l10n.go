// Package l10n is lab's one mechanism for interface text: the words of the
// live view, the CLI's reports and messages, in the learner's language.
//
// The English text is the key. Code writes it where it is used —
// p.Text("Work queue"), p.Textf("%d waiting", n), p.Count(n, "%d call",
// "%d calls") — and the Russian catalog (russian.go) maps each key to its
// translation; a text the catalog lacks shows in English. Text kept in a
// table before it is shown is marked with Mark, so that the catalog test
// finds every key in the source: no key without its translation, no
// translation without its key.
//
// The catalog is ours, not golang.org/x/text/message's: that package also
// formats numbers by locale (1000 becomes "1,000" in English), which would
// change resource versions, ports and durations on screen.
package l10n

import (
	"fmt"
)

// Printer renders interface text in one language. Its zero value is English.
type Printer struct{ russian bool }

// For returns the printer of lang ("ru" is Russian; anything else English).
func For(lang string) Printer { return Printer{russian: lang == "ru"} }

// Russian says whether p renders Russian.
func (p Printer) Russian() bool { return p.russian }

// Lang is p's language code.
func (p Printer) Lang() string {
	if p.russian {
		return "ru"
	}
	return "en"
}

// Text returns text in p's language.
func (p Printer) Text(text string) string {
	if p.russian {
		if t, ok := russian[text]; ok {
			return t
		}
	}
	return text
}

// TextAs returns text in p's language as it reads in context: one English
// word can need two Russian ones (a grade "failed" is «не пройдено», a
// start-up step's «ошибка»). The catalog's key is context|text.
func (p Printer) TextAs(context, text string) string {
	if p.russian {
		if t, ok := russian[context+"|"+text]; ok {
			return t
		}
	}
	return text
}

// Textf formats args with format in p's language.
func (p Printer) Textf(format string, args ...any) string {
	return fmt.Sprintf(p.Text(format), args...)
}

// Count formats n with the form of the count it needs: one or many in
// English; Russian's three forms (1 вызов, 2 вызова, 5 вызовов) come from
// the catalog under the key one. Both forms take n as their first verb.
func (p Printer) Count(n int, one, many string, args ...any) string {
	args = append([]any{n}, args...)
	if p.russian {
		if forms, ok := russianCounts[one]; ok {
			return fmt.Sprintf(forms[russianForm(n)], args...)
		}
	}
	if n == 1 {
		return fmt.Sprintf(one, args...)
	}
	return fmt.Sprintf(many, args...)
}

// russianForm picks which of Russian's three count forms n takes: 0 for
// 1, 21, 101; 1 for 2–4, 22–24; 2 for 0, 5–20, 25–30 and the rest.
func russianForm(n int) int {
	if n < 0 {
		n = -n
	}
	switch d, h := n%10, n%100; {
	case d == 1 && h != 11:
		return 0
	case d >= 2 && d <= 4 && (h < 12 || h > 14):
		return 1
	}
	return 2
}

// Mark returns text unchanged. It marks a key kept in a table (a help
// line, a label) that a Printer renders later, so the catalog test sees it.
func Mark(text string) string { return text }
