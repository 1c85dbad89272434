package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/operator-lab/lab/internal/proc"
)

// attachedDirName is the folder of the state directory where each lab
// process using the shared control plane registers, so that `lab env down`
// can tell who loses it.
const attachedDirName = "attached"

// attachment is one lab process using the shared control plane, and which
// serving process it attached to (a registration left from an earlier
// control plane is not counted).
type attachment struct {
	PID          int      `json:"pid"`
	ProcessStart string   `json:"processStart"`
	Command      []string `json:"command"`
	ServerPID    int      `json:"serverPid"`
	ServerStart  string   `json:"serverProcessStart"`
}

// registerAttachment records that this process uses the control plane of
// st, in a new file (created exclusively, 0600) named after the PID; a
// process that attaches twice gets two files. Registrations of processes
// that are gone are cleaned up on the way. It returns the file's path, for
// unregisterAttachment.
func registerAttachment(st *State) (string, error) {
	dir, err := privateStateDir(true)
	if err != nil {
		return "", err
	}
	liveAttachments(st)
	adir := filepath.Join(dir, attachedDirName)
	if err := os.Mkdir(adir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("register with the lab env control plane: %w", err)
	}
	pid := os.Getpid()
	data, err := json.Marshal(attachment{PID: pid, ProcessStart: proc.StartTime(pid), Command: os.Args,
		ServerPID: st.PID, ServerStart: st.ProcessStart})
	if err != nil {
		return "", fmt.Errorf("register with the lab env control plane: %w", err)
	}
	// Written whole under a temporary name and renamed, so a concurrent
	// liveAttachments never reads it half-written and deletes it.
	path := filepath.Join(adir, fmt.Sprintf("%d-%s-%d.json", pid, proc.StartTime(pid), attachments.Add(1)))
	if err := writePrivateFile(path, data); err != nil {
		return "", fmt.Errorf("register with the lab env control plane: %w", err)
	}
	return path, nil
}

// attachments numbers this process's registrations (tests attach many times).
var attachments atomic.Int64

// unregisterAttachment removes a registration made by registerAttachment.
func unregisterAttachment(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unregister from the lab env control plane: %w", err)
	}
	return nil
}

// liveAttachments returns the processes using the control plane of st,
// sorted by PID. A registration whose process is gone (PID and start time
// no longer match), that names another control plane, or that cannot be
// read is removed.
func liveAttachments(st *State) []attachment {
	dir, err := StateDir()
	if err != nil {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(dir, attachedDirName, "*.json"))
	var live []attachment
	for _, p := range paths {
		data, err := os.ReadFile(p)
		var a attachment
		if err != nil || json.Unmarshal(data, &a) != nil || !proc.Alive(a.PID, a.ProcessStart) ||
			a.ServerPID != st.PID || a.ServerStart != st.ProcessStart {
			_ = os.Remove(p)
			continue
		}
		live = append(live, a)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].PID < live[j].PID })
	return live
}

// attachedWarning is the line `lab env down` prints before it stops a
// control plane that lab processes still use, or "" when none does.
func attachedWarning(users []attachment) string {
	var pids []string
	seen := map[int]bool{}
	for _, a := range users {
		if !seen[a.PID] {
			seen[a.PID] = true
			pids = append(pids, strconv.Itoa(a.PID))
		}
	}
	switch len(pids) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("warning: 1 lab session uses this control plane (pid %s); it loses it now", pids[0])
	default:
		return fmt.Sprintf("warning: %d lab sessions use this control plane (pids %s); they lose it now", len(pids), strings.Join(pids, ", "))
	}
}
