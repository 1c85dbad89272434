package controlplane

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// envtestArchive builds a tar.gz laid out like the envtest releases.
func envtestArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range append([]string{"README"}, BinaryNames...) {
		body := []byte("#!/bin/sh\necho " + name + "\n")
		if err := tw.WriteHeader(&tar.Header{Name: "controller-tools/envtest/" + name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func releaseServer(t *testing.T, archive []byte, hash string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	name := fmt.Sprintf("envtest-v1.37.4-%s-%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	mux.HandleFunc("/index.yaml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "releases:\n  v1.36.0:\n    envtest-v1.36.0-%[1]s-%[2]s.tar.gz:\n      hash: x\n      selfLink: %[3]s/old\n  v1.37.4:\n    %[4]s:\n      hash: %[5]s\n      selfLink: %[3]s/archive\n",
			runtime.GOOS, runtime.GOARCH, srv.URL, name, hash)
	})
	mux.HandleFunc("/archive", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(archive) })
	return srv
}

func TestSetupDownloadsFromTheReleaseIndexIntoTheStore(t *testing.T) {
	root := isolatedStore(t)
	archive := envtestArchive(t)
	sum := sha512.Sum512(archive)
	srv := releaseServer(t, archive, hex.EncodeToString(sum[:]))

	b, err := Setup(context.Background(), SetupOptions{IndexURL: srv.URL + "/index.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Source != "download" || filepath.Dir(b.Dir) != root {
		t.Fatalf("Setup() = %+v, want a download into %s", b, root)
	}
	if missing := missingBinaries(b.Dir); len(missing) != 0 {
		t.Fatalf("downloaded set misses %v", missing)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "README")); !os.IsNotExist(err) {
		t.Fatalf("unpacked a file that is not a binary")
	}
}

func TestDownloadRejectsAWrongHash(t *testing.T) {
	srv := releaseServer(t, envtestArchive(t), strings.Repeat("ab", 64))
	err := download(context.Background(), srv.URL+"/index.yaml", t.TempDir(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sha512 mismatch") {
		t.Fatalf("download with a wrong hash: err = %v", err)
	}
}

func TestDownloadGivesUpAtOnceWhenTheSiteDoesNotAnswer(t *testing.T) {
	// A port nobody listens on: the connection is refused immediately, so
	// the build fallback is not delayed.
	start := time.Now()
	err := download(context.Background(), "http://127.0.0.1:1/index.yaml", t.TempDir(), io.Discard)
	if err == nil {
		t.Fatal("download from a closed port succeeded")
	}
	t.Logf("gave up after %s: %v", time.Since(start), err)
}
