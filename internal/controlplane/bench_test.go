package controlplane

import (
	"context"
	"errors"
	"testing"
)

// BenchmarkStartFresh measures a private control plane: start (binaries
// found, etcd, kube-apiserver) and stop.
func BenchmarkStartFresh(b *testing.B) {
	b.Setenv("LAB_STATE_DIR", b.TempDir())
	for b.Loop() {
		cp, err := Start(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := cp.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnsureReuse measures what other commands pay when `lab env up`
// is running: read the state, connect, check the server answers.
func BenchmarkEnsureReuse(b *testing.B) {
	b.Setenv("LAB_STATE_DIR", b.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, Options{}, func(*State) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-served:
		b.Fatal(err)
	}
	defer func() {
		cancel()
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("serve: %v", err)
		}
	}()
	b.ResetTimer()
	for b.Loop() {
		cp, err := Ensure(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !cp.Shared {
			b.Fatal("Ensure started a private control plane")
		}
	}
}
