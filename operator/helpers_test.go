package operator_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/internal/optest"
)

func clientKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	return meta.FindStatusCondition(conds, typ)
}

// count counts events of kind for key; result, if set, must match the
// reconcile result.
func count(events []observe.Event, key string, kind observe.Kind, result string) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind && e.Key == key && (result == "" || e.Result == result) {
			n++
		}
	}
	return n
}

// phases returns the key's phase transitions as "from→to".
func phases(events []observe.Event, key string) []string {
	var out []string
	for _, e := range events {
		if e.Kind == observe.KindPhase && e.Key == key {
			out = append(out, e.From+"→"+e.To)
		}
	}
	return out
}

// reachedPhase reports whether the key has a transition to phase after the
// first n transitions.
func reachedPhase(events []observe.Event, key, phase string, after int) bool {
	seen := 0
	for _, e := range events {
		if e.Kind == observe.KindPhase && e.Key == key {
			seen++
			if seen > after && e.To == phase {
				return true
			}
		}
	}
	return false
}

// update applies change to the object with conflict retries, as a user's
// kubectl edit would.
func update[T client.Object](t *testing.T, env *optest.Env, obj T, change func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return env.Client.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("update %s: %v", obj.GetName(), err)
	}
}

const waitLong = 60 * time.Second
