package content

import (
	"strings"
	"testing"
)

// TestResultTableWritesDurationsInTheLessonsLanguage: the Russian lesson
// writes its units as Russian text does ("5 мс"), the English one as Go
// prints them ("5ms").
func TestResultTableWritesDurationsInTheLessonsLanguage(t *testing.T) {
	for lang, want := range map[string]string{
		English: "5ms, 10ms, 20ms, … at most 1000s (16m40s)",
		Russian: "5 мс, 10 мс, 20 мс, … не больше 1000 с (16 мин 40 с)",
	} {
		if table := resultTable(lang); !strings.Contains(table, want) {
			t.Errorf("%s result table has no %q:\n%s", lang, want, table)
		}
	}
}
