package eventtext

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/operator-lab/lab/observe"
)

// PrinterOptions say where a Printer writes, and how.
type PrinterOptions struct {
	// Out receives the events: one aligned line each, or JSON Lines with JSON.
	Out io.Writer
	// JSON writes the events as JSON Lines instead of text.
	JSON bool
	// Text is how the text lines look (its colour is the caller's decision).
	Text Options
	// SummaryOut receives the summary in JSON mode, where Out holds only
	// JSON Lines; in text mode the summary follows the events on Out.
	SummaryOut io.Writer
	// Record, if set, also receives every event as JSON Lines.
	Record io.Writer
}

// Printer writes a live stream of events as they come, keeps their summary
// and knows when the stream last moved (lab run, lab start --plain). Print
// is called from one goroutine; WaitQuiet from any.
type Printer struct {
	opts    PrinterOptions
	json    *observe.Encoder
	record  *observe.Encoder
	summary *Summary

	mu       sync.Mutex
	writeErr error
	last     atomic.Int64 // unix nanos of the last event
}

// NewPrinter returns a printer that has seen no event yet; WaitQuiet counts
// from now.
func NewPrinter(opts PrinterOptions) *Printer {
	p := &Printer{opts: opts, summary: NewSummary()}
	if opts.JSON {
		p.json = observe.NewEncoder(opts.Out)
	}
	if opts.Record != nil {
		p.record = observe.NewEncoder(opts.Record)
	}
	p.last.Store(time.Now().UnixNano())
	return p
}

// Print writes one event. A write error is kept for Finish: the stream goes
// on, so the summary and the record stay whole.
func (p *Printer) Print(e observe.Event) {
	p.last.Store(time.Now().UnixNano())
	p.summary.Add(e)
	var err error
	if p.json != nil {
		err = p.json.Encode(e)
	} else {
		_, err = fmt.Fprintln(p.opts.Out, Line(e, p.opts.Text))
	}
	if p.record != nil {
		if rerr := p.record.Encode(e); rerr != nil && err == nil {
			err = fmt.Errorf("record: %w", rerr)
		}
	}
	if err != nil {
		p.mu.Lock()
		if p.writeErr == nil {
			p.writeErr = err
		}
		p.mu.Unlock()
	}
}

// WaitQuiet returns once no event arrived for quiet, or after at most max:
// a controller that never settles (a flaky dependency, a hot loop) must not
// hold the run forever.
func (p *Printer) WaitQuiet(ctx context.Context, quiet, max time.Duration) error {
	deadline := time.Now().Add(max)
	for {
		quietAt := time.Unix(0, p.last.Load()).Add(quiet)
		wake := min(time.Until(quietAt), time.Until(deadline))
		if wake <= 0 {
			return nil
		}
		// Wake when the stream would have been quiet long enough; an event
		// since then moves that moment, so look again.
		timer := time.NewTimer(wake)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return context.Cause(ctx)
		}
	}
}

// Finish writes the summary (after a blank line in text mode) and returns
// the first error writing the events met.
func (p *Printer) Finish() error {
	w := p.opts.Out
	if p.json != nil {
		w = p.opts.SummaryOut
	} else {
		fmt.Fprintln(w)
	}
	if err := p.summary.Write(w); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.writeErr != nil {
		return fmt.Errorf("write events: %w", p.writeErr)
	}
	return nil
}
