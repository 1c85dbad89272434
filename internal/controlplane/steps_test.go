package controlplane

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// stepRecorder keeps the steps reported, in order.
type stepRecorder struct {
	mu    sync.Mutex
	steps []string
	etcd  chan struct{} // closed once etcd is reported
}

func newStepRecorder() *stepRecorder { return &stepRecorder{etcd: make(chan struct{})} }

func (r *stepRecorder) progress(s Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s.Name)
	if s.Name == StepEtcd {
		close(r.etcd)
	}
}

func (r *stepRecorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.steps...)
}

// TestEtcdIsReportedWhenItAnswers: the etcd step ends as soon as etcd
// answers, while kube-apiserver is still starting — so the start-up
// screen's spinner moves to the kube-apiserver row — and kube-apiserver's
// step ends when the control plane is up.
func TestEtcdIsReportedWhenItAnswers(t *testing.T) {
	rec := newStepRecorder()
	ready := make(chan time.Duration, 1)
	reportedWhileStarting := false
	cfg, err := startSteps(context.Background(), Options{Progress: rec.progress},
		func(context.Context) <-chan time.Duration { return ready },
		func() (*rest.Config, error) {
			ready <- 50 * time.Millisecond // etcd answers; kube-apiserver is still coming up
			select {
			case <-rec.etcd:
				reportedWhileStarting = true
			case <-time.After(2 * time.Second):
			}
			return &rest.Config{Host: "https://127.0.0.1:1"}, nil
		})
	if err != nil || cfg == nil {
		t.Fatalf("startSteps: %v", err)
	}
	if !reportedWhileStarting {
		t.Error("the etcd step was not reported while kube-apiserver was starting")
	}
	if got := rec.names(); len(got) != 2 || got[0] != StepEtcd || got[1] != StepAPIServer {
		t.Errorf("steps %v, want etcd then kube-apiserver", got)
	}
}

// TestEtcdStepWithoutItsOwnTime: when etcd's part cannot be timed, both
// steps end when the control plane is up; a failed start reports neither
// after it returned.
func TestEtcdStepWithoutItsOwnTime(t *testing.T) {
	rec := newStepRecorder()
	cfg, err := startSteps(context.Background(), Options{Progress: rec.progress},
		func(context.Context) <-chan time.Duration {
			c := make(chan time.Duration)
			close(c)
			return c
		},
		func() (*rest.Config, error) { return &rest.Config{}, nil })
	if err != nil || cfg == nil {
		t.Fatalf("startSteps: %v", err)
	}
	if got := rec.names(); len(got) != 2 || got[0] != StepEtcd || got[1] != StepAPIServer {
		t.Errorf("steps %v, want etcd then kube-apiserver", got)
	}

	rec = newStepRecorder()
	boom := errors.New("kube-apiserver did not come up")
	_, err = startSteps(context.Background(), Options{Progress: rec.progress},
		func(ctx context.Context) <-chan time.Duration {
			c := make(chan time.Duration)
			go func() { <-ctx.Done(); close(c) }() // etcd never answers; the watch ends with its context
			return c
		},
		func() (*rest.Config, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if got := rec.names(); len(got) != 0 {
		t.Errorf("a failed start reported %v", got)
	}
}
