package eventtext

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// Summary accumulates what a run did, one event at a time (so a long run
// does not have to keep its events).
type Summary struct {
	first, last time.Time
	events      int
	reconciles  map[string]int // by result
	queueAdds   map[observe.Kind]int
	// phases tracks, per object key, the phase it is in and since when.
	phases    map[string]phaseClock
	phaseTime map[string]time.Duration // total time spent per phase, all objects
	// created is the first event time per key (its first watch event);
	// readyAfter the time from it to the first phase → Ready.
	created    map[string]time.Time
	readyAfter map[string]time.Duration
}

type phaseClock struct {
	phase string
	since time.Time
}

// NewSummary returns an empty summary.
func NewSummary() *Summary {
	return &Summary{
		reconciles: map[string]int{},
		queueAdds:  map[observe.Kind]int{},
		phases:     map[string]phaseClock{},
		phaseTime:  map[string]time.Duration{},
		created:    map[string]time.Time{},
		readyAfter: map[string]time.Duration{},
	}
}

// Add takes one event into account.
func (s *Summary) Add(e observe.Event) {
	s.events++
	if s.first.IsZero() || e.Time.Before(s.first) {
		s.first = e.Time
	}
	if e.Time.After(s.last) {
		s.last = e.Time
	}
	switch e.Kind {
	case observe.KindReconcileEnd:
		s.reconciles[e.Result]++
	case observe.KindQueueAdd, observe.KindQueueAddAfter, observe.KindQueueAddRateLimited:
		s.queueAdds[e.Kind]++
	case observe.KindWatch:
		if e.Type == "ADDED" && e.Key != "" {
			if _, seen := s.created[e.Key]; !seen {
				s.created[e.Key] = e.Time
			}
		}
	case observe.KindPhase:
		if pc, ok := s.phases[e.Key]; ok && pc.phase != "" {
			s.phaseTime[pc.phase] += e.Time.Sub(pc.since)
		}
		s.phases[e.Key] = phaseClock{phase: e.To, since: e.Time}
		if e.To == string(v1alpha1.PhaseReady) {
			if start, ok := s.created[e.Key]; ok {
				if _, done := s.readyAfter[e.Key]; !done {
					s.readyAfter[e.Key] = e.Time.Sub(start)
				}
			}
		}
	}
}

// Write prints the summary. Phases still open at the last event count up to it.
func (s *Summary) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "summary: %d events over %s\n", s.events, round(s.last.Sub(s.first)))
	fmt.Fprintf(&b, "  reconciles:  %s\n", counts(s.reconciles, []string{
		observe.ResultSuccess, observe.ResultRequeue, observe.ResultRequeueAfter, observe.ResultError, observe.ResultTerminal}))
	adds := map[string]int{}
	for k, n := range s.queueAdds {
		adds[string(k)] = n
	}
	fmt.Fprintf(&b, "  queue adds:  %s\n", counts(adds, []string{
		string(observe.KindQueueAdd), string(observe.KindQueueAddAfter), string(observe.KindQueueAddRateLimited)}))
	if total := s.phaseTotals(); len(total) > 0 {
		fmt.Fprintf(&b, "  phases:      %s\n", total)
	}
	if len(s.readyAfter) > 0 {
		keys := slices.Sorted(maps.Keys(s.readyAfter))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %s", k, round(s.readyAfter[k])))
		}
		fmt.Fprintf(&b, "  time to Ready: %s\n", strings.Join(parts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (s *Summary) phaseTotals() string {
	total := map[string]time.Duration{}
	for p, d := range s.phaseTime {
		total[p] = d
	}
	for _, pc := range s.phases {
		if pc.phase != "" && pc.phase != string(v1alpha1.PhaseReady) {
			total[pc.phase] += s.last.Sub(pc.since)
		}
	}
	var parts []string
	for _, phase := range v1alpha1.Phases() {
		p := string(phase)
		if d, ok := total[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", p, round(d)))
			delete(total, p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(total)) {
		parts = append(parts, fmt.Sprintf("%s %s", p, round(total[p])))
	}
	return strings.Join(parts, ", ")
}

// counts renders "a=1 b=2" in the given order first, then any others, and
// "none" when empty.
func counts(m map[string]int, order []string) string {
	var parts []string
	seen := map[string]bool{}
	for _, k := range order {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
		seen[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !seen[k] && m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d
}
