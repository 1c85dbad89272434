package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvDoctorReportsACorruptStateFile(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "state.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runLab(t, state, "doctor", "--skip-start")
	if code != 1 || strings.Contains(out, "everything lab needs is in place") {
		t.Fatalf("doctor with a corrupt env state file: code %d\n%s\n%s\nwant exit 1 and a problem", code, out, errOut)
	}
	var line, fix string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "lab env") && strings.HasPrefix(l, "[BAD]") {
			line = l
			if i+1 < len(lines) {
				fix = lines[i+1]
			}
		}
	}
	if !strings.Contains(line, "corrupt") || !strings.Contains(fix, "lab env down") {
		t.Fatalf("doctor does not report the corrupt state with its fix:\n%s", out)
	}

	// Once cleaned up, the state is no problem.
	if _, _, code := runLab(t, state, "env", "down"); code != 0 {
		t.Fatalf("env down: code %d", code)
	}
	out, _, _ = runLab(t, state, "doctor", "--skip-start")
	if strings.Contains(out, "[BAD] lab env") {
		t.Fatalf("doctor still reports the env state after env down:\n%s", out)
	}
}
