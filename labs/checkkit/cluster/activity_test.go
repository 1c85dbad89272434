package cluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestActivityTellsWaitingFromWorking(t *testing.T) {
	const stallAfter = 400 * time.Millisecond
	// An API server that takes its time: a Get of "slow" answers after
	// three stalls' worth.
	slow := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == "slow" {
				time.Sleep(3 * stallAfter)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	get := func(c client.Client, name string) {
		_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, &corev1.ConfigMap{})
	}
	cases := []struct {
		name string
		// code runs as the code under check, and closes done when it returns.
		code        func(c client.Client, a *Activity)
		wantStalled bool
	}{
		{"returns at once", func(client.Client, *Activity) {}, false},
		{"a slow call is work, not a wait", func(c client.Client, _ *Activity) { get(c, "slow") }, false},
		{"calls, one after another, longer than a stall in all", func(c client.Client, _ *Activity) {
			for range 10 {
				get(c, "quick")
				time.Sleep(stallAfter / 4)
			}
		}, false},
		{"sleeps after its call", func(c client.Client, _ *Activity) {
			get(c, "quick")
			time.Sleep(10 * stallAfter)
		}, true},
		{"returns the check marks put off the stall", func(c client.Client, a *Activity) {
			for range 4 {
				time.Sleep(stallAfter / 2)
				a.Touch()
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tracked, activity := Track(slow)
			done := make(chan struct{})
			go func() { c.code(tracked, activity); close(done) }()
			if stalled := !activity.WaitOrStall(done, stallAfter); stalled != c.wantStalled {
				t.Errorf("stalled = %v, want %v", stalled, c.wantStalled)
			}
		})
	}
}
