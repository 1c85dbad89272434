package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/eventtext"
	"github.com/operator-lab/lab/observe"
)

// printedSession is a running lab whose events a printer goroutine writes out.
type printedSession struct {
	*liveLab
	out     *eventtext.Printer
	sub     *observe.Subscription
	bus     *observe.Bus
	printed chan struct{}
}

// startPrintedSession starts printing the bus's events, then the session;
// progress lines carry the command's name (e.g. "lab run").
func startPrintedSession(ctx context.Context, runOpts *RunOptions, record io.Writer, live liveLabOptions, prefix string) (*printedSession, error) {
	streams := runOpts.IO
	p := &printedSession{bus: observe.NewBus(), printed: make(chan struct{})}
	p.out = eventtext.NewPrinter(eventtext.PrinterOptions{
		Out: streams.Out, JSON: runOpts.Format == formatJSON, SummaryOut: streams.ErrOut, Record: record,
		Text: eventtext.Options{Color: streams.ColorEnabled()},
	})
	p.sub = p.bus.Subscribe(observe.DefaultBuffer)
	go func() {
		defer close(p.printed)
		for e := range p.sub.C {
			p.out.Print(e)
		}
	}()
	live.Bus, live.SetupLog, live.Echo = p.bus, streams.ErrOut, streams.ErrOut
	live.Progress = func(s controlplane.Step) {
		fmt.Fprintf(streams.ErrOut, "%s: %s (%s)\n", prefix, s, s.Took.Round(time.Millisecond))
	}
	lab, err := startLiveLab(ctx, live)
	if err != nil {
		p.bus.Close()
		<-p.printed
		return nil, err
	}
	p.liveLab = lab
	return p, nil
}

// close stops the session, then lets the printer drain every event.
func (p *printedSession) close() error {
	err := p.Close()
	p.bus.Close()
	<-p.printed
	return err
}
