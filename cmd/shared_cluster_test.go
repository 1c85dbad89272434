package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-lab/lab/internal/controlplane"
	"github.com/operator-lab/lab/internal/labtest"
	"github.com/operator-lab/lab/labs/checkkit"
)

// TestTwoLearnersCheckOnOneCluster: two learners grade at once on one
// cluster (a control plane lab treats as another's, through --kubeconfig),
// each with no rights but the README's roles: each run's namespaces carry
// its learner and run, each grade is the one its own code earns — the
// solved workspace passes everything, exercise manager included, the
// starter nothing — and when both are done every namespace of theirs is
// deleted (on envtest, which has no namespace controller to finish the
// job, left Terminating and empty).
func TestTwoLearnersCheckOnOneCluster(t *testing.T) {
	t.Parallel()
	cp := labControlPlane(t, "3.1")
	solved, starter := filepath.Join(t.TempDir(), "solved"), filepath.Join(t.TempDir(), "starter")
	mustRun(t, "init", "3.1", "--dir", solved)
	mustRun(t, "init", "3.1", "--dir", starter)
	for _, e := range mustLab(t, "3.1").Exercises {
		mustRun(t, "solution", "3.1", e.ID, "--dir", solved, "--force", "--apply")
	}
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// What the cluster holds while they check: namespace → its labels.
	seen := map[string]map[string]string{}
	var seenMu sync.Mutex
	watching, stopWatching := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watching.Err() == nil {
			var list corev1.NamespaceList
			if err := c.List(watching, &list, client.HasLabels{checkkit.RunLabel}); err == nil {
				seenMu.Lock()
				for _, ns := range list.Items {
					seen[ns.Name] = ns.Labels
				}
				seenMu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	type outcome struct {
		out, errOut string
		code        int
	}
	learners := map[string]string{"ada": solved, "grace": starter}
	kubeconfigs := map[string]string{}
	for learner := range learners {
		kubeconfigs[learner] = classLearner(t, cp, c, learner)
	}
	outcomes := map[string]outcome{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for learner, dir := range learners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errOut, code := labtest.RunBinary(t, []string{checkkit.LearnerEnv + "=" + learner},
				"check", "--dir", dir, "--lang", "en", "--kubeconfig", kubeconfigs[learner])
			mu.Lock()
			defer mu.Unlock()
			outcomes[learner] = outcome{out, errOut, code}
		}()
	}
	wg.Wait()
	stopWatching()
	<-watched

	if o := outcomes["ada"]; o.code != 0 || !strings.Contains(o.out, "4 of 4 passed") || !strings.Contains(o.out, "Score: 40 of 40 points.") {
		t.Errorf("ada's solved workspace: exit %d\n%s%s", o.code, o.out, o.errOut)
	}
	if o := outcomes["grace"]; o.code != 1 || !strings.Contains(o.out, "0 of 4 passed") || !strings.Contains(o.out, "Score: 0 of 40 points.") {
		t.Errorf("grace's starter workspace: exit %d\n%s%s", o.code, o.out, o.errOut)
	}
	runs := map[string]map[string]bool{} // learner → run ids
	seenMu.Lock()
	for ns, labels := range seen {
		learner, run := labels[checkkit.LearnerLabel], labels[checkkit.RunLabel]
		if _, ok := learners[learner]; !ok || run == "" {
			t.Errorf("namespace %s is labelled learner %q, run %q", ns, learner, run)
			continue
		}
		if runs[learner] == nil {
			runs[learner] = map[string]bool{}
		}
		runs[learner][run] = true
	}
	seenMu.Unlock()
	for learner := range learners {
		if len(runs[learner]) != 1 {
			t.Errorf("%s's namespaces name runs %v, want one", learner, runs[learner])
		}
	}
	if runs["ada"] != nil && runs["grace"] != nil && fmt.Sprint(runs["ada"]) == fmt.Sprint(runs["grace"]) {
		t.Errorf("both learners' namespaces name the same run %v", runs["ada"])
	}
	var left corev1.NamespaceList
	if err := c.List(context.Background(), &left, client.HasLabels{checkkit.RunLabel}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range left.Items {
		if ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s (%v) is left in the cluster", ns.Name, ns.Labels)
			continue
		}
		for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &coordinationv1.LeaseList{}} {
			if err := c.List(context.Background(), list, client.InNamespace(ns.Name)); err != nil {
				t.Fatal(err)
			}
			if n := meta.LenList(list); n > 0 {
				t.Errorf("deleted namespace %s still holds %d %T", ns.Name, n, list)
			}
		}
	}
}

// learnersGroup is the group the tests' class learners are in.
const learnersGroup = "lab-learners"

// classLearner makes a user of cp with no rights but the README's roles,
// bound to a group, as a cluster admin would for a class, and returns its
// kubeconfig.
func classLearner(t *testing.T, cp *controlplane.ControlPlane, admin client.Client, name string) string {
	t.Helper()
	ctx := context.Background()
	for _, role := range labtest.ReadmeRoles(t) {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: learnersGroup}},
		}
		for _, obj := range []client.Object{&role, binding} {
			if err := admin.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
			}
		}
	}
	kubeconfig, err := cp.AddUser(name, learnersGroup)
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestCheckOnAClusterItCannotUse: a cluster that does not answer, a user
// without the rights the checks need, and a CRD of lab's name with another
// schema each stop lab check before anything runs, with a message that
// says what is wrong, and leave nothing in the cluster.
func TestCheckOnAClusterItCannotUse(t *testing.T) {
	t.Parallel()
	cp, err := controlplane.Start(context.Background(), controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	dir := filepath.Join(t.TempDir(), "ws")
	mustRun(t, "init", "3.1", "--dir", dir)
	check := func(kubeconfig string) (string, int) {
		out, errOut, code := labtest.RunBinary(t, nil, "check", "--dir", dir, "--lang", "en", "--kubeconfig", kubeconfig)
		return out + errOut, code
	}

	dead := filepath.Join(t.TempDir(), "dead.kubeconfig")
	raw := strings.Replace(readFile(t, cp.KubeconfigPath), strings.TrimPrefix(cp.Host, "https://"), "127.0.0.1:1", 1)
	if err := os.WriteFile(dead, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	if said, code := check(dead); code != 1 || !strings.Contains(said, "does not answer") || !strings.Contains(said, "127.0.0.1:1") {
		t.Errorf("an unreachable cluster: exit %d\n%s", code, said)
	}

	nobody, err := cp.AddUser("nobody")
	if err != nil {
		t.Fatal(err)
	}
	if said, code := check(nobody); code != 1 || !strings.Contains(said, "lack what lab check needs") ||
		!strings.Contains(said, "create, delete, get, list, watch namespaces") || !strings.Contains(said, "Grading on a shared cluster") {
		t.Errorf("a user without rights: exit %d\n%s", code, said)
	}

	// Another tool's CRD under the name of lab 3.1's.
	crds, err := mustLab(t, "3.1").CustomResourceDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	foreign := crds[0].DeepCopy()
	foreign.Spec.Versions[0].Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
	}}
	scheme := runtime.NewScheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	if said, code := check(cp.KubeconfigPath); code != 1 || !strings.Contains(said, "already has CRD "+foreign.Name+", with another definition") {
		t.Errorf("a foreign CRD: exit %d\n%s", code, said)
	}
	var namespaces corev1.NamespaceList
	if err := c.List(context.Background(), &namespaces, client.HasLabels{checkkit.RunLabel}); err != nil {
		t.Fatal(err)
	}
	if len(namespaces.Items) > 0 {
		t.Errorf("a refused check left %d namespaces", len(namespaces.Items))
	}
}
