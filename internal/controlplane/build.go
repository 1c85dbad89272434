package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/operator-lab/lab/internal/buildinfo"
	"github.com/operator-lab/lab/internal/controlplane/buildsrc"
	"github.com/operator-lab/lab/internal/proc"
)

// minFreeBytes is roughly what a cold build needs: module sources plus the
// build cache for kube-apiserver.
const minFreeBytes = 4 << 30

// ErrNoGoToolchain means a build from source was needed but `go` is missing.
var ErrNoGoToolchain = errors.New("building the control-plane binaries needs the Go toolchain (go1.26 or newer) on PATH: install it from https://go.dev/dl/, or set KUBEBUILDER_ASSETS to a directory holding etcd, kube-apiserver and kubectl for Kubernetes " + buildinfo.KubernetesVersion)

// buildFromSource builds etcd, kube-apiserver and kubectl from the embedded
// module sources into dir, printing which binary it is on and how long it has taken.
func buildFromSource(ctx context.Context, dir string, log io.Writer) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return ErrNoGoToolchain
	}
	if err := checkFreeSpace(dir, goCacheDir(goBin)); err != nil {
		return err
	}
	src, err := os.MkdirTemp("", "lab-cp-src-")
	if err != nil {
		return fmt.Errorf("create a build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(src) }()
	if err := buildsrc.Materialize(src); err != nil {
		return fmt.Errorf("write the build sources: %w", err)
	}
	fmt.Fprintf(log, "building the control-plane binaries from Go module sources (Kubernetes %s, etcd %s); a cold build takes 15–20 minutes on 2 cores\n",
		buildinfo.KubernetesVersion, buildinfo.EtcdVersion)
	total := time.Now()
	step := 0
	for _, module := range []string{"etcd", "kube"} {
		for _, bin := range buildsrc.Modules[module] {
			step++
			if err := buildOne(ctx, goBin, filepath.Join(src, module), bin, filepath.Join(dir, bin), fmt.Sprintf("[%d/3] %s", step, bin), log); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(log, "built the control-plane binaries in %s\n", time.Since(total).Round(time.Second))
	return nil
}

func buildOne(ctx context.Context, goBin, moduleDir, pkg, out, label string, log io.Writer) error {
	ldflags := "-s -w"
	if pkg != "etcd" {
		// Without these, /version reports v0.0.0-master.
		v := buildinfo.KubernetesVersion
		parts := strings.SplitN(v, ".", 3)
		ldflags += " -X k8s.io/component-base/version.gitVersion=v" + v +
			" -X k8s.io/component-base/version.gitMajor=" + parts[0] +
			" -X k8s.io/component-base/version.gitMinor=" + parts[1] +
			" -X k8s.io/component-base/version.gitTreeState=clean"
	}
	// A build outlives nothing: it dies with lab, compilers included.
	cmd := proc.Command(ctx, goBin, "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./"+pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "CGO_ENABLED=0")
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	start := time.Now()
	fmt.Fprintf(log, "%s: building…\n", label)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start go build for %s: %w", pkg, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ticker := time.NewTicker(15 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("build of %s interrupted: %w", pkg, ctx.Err())
				}
				return fmt.Errorf("build %s: %w\n%s", pkg, err, tail(output.String(), 30))
			}
			fmt.Fprintf(log, "%s: done in %s\n", label, time.Since(start).Round(time.Second))
			return nil
		case <-ticker.C:
			fmt.Fprintf(log, "%s: still building… %s\n", label, time.Since(start).Round(time.Second))
		}
	}
}

func goCacheDir(goBin string) string {
	out, err := proc.Command(context.Background(), goBin, "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// checkFreeSpace fails early, with the numbers, when a build would run out of disk.
func checkFreeSpace(dirs ...string) error {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(existingParent(dir), &st); err != nil {
			continue
		}
		free := uint64(st.Bavail) * uint64(st.Bsize)
		if free < minFreeBytes {
			return fmt.Errorf("not enough disk space to build the control-plane binaries: %.1f GiB free at %s, about %d GiB needed; free some space or set KUBEBUILDER_ASSETS to existing binaries",
				float64(free)/(1<<30), dir, minFreeBytes>>30)
		}
	}
	return nil
}

func existingParent(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}

// tail keeps the last n lines of s, where build errors are.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
