package tui

import (
	"fmt"
	"strings"

	"github.com/operator-lab/lab/internal/l10n"
	"github.com/operator-lab/lab/internal/tui/state"
	"github.com/operator-lab/lab/observe"
)

// The sequence pane's words for what the queue and a reconcile did, the
// way the code spells them, and their paints.

func genLabel(g int64) string {
	if g == 0 {
		return ""
	}
	return fmt.Sprintf("gen %d", g)
}

// addLabel says how the key entered the queue and how many adds merged.
func addLabel(say l10n.Printer, adds []observe.Event, addCount int, trigger *observe.Event) string {
	if len(adds) == 0 {
		return ""
	}
	first := adds[0]
	if trigger != nil {
		for _, a := range adds {
			if a.Cause == trigger.Seq {
				first = a
				break
			}
		}
	}
	var s string
	switch first.Kind {
	case observe.KindQueueAddAfter:
		s = "add_after " + formatDuration(first.Delay.D())
	case observe.KindQueueAddRateLimited:
		s = "add_rate_limited " + formatDuration(first.Delay.D())
	default:
		s = "add"
		if first.Priority != nil && *first.Priority != 0 {
			s += fmt.Sprintf(" prio %d", *first.Priority)
		}
	}
	if addCount > 1 {
		s += say.Textf(" (+%d merged)", addCount-1)
	}
	return s
}

// resultLabel writes the reconcile's return value the way the code says it.
func resultLabel(e *observe.Event) string {
	switch e.Result {
	case observe.ResultSuccess:
		return "Result{}, nil"
	case observe.ResultRequeue:
		return "Requeue: true"
	case observe.ResultRequeueAfter:
		return "RequeueAfter " + formatDuration(e.RequeueAfter.D())
	case observe.ResultError:
		return "err: " + e.Error
	case observe.ResultTerminal:
		return "TerminalError: " + e.Error
	}
	return e.Result
}

// outcomeLabel says what the work queue did with the result.
func outcomeLabel(say l10n.Printer, r *state.Reconcile) string {
	if len(r.Outcome) == 0 {
		if r.Result() == observe.ResultTerminal {
			return say.Text("no requeue, no Forget: terminal errors are not retried")
		}
		if !r.Done {
			return "…"
		}
		return say.Text("nothing")
	}
	var parts []string
	for _, e := range r.Outcome {
		switch e.Kind {
		case observe.KindQueueForget:
			parts = append(parts, say.Text("Forget (failures reset)"))
		case observe.KindQueueAddAfter:
			parts = append(parts, "AddAfter "+formatDuration(e.Delay.D()))
		case observe.KindQueueAddRateLimited:
			parts = append(parts, say.Textf("AddRateLimited → %s (failure %d)", formatDuration(e.Delay.D()), e.Failures))
		}
	}
	return strings.Join(parts, " + ")
}

func resultPaint(result string) paint {
	switch result {
	case observe.ResultSuccess:
		return paintOK
	case observe.ResultRequeueAfter:
		return paintInfo
	case observe.ResultRequeue:
		return paintWarn
	case observe.ResultError, observe.ResultTerminal:
		return paintBad
	}
	return paintFaint
}

func outcomeMark(outcome string) string {
	switch outcome {
	case "", observe.OutcomeOK:
		return "✓"
	}
	return "✗ " + outcome
}

func outcomePaint(outcome string) paint {
	switch outcome {
	case "", observe.OutcomeOK:
		return paintOK
	case observe.OutcomeNotFound, observe.OutcomeConflict, observe.OutcomeAlreadyExists:
		return paintWarn
	}
	return paintBad
}
