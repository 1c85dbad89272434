package eventtext_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/operator-lab/lab/internal/eventtext"
	"github.com/operator-lab/lab/observe"
)

func printerEvents() []observe.Event {
	return []observe.Event{
		{V: observe.SchemaVersion, Seq: 1, Time: at(0), Kind: observe.KindWatch, Type: "ADDED", Key: "ns/db"},
		{V: observe.SchemaVersion, Seq: 2, Time: at(5), Kind: observe.KindReconcileEnd, Key: "ns/db", Result: observe.ResultSuccess},
	}
}

func TestPrinterTextHasTheLinesThenTheSummary(t *testing.T) {
	var out, record strings.Builder
	p := eventtext.NewPrinter(eventtext.PrinterOptions{Out: &out, Record: &record})
	for _, e := range printerEvents() {
		p.Print(e)
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	want := eventtext.Lines(printerEvents(), eventtext.Options{}) + "\nsummary: 2 events"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("text output:\n%s\nwant it to begin:\n%s", out.String(), want)
	}
	recorded, err := observe.ReadAll(strings.NewReader(record.String()))
	if err != nil || len(recorded) != 2 {
		t.Errorf("record: %d events, %v", len(recorded), err)
	}
}

func TestPrinterJSONKeepsTheSummaryOffStdout(t *testing.T) {
	var out, summary strings.Builder
	p := eventtext.NewPrinter(eventtext.PrinterOptions{Out: &out, JSON: true, SummaryOut: &summary})
	for _, e := range printerEvents() {
		p.Print(e)
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if events, err := observe.ReadAll(strings.NewReader(out.String())); err != nil || len(events) != 2 {
		t.Errorf("stdout is not the 2 events as JSON Lines (%v):\n%s", err, out.String())
	}
	if !strings.Contains(summary.String(), "summary: 2 events") {
		t.Errorf("the summary went elsewhere:\n%s", summary.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestPrinterReportsTheFirstWriteErrorAtTheEnd(t *testing.T) {
	var summary strings.Builder
	p := eventtext.NewPrinter(eventtext.PrinterOptions{Out: failingWriter{}, JSON: true, SummaryOut: &summary})
	for _, e := range printerEvents() {
		p.Print(e)
	}
	if err := p.Finish(); err == nil || !strings.HasPrefix(err.Error(), "write events: ") || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Finish = %v, want the write error", err)
	}
	if !strings.Contains(summary.String(), "summary: 2 events") {
		t.Error("a failed write cost the summary its events")
	}
}

func TestWaitQuietEndsOnSilenceOrAtTheLatestAfterMax(t *testing.T) {
	p := eventtext.NewPrinter(eventtext.PrinterOptions{Out: &strings.Builder{}})
	start := time.Now()
	if err := p.WaitQuiet(context.Background(), 20*time.Millisecond, time.Minute); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= time.Minute {
		t.Errorf("a silent stream waited %s", took)
	}

	// A stream that never stops: WaitQuiet gives up after max.
	stop := make(chan struct{})
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for {
			select {
			case <-stop:
				return
			default:
				p.Print(observe.Event{Kind: observe.KindQueueGet})
			}
		}
	}()
	start = time.Now()
	err := p.WaitQuiet(context.Background(), time.Minute, 100*time.Millisecond)
	took := time.Since(start)
	close(stop)
	<-printed
	if err != nil || took < 100*time.Millisecond || took >= time.Minute {
		t.Errorf("a busy stream: WaitQuiet = %v after %s, want nil after 100ms", err, took)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stopped"))
	if err := p.WaitQuiet(ctx, time.Minute, time.Minute); err == nil || err.Error() != "stopped" {
		t.Errorf("WaitQuiet on a cancelled context = %v, want its cause", err)
	}
}
