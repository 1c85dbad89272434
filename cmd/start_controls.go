package cmd

import (
	"context"
	"sort"
	"strconv"

	"github.com/operator-lab/lab/internal/learnerctl"
	"github.com/operator-lab/lab/internal/session"
	"github.com/operator-lab/lab/internal/tui"
	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/scenario"
	"github.com/operator-lab/lab/operator/switches"
)

// liveControls is what the live view drives: the running controller's
// switches and step-through gate, and the lab's objects.
type liveControls struct {
	operatorDriver
	objects *scenario.ClientObjects
}

// newLabObjects are the session's sample objects as the learner changes
// them: numbered (the c key makes the next one) and announced as "you".
func newLabObjects(sess *session.Session, samples scenario.Samples) *scenario.ClientObjects {
	return scenario.NewClientObjects(sess.Client, sess.Namespace, samples, sess.Bus, "you")
}

func (c *liveControls) CreateObject(ctx context.Context) (string, error) {
	return c.objects.Create(ctx, "", false)
}

// CreateInvalid makes the next sample with a spec the controller rejects
// for good, as `lab run`'s permanent-error scenario does.
func (c *liveControls) CreateInvalid(ctx context.Context) (string, error) {
	return c.objects.Create(ctx, "", true)
}
func (c *liveControls) UpdateSpec(ctx context.Context, key string) error {
	return c.objects.Update(ctx, key, 1)
}
func (c *liveControls) Burst(ctx context.Context, key string, n int) error {
	return c.objects.Update(ctx, key, n)
}
func (c *liveControls) Delete(ctx context.Context, key string) error {
	return c.objects.Delete(ctx, key)
}

// operatorDriver is the part of the live view's controls that acts on the
// running controller: its switches and its step-through gate.
type operatorDriver = tui.OperatorControls

// referenceDriver drives the reference operator: the session's switches
// and the gate its reconciler waits at.
type referenceDriver struct {
	sess *session.Session
	gate *observe.Gate
}

// switchOrder is the order the header shows the switches in; flakiness and
// workers are only set with --set (workers is fixed once the operator runs).
var switchOrder = []string{switches.NameRequeue, switches.NameBackoff, switches.NameBreaker,
	switches.NameRateLimit, switches.NameExternal, switches.NameTimescale}

// timescaleSteps are the values + and - move between.
var timescaleSteps = []float64{0.5, 1, 2, 5, 10, 20, 50, 100}

func (d *referenceDriver) Switches() []tui.Switch {
	values := d.sess.Switches.Get()
	valid := map[string][]string{}
	for _, info := range switches.All() {
		valid[info.Name] = info.Valid
	}
	out := make([]tui.Switch, 0, len(switchOrder))
	for _, name := range switchOrder {
		v, err := values.Get(name)
		if err != nil || !d.sess.Switches.Has(name) {
			continue // a switch the lab's controller does not read has no key
		}
		options := valid[name]
		if name == switches.NameTimescale {
			options = timescaleOptions(values.Timescale)
		}
		out = append(out, tui.Switch{Name: name, Value: v, Options: options})
	}
	return out
}

// timescaleOptions is the ladder with the current value in it, so + and -
// move from wherever --set put it.
func timescaleOptions(current float64) []string {
	steps := append([]float64(nil), timescaleSteps...)
	found := false
	for _, s := range steps {
		found = found || s == current
	}
	if !found {
		steps = append(steps, current)
		sort.Float64s(steps)
	}
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = strconv.FormatFloat(s, 'g', -1, 64)
	}
	return out
}

func (d *referenceDriver) SetSwitch(name, value string) error {
	return d.sess.Switches.Set(name, value)
}
func (d *referenceDriver) Pause()       { d.gate.Pause() }
func (d *referenceDriver) Resume()      { d.gate.Resume() }
func (d *referenceDriver) Step()        { d.gate.Step() }
func (d *referenceDriver) Paused() bool { return d.gate.Paused() }
func (d *referenceDriver) Waiting() int { return d.gate.Waiting() }

// learnerDriver drives the learner's controller through its process.
type learnerDriver struct{ *learnerctl.Process }

// Switches is the one setting of the simulated world around the learner's
// controller; the reference operator's switches do not exist there, as the
// learner's code makes those choices.
func (d learnerDriver) Switches() []tui.Switch {
	sw, value := d.Switch()
	if sw.Name == "" {
		return nil
	}
	return []tui.Switch{{Name: sw.Name, Value: value, Options: sw.Values}}
}

func (d learnerDriver) SetSwitch(name, value string) error { return d.Set(name, value) }
