package labtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// ReadmeRoles are the ClusterRoles the README's "Grading on a shared
// cluster" asks a cluster admin to bind to the learners: the YAML block
// after its "<!-- rights:" marker.
func ReadmeRoles(t testing.TB) []rbacv1.ClusterRole {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "<!-- rights:")
	if !ok {
		t.Fatal("the README has no rights block")
	}
	_, block, _ = strings.Cut(block, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	var roles []rbacv1.ClusterRole
	for _, doc := range strings.Split(block, "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			t.Fatalf("a role in the README: %v\n%s", err, doc)
		}
		roles = append(roles, role)
	}
	return roles
}
