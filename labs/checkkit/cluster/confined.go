package cluster

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/labs/checkkit"
)

// checkersGroup is the group every confined check user belongs to; one
// ClusterRole bound to it lets them read, never write, outside their
// namespace.
const checkersGroup = "lab:checks"

// readEverywhere names the ClusterRole and ClusterRoleBinding of
// checkersGroup. They are the same for every run, so a check killed half way
// leaves nothing new behind.
const readEverywhere = "lab-checks-read"

// ConfinedConfig returns a copy of cfg that acts as a fresh user who may do
// anything in namespace ns and only read (get, list, watch) elsewhere. Checks
// hand it to learner code that builds its own manager: a manager that watches
// every namespace still sees the other namespaces' objects — so the check
// can say so — but cannot write into the namespaces of the checks running
// beside it.
func ConfinedConfig(t testing.TB, cfg *rest.Config, c client.Client, ns string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: readEverywhere},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"},
		}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: readEverywhere},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readEverywhere},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: checkersGroup}},
	}
	user := checkkit.Name("lab-check")
	nsRole := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"},
		}},
	}
	nsBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, obj := range []client.Object{role, binding, nsRole, nsBinding} {
		// Two checks may create the shared pair at once: either one's is right.
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s for the confined check user: %v", obj, obj.GetName(), err)
		}
	}
	confined := rest.CopyConfig(cfg)
	confined.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{checkersGroup, "system:authenticated"}}
	// The API server learns of new bindings through its own informers: wait
	// until both grants are in force, so the learner's manager does not
	// start with a Forbidden it would have to back off from.
	as, err := client.New(confined, client.Options{})
	if err != nil {
		t.Fatalf("create a client for the confined check user: %v", err)
	}
	checkkit.Eventually(t, "the confined check user's rights to be in force", func() error {
		for _, opts := range [][]client.ListOption{{client.InNamespace(ns)}, nil} {
			var list metav1.PartialObjectMetadataList
			list.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("RoleBindingList"))
			if err := as.List(ctx, &list, opts...); err != nil {
				return err
			}
		}
		return nil
	})
	return confined
}
