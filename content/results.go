package content

import (
	"fmt"
	"strings"
	"time"

	"github.com/operator-lab/lab/internal/l10n"
)

// QueueCall is a work-queue method the controller calls for a key after
// Reconcile returns.
type QueueCall string

// The queue calls that appear in ResultCases. With the priority queue (the
// default since v0.23) the controller calls AddWithOpts; RateLimited:true is
// AddRateLimited and After:d is AddAfter(d).
const (
	CallForget         QueueCall = "Forget"
	CallAddAfter       QueueCall = "AddAfter"
	CallAddRateLimited QueueCall = "AddRateLimited"
	CallDone           QueueCall = "Done"
)

// Retry says when the key is reconciled again without a new watch event.
type Retry int

const (
	// RetryOnEvent: nothing is scheduled; only a watch event (or the cache's
	// periodic resync) brings the key back.
	RetryOnEvent Retry = iota
	// RetryAfterRequested: after the RequeueAfter the reconciler asked for.
	RetryAfterRequested
	// RetryRateLimited: after the rate limiter's per-item delay,
	// RateLimiterBase·2ⁿ for the n-th consecutive failure (n from 0), capped
	// at RateLimiterMax.
	RetryRateLimited
)

// The default per-item rate limiter of a v0.25 controller (priority queue).
const (
	RateLimiterBase = 5 * time.Millisecond
	RateLimiterMax  = 1000 * time.Second
)

// ResultCase is one way Reconcile can return and what controller-runtime
// v0.25 does with the key afterwards (pkg/internal/controller,
// reconcileHandler). The lesson's table is generated from these rows and a
// test on a real control plane checks every row against observed queue calls.
type ResultCase struct {
	ID string
	// Return is the Go code of the return statement's values; d and err are
	// any positive duration and any non-nil error.
	Return string
	// Calls are the queue calls for the key after Reconcile returns, in order.
	Calls []QueueCall
	Retry Retry
	// IgnoresRequeueAfter: the error wins and the RequeueAfter is dropped,
	// with an info-level log line that begins "Warning:" (logr has no
	// warning level).
	IgnoresRequeueAfter bool
	// Deprecated marks Result.Requeue (deprecated since v0.21).
	Deprecated bool
	// Terminal: never retried, and not forgotten either (the key's failure
	// count is kept); otherwise an error like any other: logged as
	// "Reconciler error" and counted in the error metrics, and in the
	// terminal-error metric besides.
	Terminal bool
}

// ResultCases are the rows of the "what happens after Reconcile returns" table.
var ResultCases = []ResultCase{
	{ID: "success", Return: "ctrl.Result{}, nil",
		Calls: []QueueCall{CallForget, CallDone}, Retry: RetryOnEvent},
	{ID: "requeue-after", Return: "ctrl.Result{RequeueAfter: d}, nil",
		Calls: []QueueCall{CallForget, CallAddAfter, CallDone}, Retry: RetryAfterRequested},
	{ID: "requeue", Return: "ctrl.Result{Requeue: true}, nil",
		Calls: []QueueCall{CallAddRateLimited, CallDone}, Retry: RetryRateLimited, Deprecated: true},
	{ID: "error", Return: "ctrl.Result{}, err",
		Calls: []QueueCall{CallAddRateLimited, CallDone}, Retry: RetryRateLimited},
	{ID: "error-with-requeue-after", Return: "ctrl.Result{RequeueAfter: d}, err",
		Calls: []QueueCall{CallAddRateLimited, CallDone}, Retry: RetryRateLimited, IgnoresRequeueAfter: true},
	{ID: "terminal", Return: "ctrl.Result{}, reconcile.TerminalError(err)",
		Calls: []QueueCall{CallDone}, Retry: RetryOnEvent, Terminal: true},
}

// tables are the generated tables a lesson can embed with
// "<!-- table:NAME -->" on a line of its own.
var tables = map[string]func(lang string) string{
	"result-queue-calls": resultTable,
}

// retryText says when a key is reconciled again, for the table's last column.
var retryText = map[Retry]string{
	RetryOnEvent:        l10n.Mark("on the next event"),
	RetryAfterRequested: l10n.Mark("after `d`; failures reset"),
	RetryRateLimited:    l10n.Mark("after the rate limiter's delay"),
}

func resultTable(lang string) string {
	say := l10n.For(lang)
	var b strings.Builder
	b.WriteString(say.Text("| You return | Queue calls, in order | Reconciled again |") + "\n|---|---|---|\n")
	for _, c := range ResultCases {
		calls := make([]string, len(c.Calls))
		for i, call := range c.Calls {
			calls[i] = "`" + string(call) + "`"
			if call == CallAddAfter {
				calls[i] = "`AddAfter(d)`"
			}
		}
		ret := "`" + c.Return + "`"
		if c.Deprecated {
			ret += " (" + say.Text("deprecated") + ")"
		}
		next := say.Text(retryText[c.Retry])
		if c.IgnoresRequeueAfter {
			next += "; " + say.Text("`RequeueAfter` ignored, an info line \"Warning: …\" logged")
		}
		if c.Terminal {
			next += "; " + say.Text("counted as an error and as a terminal error; failure count kept")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", ret, strings.Join(calls, ", "), next)
	}
	dur := func(d time.Duration) string { return formatDuration(lang, d) }
	b.WriteString("\n" + say.Textf("The rate limiter's delay is %s·2ⁿ for the n-th failure of the key in a row (n from 0): %s, %s, %s, … at most %s. `Forget` resets n to 0.",
		dur(RateLimiterBase), dur(RateLimiterBase), dur(2*RateLimiterBase), dur(4*RateLimiterBase), formatLimit(lang, RateLimiterMax)) + "\n")
	return b.String()
}

// formatLimit prints 1000s as "1000s (16m40s)" so both the configured value
// and its meaning are visible.
func formatLimit(lang string, d time.Duration) string {
	return fmt.Sprintf("%s (%s)", formatDuration(lang, d.Truncate(time.Second)), minutesAndSeconds(lang, d))
}

// formatDuration is Go's form of d in English ("5ms", "1000s" for whole
// seconds), and the Russian one with spaced units ("5 мс", "1000 с").
func formatDuration(lang string, d time.Duration) string {
	switch {
	case d < time.Second && lang == Russian:
		return fmt.Sprintf("%d мс", d.Milliseconds())
	case d < time.Second:
		return d.String()
	case lang == Russian:
		return fmt.Sprintf("%g с", d.Seconds())
	default:
		return fmt.Sprintf("%gs", d.Seconds())
	}
}

// minutesAndSeconds is d as "16m40s", or "16 мин 40 с" in Russian.
func minutesAndSeconds(lang string, d time.Duration) string {
	if lang != Russian {
		return d.String()
	}
	m, sec := int(d.Minutes()), int(d.Seconds())%60
	return fmt.Sprintf("%d мин %d с", m, sec)
}
