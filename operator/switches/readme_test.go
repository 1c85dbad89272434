package switches_test

import (
	"os"
	"strings"
	"testing"

	"github.com/operator-lab/lab/operator/switches"
)

// TestReadmeListsEachSwitchForTheLabsThatReadIt: the README's switch
// list names every switch with its values, and lists those of lab 4.4's
// controller alone after "in lab 4.4 only", so it never offers lab 3.1 a
// switch that would change nothing.
func TestReadmeListsEachSwitchForTheLabsThatReadIt(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	start := strings.Index(text, "Switches (`--set`")
	if start < 0 {
		t.Fatal("the README has no paragraph beginning \"Switches (`--set`\"")
	}
	para := text[start:]
	para = para[:strings.Index(para, ". ")+1]
	every, only44, ok := strings.Cut(para, "in lab 4.4 only")
	if !ok {
		t.Fatalf("the README's switch paragraph has no \"in lab 4.4 only\" part: %s", para)
	}
	for _, s := range switches.All() {
		mention := "`" + s.Name + "="
		if s.Valid != nil {
			mention += strings.Join(s.Valid, "|") + "`"
		}
		want, other := every, only44
		if len(s.Labs) == 1 && s.Labs[0] == "4.4" {
			want, other = only44, every
		}
		if !strings.Contains(want, mention) || strings.Contains(other, "`"+s.Name+"=") {
			t.Errorf("README: %s (labs %v) is not listed where it belongs as %s: %s", s.Name, s.Labs, mention, para)
		}
	}
}
