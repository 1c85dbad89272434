package checker

import (
	"fmt"
	"io"
	"sync"
)

// outputLimit is how much of one stream of output (a check's, a package's,
// the go command's stderr) is kept at each end: learner code can print
// without end, and a grade must not cost lab gigabytes. What a verdict is
// read from — a panic, a timeout, a race report — comes at the end or near
// it, or is short.
const outputLimit = 1 << 20

// boundedText keeps the first and the last outputLimit bytes written to
// it, and counts the bytes dropped between them. It is safe for one
// writer and readers after it (a mutex guards its use as a command's stderr).
type boundedText struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped int64
}

var _ io.Writer = (*boundedText)(nil)

func (b *boundedText) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := outputLimit - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - outputLimit; over > outputLimit {
		// Cut back to the limit only once the tail is twice it: appends
		// stay cheap.
		b.dropped += int64(over)
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *boundedText) WriteString(s string) (int, error) { return b.Write([]byte(s)) }

// Len is how many bytes it holds.
func (b *boundedText) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.head) + len(b.tail)
}

// String is the head, a line saying how much was dropped if anything was,
// and the tail.
func (b *boundedText) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	dropped := b.dropped
	if over := len(tail) - outputLimit; over > 0 {
		dropped += int64(over)
		tail = tail[over:]
	}
	if dropped == 0 {
		return string(b.head) + string(tail)
	}
	return fmt.Sprintf("%s\n… %d bytes of output left out …\n%s", b.head, dropped, tail)
}
