package cmd

import (
	"testing"

	"github.com/operator-lab/lab/internal/iostreams"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs"
)

func mustLab(t *testing.T, id string) *labs.Lab {
	t.Helper()
	lab, err := labs.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// syncStreams are test streams (no terminal, no colour) whose output can be
// read while a command is still writing it.
func syncStreams() (streams *iostreams.IOStreams, out, errOut *labtest.SyncBuffer) {
	streams, _, _, _ = iostreams.Test()
	out, errOut = &labtest.SyncBuffer{}, &labtest.SyncBuffer{}
	streams.Out, streams.ErrOut = out, errOut
	return streams, out, errOut
}
