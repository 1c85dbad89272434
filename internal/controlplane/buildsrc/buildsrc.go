// Package buildsrc carries the sources of the small Go modules from which lab
// builds the control-plane binaries (kube-apiserver, kubectl, etcd) when they
// cannot be found or downloaded. The files are stored with a ".txt" suffix so
// that the go tool does not treat them as part of lab's own module (which
// must not depend on all of Kubernetes); Materialize writes them out under
// their real names.
package buildsrc

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed kube etcd
var files embed.FS

// Modules names the embedded modules and the main packages each one builds.
var Modules = map[string][]string{
	"kube": {"kube-apiserver", "kubectl"},
	"etcd": {"etcd"},
}

// Materialize writes every embedded module into dir (dir/kube, dir/etcd),
// dropping the ".txt" suffix.
func Materialize(dir string) error {
	return fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimSuffix(path, ".txt"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read embedded %s: %w", path, err)
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
		return nil
	})
}
