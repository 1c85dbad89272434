package backoff_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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
			checkkit.Expect(t, "a reconcile woken early to wait the rest (%s) without calling", fmt.Sprintf("RequeueAfter %s, error %v, %s", res.RequeueAfter, err, checkkit.Count(len(system.Calls())-calls, "call")), w-w/2)
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

// TestStatusWriteErrorsAreReturned: the count only survives if its write
// did, so a status write that fails must be returned — the queue retries —
// on failure as on success.
func TestStatusWriteErrorsAreReturned(t *testing.T) {
	ctx := context.Background()
	cfg := cluster.Config(t)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = learnv1alpha1.AddToScheme(scheme)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t, c)
	db := &learnv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: checkkit.Name(checkkit.Pick("reports", "metrics")), Namespace: ns},
		Spec:       learnv1alpha1.DatabaseSpec{Image: "postgres:17", Replicas: 1, DatabaseName: "reports", Username: "app", Storage: "1Gi"},
	}
	if err := c.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	system := cluster.NewFakeSystem(external.ErrUnavailable)
	system.FailStep(db.Name, cluster.StepProvision, 1)
	failing, failNext := failStatusWrite(c, db.Name, apierrors.NewInternalError(errors.New("etcdserver: leader changed")))
	policy := backoff.Policy{Base: checkkit.Seconds(2, 9), Max: 5 * time.Minute}
	now := time.Now().Truncate(time.Millisecond)
	r := &backoff.Reconciler{Client: failing, System: system, Policy: policy, Now: func() time.Time { return now }}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(db)}
	stored := func() learnv1alpha1.DatabaseStatus {
		var latest learnv1alpha1.Database
		if err := c.Get(ctx, req.NamespacedName, &latest); err != nil {
			t.Fatal(err)
		}
		return latest.Status
	}

	// The write recording the failed Provision fails. Returning the error
	// is the answer; writing again at once, and succeeding, is fine too.
	fired := failNext()
	res, err := r.Reconcile(ctx, req)
	switch {
	case !fired():
		checkkit.Expect(t, "a status write (status.retries 1, nextRetryTime) after the failed Provision", fmt.Sprintf("none, and %s", result(res)))
	case err == nil && stored().Retries != 1:
		checkkit.Expect(t, "the failed status write's error returned after the failed Provision, so the queue retries",
			fmt.Sprintf("%s and no error: status.retries 1 was never stored, and the next failure counts as the first again", result(res)))
	}
	// Then the write recording the success fails.
	now = now.Add(policy.Max)
	fired = failNext()
	res, err = r.Reconcile(ctx, req)
	switch {
	case !fired():
		checkkit.Expect(t, "a status write (the endpoint, retries 0) after the successful Provision", fmt.Sprintf("none, and %s", result(res)))
	case err == nil && stored().Endpoint == "":
		checkkit.Expect(t, "the failed status write's error returned after the successful Provision, so the queue retries",
			fmt.Sprintf("%s and no error: the endpoint was never stored", result(res)))
	}
	if res, err = r.Reconcile(ctx, req); err != nil || !res.IsZero() {
		checkkit.Expect(t, "success once the status write works: ctrl.Result{} and no error", fmt.Sprintf("%s and %v", result(res), err))
	}
	if st := stored(); st.Endpoint == "" || st.Retries != 0 {
		checkkit.Expect(t, "an endpoint and status.retries 0 after the retried write", fmt.Sprintf("endpoint %q, retries %d", st.Endpoint, st.Retries))
	}
}

func result(res ctrl.Result) string {
	switch {
	case res.RequeueAfter > 0:
		return "RequeueAfter " + res.RequeueAfter.String()
	case res.IsZero():
		return "ctrl.Result{}"
	}
	return fmt.Sprintf("%+v", res)
}

// failStatusWrite wraps c so that, once armed, the next status write of
// the object named name fails with err, as a server error would, whichever
// verb makes it: update, patch or server-side apply. Each call of failNext
// arms it once and returns whether that failure happened yet. It is
// cluster.FailStatusWrite armed on demand and covering apply; it could move
// to checkkit/cluster.
func failStatusWrite(c client.WithWatch, name string, err error) (wrapped client.Client, failNext func() (fired func() bool)) {
	var mu sync.Mutex
	armed, failures, fired := false, 0, 0
	fail := func(sub, objName string) error {
		if sub != "status" || objName != name {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if armed {
			armed = false
			fired++
			return err
		}
		return nil
	}
	wrapped = interceptor.NewClient(c, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := fail(sub, obj.GetName()); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := fail(sub, obj.GetName()); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if err := fail(sub, applyName(obj)); err != nil {
				return err
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	return wrapped, func() func() bool {
		mu.Lock()
		defer mu.Unlock()
		armed, failures = true, failures+1
		want := failures
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return fired >= want
		}
	}
}

// applyName is the name an apply configuration carries: generated ones
// have GetName() *string, unstructured ones GetName() string.
func applyName(obj runtime.ApplyConfiguration) string {
	switch o := obj.(type) {
	case interface{ GetName() *string }:
		if n := o.GetName(); n != nil {
			return *n
		}
	case interface{ GetName() string }:
		return o.GetName()
	}
	return ""
}
