package status

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator-lab/lab/observe"
)

// Conditions records the conditions changed during one reconcile.
type Conditions struct {
	changed []metav1.Condition
}

// Set sets a condition in list (stamping observedGeneration) and remembers
// it if anything about it changed.
func (c *Conditions) Set(list *[]metav1.Condition, generation int64, typ string, st metav1.ConditionStatus, reason, message string) {
	cond := metav1.Condition{Type: typ, Status: st, Reason: reason, Message: message, ObservedGeneration: generation}
	if !meta.SetStatusCondition(list, cond) {
		return
	}
	for i := range c.changed {
		if c.changed[i].Type == typ {
			c.changed[i] = cond // report only where it ended up
			return
		}
	}
	c.changed = append(c.changed, cond)
}

// Clear sets a condition to False with reason if it is present and True;
// absent conditions stay absent (an object that never failed has no Failed
// condition).
func (c *Conditions) Clear(list *[]metav1.Condition, generation int64, typ, reason, message string) {
	if meta.IsStatusConditionTrue(*list, typ) {
		c.Set(list, generation, typ, metav1.ConditionFalse, reason, message)
	}
}

// Emit reports every remembered change as a condition event (call it after
// the status was written) and forgets them.
func (c *Conditions) Emit(ctx context.Context, em observe.Emitter) {
	for _, cond := range c.changed {
		observe.Emit(ctx, em, observe.ConditionEvent(cond))
	}
	c.changed = nil
}
