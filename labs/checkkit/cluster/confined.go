package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// ConfinedConfig returns a copy of cfg that may write only in namespace ns
// and read everywhere cfg may. Checks hand it to learner code that builds
// its own manager: a manager that watches every namespace still sees the
// other namespaces' objects — so the check can say so — but its writes
// there are answered 403 Forbidden, as RBAC answers a user confined to ns,
// so it cannot change what the checks running beside it see.
//
// The confinement is in the config's transport, not in RBAC: it needs no
// rights beyond the checks' own, so it works alike on lab's control plane
// and on a shared cluster, where a learner may not create roles or
// impersonate. It guards against a manager that watches too much, not
// against code that builds another config (the check binary's own
// kubeconfig is within its reach either way).
func ConfinedConfig(cfg *rest.Config, ns string) *rest.Config {
	confined := rest.CopyConfig(cfg)
	confined.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &confinedTransport{namespace: ns, next: next}
	})
	return confined
}

// confinedTransport refuses the writes a user confined to namespace would
// be refused.
type confinedTransport struct {
	namespace string
	next      http.RoundTripper
}

// writeVerbs are the API verbs of the HTTP methods that change something.
var writeVerbs = map[string]string{
	http.MethodPost:   "create",
	http.MethodPut:    "update",
	http.MethodPatch:  "patch",
	http.MethodDelete: "delete",
}

// statelessGroups hold the review kinds (access and token reviews): a
// create asks a question and stores nothing, and every user may ask.
var statelessGroups = map[string]bool{"authorization.k8s.io": true, "authentication.k8s.io": true}

func (t *confinedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	verb, write := writeVerbs[req.Method]
	if !write {
		return t.next.RoundTrip(req)
	}
	target := apiTarget(req.URL.Path)
	if target.namespace == t.namespace || statelessGroups[target.group] {
		return t.next.RoundTrip(req)
	}
	if req.Body != nil {
		_ = req.Body.Close() // a RoundTripper closes the body, whatever it answers
	}
	where := "at cluster scope"
	if target.namespace != "" {
		where = fmt.Sprintf("in the namespace %q", target.namespace)
	}
	denied := apierrors.NewForbidden(schema.GroupResource{Group: target.group, Resource: target.resource}, target.name,
		fmt.Errorf("the manager under check may write only in the namespace %q: it cannot %s resource %q in API group %q %s",
			t.namespace, verb, target.resource, target.group, where))
	status := denied.ErrStatus
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, err := json.Marshal(status)
	if err != nil {
		return nil, fmt.Errorf("encode the refusal of %s %s: %w", req.Method, req.URL.Path, err)
	}
	return &http.Response{
		Status:        "403 Forbidden",
		StatusCode:    http.StatusForbidden,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// target is what an API request's path names.
type target struct {
	group, namespace, resource, name string
}

// namespaceSubresources are the subresources of a Namespace object itself:
// /api/v1/namespaces/NAME/status is that namespace's status, not a
// resource "status" in it.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// apiTarget reads a Kubernetes API path (/api/v1/..., /apis/GROUP/VERSION/...)
// as the API server does. Any other path (a non-resource URL) names no
// namespace.
func apiTarget(path string) target {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var t target
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		t.group, parts = parts[1], parts[3:]
	default:
		return target{resource: path}
	}
	if len(parts) >= 3 && parts[0] == "namespaces" && !namespaceSubresources[parts[2]] {
		t.namespace, parts = parts[1], parts[2:]
	}
	if len(parts) > 0 {
		t.resource = parts[0]
	}
	if len(parts) > 1 {
		t.name = parts[1]
	}
	return t
}
