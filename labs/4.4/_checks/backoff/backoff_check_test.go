package backoff_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit"
	"github.com/operator-lab/lab/labs/checkkit/cluster"

	learnv1alpha1 "example.com/lab44/api/v1alpha1"
	"example.com/lab44/backoff"
	"example.com/lab44/external"
)

// want computes min(base·2ⁿ, max) without overflowing.
func want(base, max time.Duration, n int) time.Duration {
	if n < 0 {
		n = 0
	}
	if n > 200 {
		return max
	}
	d := new(big.Int).Lsh(big.NewInt(int64(base)), uint(n))
	if d.Cmp(big.NewInt(int64(max))) > 0 {
		return max
	}
	return time.Duration(d.Int64())
}

func TestDelay(t *testing.T) {
	base := checkkit.Seconds(2, 7)
	max := time.Duration(checkkit.Between(3, 8)) * time.Minute
	p := backoff.Policy{Base: base, Max: max}
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	ns = append(ns, 100, 1000, math.MaxInt32, math.MaxInt, -1)
	for _, n := range ns {
		if got, w := p.Delay(n), want(base, max, n); got != w {
			checkkit.Expect(t, "Delay(%d) = %s with Base %s and Max %s", got.String(), n, w, base, max)
		}
	}
}

func TestAttemptsSurviveWatchEvents(t *testing.T) {
	ctx := context.Background()
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c := cluster.Client(t, cfg, scheme)
	ns := cluster.Namespace(t, c)
	db := &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name("analytics"), Namespace: ns},
		Spec:       learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: "analytics", Username: "app", Storage: "1Gi"},
	}
	if err := c.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	failures := checkkit.Between(3, 5)
	system.FailStep(db.Name, cluster.StepProvision, failures)
	policy := backoff.Policy{Base: checkkit.Seconds(2, 9), Max: 5 * time.Minute}
	now := time.Now().Truncate(time.Millisecond) // status times are MicroTime
	r := &backoff.Reconciler{Client: c, System: system, Policy: policy, Now: func() time.Time { return now }}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(db)}

	// Half-way, the operator "restarts": its successor finds in status more
	// failures than this process saw (the ones before the restart), and
	// must go on from there.
	restartAt, jump := failures/2, int32(checkkit.Between(2, 3))
	retries := int32(0) // what status.retries holds before each attempt
	for i := 0; i < failures; i++ {
		restarted := ""
		if i == restartAt {
			var latest learnv1alpha1.Database
			if err := c.Get(ctx, req.NamespacedName, &latest); err != nil {
				t.Fatal(err)
			}
			latest.Status.Retries += jump
			if err := c.Status().Update(ctx, &latest); err != nil {
				t.Fatal(err)
			}
			retries += jump
			restarted = fmt.Sprintf(" (after a restart that found status.retries %d)", retries)
		}
		calls := len(system.Calls())
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			checkkit.Expect(t, "no error after failure %d (the backoff is yours: RequeueAfter)", fmt.Sprintf("error %q", err), i+1)
		}
		w := want(policy.Base, policy.Max, int(retries))
		if res.RequeueAfter != w {
			checkkit.Expect(t, "RequeueAfter %s after failure %d%s", fmt.Sprintf("%s (is the count reset by watch events or kept in memory?)", res.RequeueAfter), w, i+1, restarted)
		}
		retries++
		if n := len(system.Calls()) - calls; n != 1 {
			checkkit.Expect(t, "1 Provision call in reconcile %d", fmt.Sprintf("%d", n), i+1)
		}
		var latest learnv1alpha1.Database
		if err := c.Get(ctx, req.NamespacedName, &latest); err != nil {
			t.Fatal(err)
		}
		if latest.Status.Retries != retries || latest.Status.NextRetryTime == nil || !latest.Status.NextRetryTime.Time.Equal(now.Add(w).Truncate(time.Microsecond)) {
			checkkit.Expect(t, "status.retries %d and status.nextRetryTime now+%s after failure %d%s", fmt.Sprintf("retries %d, nextRetryTime %v", latest.Status.Retries, latest.Status.NextRetryTime), retries, w, i+1, restarted)
		}
		// A watch event in between: someone labels the Database...
		if latest.Labels == nil {
			latest.Labels = map[string]string{}
		}
		latest.Labels["touched"] = fmt.Sprint(i)
		if err := c.Update(ctx, &latest); err != nil {
			t.Fatal(err)
		}
		// ...and the reconcile it brings, before the retry time, must wait
		// out the persisted backoff without calling.
		now = now.Add(w / 2)
		calls = len(system.Calls())
		res, err = r.Reconcile(ctx, req)
		if err != nil || res.RequeueAfter != w-w/2 || len(system.Calls()) != calls {
			checkkit.Expect(t, "a reconcile woken early to wait the rest (%s) without calling", fmt.Sprintf("RequeueAfter %s, error %v, %d calls", res.RequeueAfter, err, len(system.Calls())-calls), w-w/2)
		}
		now = now.Add(w - w/2)
	}
	res, err := r.Reconcile(ctx, req)
	if err != nil || !res.IsZero() {
		checkkit.Expect(t, "success once the system works: ctrl.Result{} and no error", fmt.Sprintf("%+v and %v", res, err))
	}
	var latest learnv1alpha1.Database
	if err := c.Get(ctx, req.NamespacedName, &latest); err != nil {
		t.Fatal(err)
	}
	if latest.Status.Retries != 0 || latest.Status.NextRetryTime != nil || latest.Status.Endpoint == "" {
		checkkit.Expect(t, "status.retries reset to 0, no nextRetryTime and an endpoint after success",
			fmt.Sprintf("retries %d, nextRetryTime %v, endpoint %q", latest.Status.Retries, latest.Status.NextRetryTime, latest.Status.Endpoint))
	}
}
