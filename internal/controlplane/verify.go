package controlplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/operator-lab/lab/internal/proc"
)

// BinaryVersion runs `PATH --version` (for at most 10 seconds) and returns
// the version it prints. A binary that does not run — truncated, not an
// executable, built for another system — fails here in milliseconds.
func BinaryVersion(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := proc.Command(ctx, path, "--version")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return "", fmt.Errorf("%w: %s", err, tail(msg, 3))
		}
		return "", err
	}
	for _, field := range strings.Fields(string(out)) {
		if strings.HasPrefix(field, "v") || (len(field) > 0 && field[0] >= '0' && field[0] <= '9' && strings.Contains(field, ".")) {
			return field, nil
		}
	}
	return strings.TrimSpace(string(out)), nil
}

// startError explains a control plane that did not start. When one of the
// binaries does not even run, envtest only reports that it could not check
// a flag; the error then names the broken binary and the way to replace it.
// err stays wrapped either way.
func startError(bins Binaries, err error) error {
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, verr := BinaryVersion(bins.Path(name)); verr != nil {
			return fmt.Errorf("start the control plane: %s in %s is broken (%s); %s: %w",
				name, bins.Dir, verr.Error(), RebuildAdvice(bins), err)
		}
	}
	return fmt.Errorf("start the control plane (binaries from %s, %s): %w", bins.Dir, bins.Source, err)
}

// RebuildAdvice says how to replace a broken binary of bins.
func RebuildAdvice(bins Binaries) string {
	if bins.Source == "KUBEBUILDER_ASSETS" {
		return "replace it, or unset KUBEBUILDER_ASSETS and run `lab setup --from-source` to rebuild the binaries"
	}
	return "run `lab setup --from-source` to rebuild the binaries"
}
