package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/operator-lab/lab/internal/buildinfo"
)

// BinaryNames are the executables a complete set of control-plane binaries has.
var BinaryNames = []string{"etcd", "kube-apiserver", "kubectl"}

// Binaries is a directory holding a complete set of control-plane binaries.
type Binaries struct {
	Dir string
	// Source says where they were found: "KUBEBUILDER_ASSETS", "store",
	// "download" or "build".
	Source string
}

// Path returns the full path of one binary.
func (b Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// ErrBinariesNotFound means no complete set of binaries was found; Setup obtains one.
var ErrBinariesNotFound = errors.New("control-plane binaries not found")

// StoreRoot is the setup-envtest store ("…/kubebuilder-envtest/k8s"), shared
// with setup-envtest and kubebuilder projects on the same machine.
func StoreRoot() (string, error) {
	dir, err := envtest.SetupEnvtestDefaultBinaryAssetsDirectory()
	if err != nil {
		return "", fmt.Errorf("locate the setup-envtest store: %w", err)
	}
	return dir, nil
}

// StoreDir is where lab installs the binaries of its Kubernetes version, in
// setup-envtest's naming scheme ("1.37.2-linux-amd64").
func StoreDir() (string, error) {
	root, err := StoreRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, storeDirName(buildinfo.KubernetesVersion)), nil
}

func storeDirName(k8sVersion string) string {
	return fmt.Sprintf("%s-%s-%s", k8sVersion, runtime.GOOS, runtime.GOARCH)
}

// missingBinaries lists the binaries absent from dir (or not executable).
func missingBinaries(dir string) []string {
	var missing []string
	for _, name := range BinaryNames {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

// Find looks for a complete set of binaries for lab's Kubernetes minor
// version: first $KUBEBUILDER_ASSETS, then the setup-envtest store (the
// newest complete 1.37.x directory for this OS and architecture).
func Find() (Binaries, error) {
	var notes []string
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		missing := missingBinaries(dir)
		if len(missing) == 0 {
			return Binaries{Dir: dir, Source: "KUBEBUILDER_ASSETS"}, nil
		}
		notes = append(notes, fmt.Sprintf("KUBEBUILDER_ASSETS=%s lacks %s", dir, strings.Join(missing, ", ")))
	}
	root, err := StoreRoot()
	if err != nil {
		return Binaries{}, err
	}
	for _, dir := range storeCandidates(root) {
		if len(missingBinaries(dir)) == 0 {
			return Binaries{Dir: dir, Source: "store"}, nil
		}
	}
	notes = append(notes, "nothing complete for Kubernetes "+minorVersion()+".x in "+root)
	return Binaries{}, fmt.Errorf("%w (%s)", ErrBinariesNotFound, strings.Join(notes, "; "))
}

func minorVersion() string {
	v := version.MustParseGeneric(buildinfo.KubernetesVersion)
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}

// storeCandidates lists store directories of lab's minor version for this
// platform, newest patch first.
func storeCandidates(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	suffix := fmt.Sprintf("-%s-%s", runtime.GOOS, runtime.GOARCH)
	type candidate struct {
		dir string
		v   *version.Version
	}
	var found []candidate
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasSuffix(name, suffix) {
			continue
		}
		v, err := version.ParseGeneric(strings.TrimSuffix(name, suffix))
		if err != nil || fmt.Sprintf("%d.%d", v.Major(), v.Minor()) != minorVersion() {
			continue
		}
		found = append(found, candidate{filepath.Join(root, name), v})
	}
	sort.Slice(found, func(i, j int) bool { return found[j].v.LessThan(found[i].v) })
	dirs := make([]string, len(found))
	for i, c := range found {
		dirs[i] = c.dir
	}
	return dirs
}
