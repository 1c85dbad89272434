package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/operator-lab/lab/internal/proc"
)

// Module is a workspace's go.mod and go.sum.
type Module struct {
	GoMod []byte
	GoSum []byte
}

// Pinned returns a go.mod for modulePath that requires exactly the module
// versions this lab binary was built with, and a go.sum for them.
//
// The versions come from the binary's own build information, so they can
// never drift from what lab runs. go.sum takes each module's hash from the
// build information and its go.mod hash from the local module cache (where
// `go install`/`go build` of lab put them, verified); modules whose go.mod is
// not cached are left for the go command to add.
func Pinned(modulePath string) (*Module, error) {
	deps, err := labDeps()
	if err != nil {
		return nil, err
	}
	return pinnedFrom(modulePath, goDirective(), deps, moduleCache())
}

// labModule is lab's own module path.
const labModule = "github.com/operator-lab/lab"

// labDeps is buildDeps, asked once per process: in a test binary it runs
// the go command twice over lab's whole module, and every workspace a test
// makes would pay for it again.
var labDeps = sync.OnceValues(buildDeps)

// buildDeps returns the modules lab is built with: from the binary's build
// information, or, in a test binary (which carries none), from the go
// command run inside lab's source tree — the modules that provide a package
// to lab's packages or their tests. (Not every module go.sum has a hash
// for: a module only the module graph names, such as a dependency's test
// dependency, may never have been downloaded, and requiring it would make
// the go command look for it.)
func buildDeps() ([]*debug.Module, error) {
	if info, ok := debug.ReadBuildInfo(); ok && len(info.Deps) > 0 {
		return info.Deps, nil
	}
	noInfo := errors.New("this lab binary has no module build information; build it with module support (go build/go install)")
	used, err := proc.Command(context.Background(), "go", "list", "-deps", "-test",
		"-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", labModule+"/...").Output()
	if err != nil {
		return nil, noInfo
	}
	provides := map[string]bool{}
	for _, path := range strings.Fields(string(used)) {
		provides[path] = true
	}
	out, err := proc.Command(context.Background(), "go", "list", "-m", "-json", "all").Output()
	if err != nil {
		return nil, noInfo
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var deps []*debug.Module
	for dec.More() {
		var m struct {
			Path, Version, Sum string
			Main               bool
		}
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("read lab's module list: %w", err)
		}
		switch {
		case m.Main && m.Path != labModule:
			return nil, fmt.Errorf("no module build information, and the current folder is in module %s, not lab's", m.Path)
		case !m.Main && m.Sum != "" && provides[m.Path]:
			deps = append(deps, &debug.Module{Path: m.Path, Version: m.Version, Sum: m.Sum})
		}
	}
	return deps, nil
}

func pinnedFrom(modulePath, goVersion string, deps []*debug.Module, modCache string) (*Module, error) {
	if len(deps) == 0 {
		return nil, errors.New("lab's build information lists no modules to pin the workspace to")
	}
	type pin struct{ path, version, sum string }
	var pins []pin
	for _, d := range deps {
		m := d
		if d.Replace != nil {
			if d.Replace.Version == "" {
				// A directory replacement exists only on the machine that built lab.
				return nil, fmt.Errorf("lab was built with %s replaced by the folder %s; a workspace cannot use that", d.Path, d.Replace.Path)
			}
			m = d.Replace
		}
		pins = append(pins, pin{m.Path, m.Version, m.Sum})
	}
	sort.Slice(pins, func(i, j int) bool { return pins[i].path < pins[j].path })

	f := new(modfile.File)
	if err := f.AddModuleStmt(modulePath); err != nil {
		return nil, fmt.Errorf("go.mod: %w", err)
	}
	if err := f.AddGoStmt(goVersion); err != nil {
		return nil, fmt.Errorf("go.mod: %w", err)
	}
	for _, p := range pins {
		f.AddNewRequire(p.path, p.version, false)
	}
	requireComment(f, "// These are exactly the module versions lab is built with, so the",
		"// workspace builds from the local module cache. Keep them when adding code.")
	mod, err := f.Format()
	if err != nil {
		return nil, fmt.Errorf("go.mod: %w", err)
	}

	var sum bytes.Buffer
	for _, p := range pins {
		if p.sum != "" {
			fmt.Fprintf(&sum, "%s %s %s\n", p.path, p.version, p.sum)
		}
		if h, err := goModHash(modCache, p.path, p.version); err == nil {
			fmt.Fprintf(&sum, "%s %s/go.mod %s\n", p.path, p.version, h)
		}
	}
	return &Module{GoMod: mod, GoSum: sum.Bytes()}, nil
}

// requireComment puts comment lines above f's require statement: the block,
// or the single line when there is one requirement.
func requireComment(f *modfile.File, lines ...string) {
	for _, stmt := range f.Syntax.Stmt {
		var tokens []string
		switch s := stmt.(type) {
		case *modfile.LineBlock:
			tokens = s.Token
		case *modfile.Line:
			tokens = s.Token
		}
		if len(tokens) > 0 && tokens[0] == "require" {
			c := stmt.Comment()
			for _, l := range lines {
				c.Before = append(c.Before, modfile.Comment{Token: l})
			}
			return
		}
	}
}

// goDirective is the go line for the workspace: the language version of the
// toolchain lab was built with.
func goDirective() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	minor := strings.TrimRightFunc(parts[1], func(r rune) bool { return !unicode.IsDigit(r) })
	return parts[0] + "." + minor + ".0"
}

// moduleCache is GOMODCACHE as the go command sees it ("" if unknown).
func moduleCache() string {
	if dir := os.Getenv("GOMODCACHE"); dir != "" {
		return dir
	}
	out, err := proc.Command(context.Background(), "go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// goModHash is the go.sum hash of a module's go.mod file, from the module
// cache (where `go build` of lab left it, verified).
func goModHash(modCache, path, version string) (string, error) {
	if modCache == "" {
		return "", errors.New("no module cache")
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return "", fmt.Errorf("go.mod of %s@%s: %w", path, version, err)
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return "", fmt.Errorf("go.mod of %s@%s: %w", path, version, err)
	}
	b, err := os.ReadFile(filepath.Join(modCache, "cache", "download", escPath, "@v", escVersion+".mod"))
	if err != nil {
		return "", fmt.Errorf("go.mod of %s@%s: %w", path, version, err)
	}
	// The go command hashes a go.mod as a one-file tree named go.mod.
	return dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
}
