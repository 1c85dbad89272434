package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/operator-lab/lab/observe"
)

// listen waits for the next batch of events.
func (m Model) listen() tea.Cmd {
	if m.events == nil || m.closed {
		return nil
	}
	return waitForEvents(m.events)
}

func waitForEvents(ch <-chan observe.Event) tea.Cmd {
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return eventsClosedMsg{}
		}
		batch := make(EventsMsg, 0, 64)
		batch = append(batch, e)
		timer := time.NewTimer(batchWindow)
		defer timer.Stop()
		for len(batch) < batchMax {
			select {
			case e, ok := <-ch:
				if !ok {
					return batch // the next wait reports the close
				}
				batch = append(batch, e)
			case <-timer.C:
				return batch
			}
		}
		return batch
	}
}
