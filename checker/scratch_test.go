package checker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/operator-lab/lab/checker"
)

func TestScratch(t *testing.T) {
	lab := labByID(t, "3.1")
	dir := newWorkspace(t, lab, true, nil)
	rep, err := checker.Check(context.Background(), checker.Options{Lab: lab, Dir: dir, Kubeconfig: kubeconfig, KeepBuildDir: true})
	if err != nil {
		t.Fatal(err)
	}
	var log string
	for _, args := range [][]string{
		{"test", "-count=1", "-json", "./manager", "./basics", "./results", "./reads"},
		{"test", "-count=1", "-json", "./manager", "./basics", "./results", "./reads"},
		{"test", "-count=1", "-vet=off", "-json", "./manager", "./basics", "./results", "./reads"},
		{"test", "-c", "-o", "/tmp/x.test", "./basics"},
		{"test", "-c", "-o", "/tmp/x.test", "./basics"},
		{"test", "-count=1", "-run", "XXX", "./basics"},
		{"test", "-count=1", "-json", "./reads"},
	} {
		start := time.Now()
		cmd := exec.Command("go", args...)
		cmd.Dir = rep.BuildDir
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "GOFLAGS=-mod=mod")
		cmd.Run()
		log += fmt.Sprintf("%v: %s\n", args, time.Since(start))
	}
	os.WriteFile("/tmp/scratch.out", []byte(log), 0o644)
}
