package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/operator-lab/lab/internal/proc"
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

// TestAbandonedStartKillsWhatEnvtestStartsLater: a stop during start-up
// kills the processes envtest started for this control plane, including
// one that had not yet said who it is, so envtest gives up at once and
// nothing is left writing into the control plane's folder.
func TestAbandonedStartKillsWhatEnvtestStartsLater(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(func() { proc.KillChildrenMentioning(dir) })
	// An "etcd" that never answers, as a real one before it is ready:
	// envtest would wait out its start timeout for it. Like the real
	// launcher, it keeps envtest's arguments (--data-dir in dir); envtest
	// first asks it for --help.
	etcd := filepath.Join(dir, "launch-etcd")
	if err := os.WriteFile(etcd, []byte("#!/bin/sh\n[ \"$1\" = --help ] && exit 0\nexec sh -c 'while :; do sleep 0.2; done' etcd \"$@\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{ControlPlaneStartTimeout: 2 * time.Minute}
	env.ControlPlane.Etcd = &envtest.Etcd{Path: etcd, DataDir: filepath.Join(dir, "etcd")}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	cleanedUp := make(chan struct{})
	_, err := startEnv(ctx, env, dir, func() { close(cleanedUp) })
	if !errors.Is(err, errStartAbandoned) {
		t.Fatalf("startEnv after a stop: %v, want errStartAbandoned", err)
	}
	select {
	case <-cleanedUp:
	case <-time.After(30 * time.Second):
		t.Fatal("envtest did not give up within 30 s of the stop: its etcd was not killed")
	}
	if n := proc.KillChildrenMentioning(dir); n != 0 {
		t.Errorf("%d processes of the abandoned control plane still run", n)
	}
}
