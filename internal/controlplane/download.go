package controlplane

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// releaseIndex is the envtest release index that setup-envtest reads:
// releases → version → archive name → {hash (sha512), selfLink}.
type releaseIndex struct {
	Releases map[string]map[string]struct {
		Hash     string `json:"hash"`
		SelfLink string `json:"selfLink"`
	} `json:"releases"`
}

// downloadClient gives up quickly when the site does not answer, so that on
// a machine without access the build fallback starts at once.
func downloadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
	}}
}

// download fetches the newest archive of lab's Kubernetes minor version for
// this platform from the index, checks its sha512 and unpacks the binaries into dir.
func download(ctx context.Context, indexURL, dir string, log io.Writer) error {
	if indexURL == "" {
		indexURL = envtest.DefaultBinaryAssetsIndexURL
	}
	client := downloadClient()
	body, err := fetch(ctx, client, indexURL)
	if err != nil {
		return fmt.Errorf("fetch the envtest release index: %w", err)
	}
	var index releaseIndex
	err = yaml.Unmarshal(body, &index)
	if err != nil {
		return fmt.Errorf("parse the envtest release index %s: %w", indexURL, err)
	}
	name, link, hash, err := pickArchive(index)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "downloading %s\n", name)
	archive, err := fetch(ctx, client, link)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	sum := sha512.Sum512(archive)
	if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, hash) {
		return fmt.Errorf("download %s: sha512 mismatch (got %s, index says %s)", name, got, hash)
	}
	return unpackBinaries(archive, dir)
}

func fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func pickArchive(index releaseIndex) (name, link, hash string, err error) {
	prefix := "v" + minorVersion() + "."
	var versions []*version.Version
	for v := range index.Releases {
		if strings.HasPrefix(v, prefix) {
			if parsed, perr := version.ParseSemantic(v); perr == nil && parsed.PreRelease() == "" {
				versions = append(versions, parsed)
			}
		}
	}
	sort.Slice(versions, func(i, j int) bool { return versions[j].LessThan(versions[i]) })
	for _, v := range versions {
		tag := "v" + v.String()
		want := fmt.Sprintf("envtest-%s-%s-%s.tar.gz", tag, runtime.GOOS, runtime.GOARCH)
		if a, ok := index.Releases[tag][want]; ok {
			return want, a.SelfLink, a.Hash, nil
		}
	}
	return "", "", "", fmt.Errorf("the envtest release index has no %sx archive for %s/%s", prefix, runtime.GOOS, runtime.GOARCH)
}

// unpackBinaries extracts the known binaries (wherever they sit in the
// archive) into dir and ignores everything else.
func unpackBinaries(archive []byte, dir string) error {
	gz, err := gzip.NewReader(strings.NewReader(string(archive)))
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		name := path.Base(hdr.Name)
		if hdr.Typeflag != tar.TypeReg || !slices.Contains(BinaryNames, name) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return fmt.Errorf("unpack %s: %w", name, err)
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("unpack %s: %w", name, err)
		}
	}
}
