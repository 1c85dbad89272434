package checker

import (
	"bufio"
	"strings"
	"testing"
)

// TestBoundedTextKeepsBothEnds: endless output costs at most a few
// outputLimits, and what is kept is the beginning and the end, with a line
// saying how much went.
func TestBoundedTextKeepsBothEnds(t *testing.T) {
	var b boundedText
	b.WriteString("first line\n")
	chunk := strings.Repeat("x", 4096) + "\n"
	total := 0
	for total < 20*outputLimit {
		b.WriteString(chunk)
		total += len(chunk)
	}
	b.WriteString("last line\n")
	if n := len(b.head) + len(b.tail); n > 3*outputLimit {
		t.Fatalf("holds %d bytes after %d written, want at most %d", n, total, 3*outputLimit)
	}
	s := b.String()
	if !strings.HasPrefix(s, "first line\n") || !strings.HasSuffix(s, "last line\n") || !strings.Contains(s, "bytes of output left out") {
		t.Fatalf("kept %d bytes: begins %q, ends %q", len(s), s[:20], s[len(s)-20:])
	}
	if len(s) > 2*outputLimit+100 {
		t.Errorf("String is %d bytes, want about %d", len(s), 2*outputLimit)
	}
}

// TestParseTestJSONSurvivesAnEndlessLine: a line of text longer than any
// buffer is cut, not an error, and the events after it are still read.
func TestParseTestJSONSurvivesAnEndlessLine(t *testing.T) {
	stream := strings.Repeat("y", 3*outputLimit) + "\n" +
		`{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
		`{"Action":"pass","Package":"p","Test":"TestA"}` + "\n"
	runs := map[string]*packageRun{}
	if err := parseTestJSON(bufio.NewReader(strings.NewReader(stream)), runs); err != nil {
		t.Fatal(err)
	}
	if got := runs[""].output.Len(); got > outputLimit+1 {
		t.Errorf("kept %d bytes of the long line, want it cut at %d", got, outputLimit)
	}
	if a := runs["p"].tests["TestA"]; a == nil || a.action != "pass" {
		t.Errorf("the event after the long line was lost: %+v", runs["p"])
	}
}
