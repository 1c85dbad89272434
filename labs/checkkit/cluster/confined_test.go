package cluster

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestConfinedTransportLetsThroughWhatTheNamespaceAllows: reads anywhere,
// writes in the namespace and reviews reach the API server; every other
// write is answered 403 there and then, naming what was refused.
func TestConfinedTransportLetsThroughWhatTheNamespaceAllows(t *testing.T) {
	var reached []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Method+" "+r.URL.Path)
	}))
	defer server.Close()
	rt := &confinedTransport{namespace: "own", next: http.DefaultTransport}
	for _, tc := range []struct {
		method, path string
		through      bool
		refusal      string // in the 403's body
	}{
		{"GET", "/api/v1/namespaces/other/configmaps", true, ""},
		{"GET", "/apis/learn.operator-lab.dev/v1alpha1/helloworlds?watch=true", true, ""},
		{"POST", "/api/v1/namespaces/own/configmaps", true, ""},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/own/leases/lease-1", true, ""},
		{"PATCH", "/apis/learn.operator-lab.dev/v1alpha1/namespaces/own/helloworlds/h/status", true, ""},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", true, ""},
		{"POST", "/api/v1/namespaces/other/configmaps", false, `cannot create resource \"configmaps\" in API group \"\" in the namespace \"other\"`},
		{"DELETE", "/apis/learn.operator-lab.dev/v1alpha1/namespaces/other/helloworlds/h", false, `helloworlds.learn.operator-lab.dev \"h\" is forbidden`},
		{"DELETE", "/api/v1/namespaces/own", false, `cannot delete resource \"namespaces\" in API group \"\" at cluster scope`},
		{"PUT", "/api/v1/namespaces/own/finalize", false, `resource \"namespaces\"`},
		{"POST", "/api/v1/namespaces", false, `cannot create resource \"namespaces\"`},
		{"PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x", false, `at cluster scope`},
	} {
		reached = nil
		req, err := http.NewRequest(tc.method, server.URL+tc.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(raw)
		switch {
		case tc.through && (len(reached) != 1 || resp.StatusCode != http.StatusOK):
			t.Errorf("%s %s: status %d, reached the server %d times; want it let through", tc.method, tc.path, resp.StatusCode, len(reached))
		case !tc.through && (len(reached) != 0 || resp.StatusCode != http.StatusForbidden):
			t.Errorf("%s %s: status %d, reached the server %d times; want a 403 that never reaches it", tc.method, tc.path, resp.StatusCode, len(reached))
		case !tc.through && !strings.Contains(body, tc.refusal):
			t.Errorf("%s %s: the refusal says %s, want %s", tc.method, tc.path, body, tc.refusal)
		}
	}
}
