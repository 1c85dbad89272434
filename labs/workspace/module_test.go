package workspace

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestPinnedFromWritesGoModAndGoSum: the go.mod requires each module at the
// version lab is built with (a replacement's, when replaced), sorted, under
// the comment that tells the learner why; go.sum has each module's hash and,
// found in the module cache by its escaped path, its go.mod's hash.
func TestPinnedFromWritesGoModAndGoSum(t *testing.T) {
	cache := t.TempDir()
	// The module cache escapes upper-case letters: "Up" is stored as "!up".
	modFile := filepath.Join(cache, "cache", "download", "example.com", "!up", "@v", "v1.2.0.mod")
	if err := os.MkdirAll(filepath.Dir(modFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(modFile, []byte("module example.com/Up\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deps := []*debug.Module{
		{Path: "example.com/zed", Version: "v0.1.0", Sum: "h1:zed="},
		{Path: "example.com/Up", Version: "v1.2.0", Sum: "h1:up="},
		{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.1.0", Sum: "h1:new="}},
	}
	m, err := pinnedFrom("example.com/lab31", "1.26.0", deps, cache)
	if err != nil {
		t.Fatal(err)
	}
	wantMod := `module example.com/lab31

go 1.26.0

// These are exactly the module versions lab is built with, so the
// workspace builds from the local module cache. Keep them when adding code.
require (
	example.com/Up v1.2.0
	example.com/new v1.1.0
	example.com/zed v0.1.0
)
`
	if string(m.GoMod) != wantMod {
		t.Errorf("go.mod:\n%s\nwant:\n%s", m.GoMod, wantMod)
	}
	// The go.mod hash is the one `sha256sum` gives by the h1 rule:
	// base64(sha256("<sha256 of the file>  go.mod\n")).
	wantSum := `example.com/Up v1.2.0 h1:up=
example.com/Up v1.2.0/go.mod h1:VlrMkVdn+dk0cg+gtuSRX9n8gEmAqc3KNydTwAdBltE=
example.com/new v1.1.0 h1:new=
example.com/zed v0.1.0 h1:zed=
`
	if string(m.GoSum) != wantSum {
		t.Errorf("go.sum:\n%s\nwant:\n%s", m.GoSum, wantSum)
	}

	local := []*debug.Module{{Path: "example.com/x", Version: "v1.0.0", Replace: &debug.Module{Path: "../x"}}}
	if _, err := pinnedFrom("example.com/lab31", "1.26.0", local, cache); err == nil || !strings.Contains(err.Error(), "replaced by the folder ../x") {
		t.Errorf("a folder replacement: %v, want an error naming it", err)
	}
}

// TestPinnedGoSumIsTheGoCommands: every go.mod hash Pinned writes is the
// one the go command computes (`go list -m` GoModSum), so a workspace's
// go.sum never disagrees with `go mod verify`. It pins every module of
// lab's module graph, not only those lab's packages use: the graph has
// modules with upper-case letters, whose cache paths are escaped.
func TestPinnedGoSumIsTheGoCommands(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	var graph []*debug.Module
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var mod struct {
			Path, Version string
			Main          bool
		}
		if err := dec.Decode(&mod); err != nil {
			t.Fatal(err)
		}
		if !mod.Main {
			graph = append(graph, &debug.Module{Path: mod.Path, Version: mod.Version})
		}
	}
	m, err := pinnedFrom("example.com/lab31", goDirective(), graph, moduleCache())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // "path version/go.mod" → hash
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var mod struct{ Path, Version, GoModSum string }
		if err := dec.Decode(&mod); err != nil {
			t.Fatal(err)
		}
		if mod.GoModSum != "" {
			want[mod.Path+" "+mod.Version+"/go.mod"] = mod.GoModSum
		}
	}
	compared, escaped := 0, false
	for _, line := range strings.Split(strings.TrimSpace(string(m.GoSum)), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 3 || !strings.HasSuffix(fields[1], "/go.mod") {
			continue
		}
		key := fields[0] + " " + fields[1]
		w, ok := want[key]
		if !ok {
			continue
		}
		if fields[2] != w {
			t.Errorf("go.sum has %s %s, the go command computes %s", key, fields[2], w)
		}
		compared++
		escaped = escaped || strings.ToLower(fields[0]) != fields[0]
	}
	if compared < 20 {
		t.Errorf("only %d go.mod hashes could be compared with the go command's:\n%s", compared, m.GoSum)
	}
	if !escaped {
		t.Errorf("no module with upper-case letters (an escaped cache path) was compared")
	}
}
