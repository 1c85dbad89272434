package crds

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// InstallMissing installs the operator's CRDs and the extra ones (such as
// a lab's exercise CRDs) with Install.
func InstallMissing(ctx context.Context, cfg *rest.Config, extra ...*apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	return Install(ctx, cfg, append(all, extra...)...)
}

// ForeignCRDError is a CRD the cluster already has under the name of one
// of lab's, with another definition: lab neither uses nor changes it.
type ForeignCRDError struct {
	Name, Host, Difference string
}

func (e *ForeignCRDError) Error() string {
	return fmt.Sprintf("the cluster at %s already has CRD %s, with another definition than lab's (%s); "+
		"lab does not change it, as something else (another version of lab, another tool) uses it: "+
		"delete it if it is a left-over, or use another cluster", e.Host, e.Name, e.Difference)
}

// Install creates those of want that the cluster behind cfg does not have
// yet, and waits until every one is established. A CRD the cluster has
// already must be lab's to the letter (group, names, scope, and each
// version's schema and subresources), or Install stops with a
// *ForeignCRDError and changes nothing. It returns the names of the CRDs
// it created.
func Install(ctx context.Context, cfg *rest.Config, want ...*apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register apiextensions types: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	var missing []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range want {
		have := &apiextensionsv1.CustomResourceDefinition{}
		err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, have)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, crd)
		case err != nil:
			return nil, fmt.Errorf("read CRD %s: %w", crd.Name, err)
		default:
			if diff := difference(crd, have); diff != "" {
				return nil, &ForeignCRDError{Name: crd.Name, Host: cfg.Host, Difference: diff}
			}
		}
	}
	var created []string
	for _, crd := range missing {
		err := c.Create(ctx, crd.DeepCopy())
		switch {
		case err == nil:
			created = append(created, crd.Name)
		case apierrors.IsAlreadyExists(err): // another lab installed it meanwhile
		default:
			return created, fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range want {
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return created, err
		}
	}
	return created, nil
}

// difference says how the cluster's CRD have differs from lab's want in
// what lab relies on; "" when it does not.
func difference(want, have *apiextensionsv1.CustomResourceDefinition) string {
	switch {
	case want.Spec.Group != have.Spec.Group:
		return fmt.Sprintf("group %s, not %s", have.Spec.Group, want.Spec.Group)
	case want.Spec.Names.Kind != have.Spec.Names.Kind || want.Spec.Names.Plural != have.Spec.Names.Plural:
		return fmt.Sprintf("kind %s (%s), not %s (%s)", have.Spec.Names.Kind, have.Spec.Names.Plural, want.Spec.Names.Kind, want.Spec.Names.Plural)
	case want.Spec.Scope != have.Spec.Scope:
		return fmt.Sprintf("scope %s, not %s", have.Spec.Scope, want.Spec.Scope)
	}
	for _, v := range want.Spec.Versions {
		i := slices.IndexFunc(have.Spec.Versions, func(h apiextensionsv1.CustomResourceDefinitionVersion) bool { return h.Name == v.Name })
		if i < 0 {
			return "no version " + v.Name
		}
		h := have.Spec.Versions[i]
		switch {
		case h.Served != v.Served || h.Storage != v.Storage:
			return fmt.Sprintf("version %s served=%v storage=%v, not served=%v storage=%v", v.Name, h.Served, h.Storage, v.Served, v.Storage)
		case !equality.Semantic.DeepEqual(h.Schema, v.Schema):
			return fmt.Sprintf("version %s has another schema", v.Name)
		case !equality.Semantic.DeepEqual(h.Subresources, v.Subresources):
			return fmt.Sprintf("version %s has other subresources", v.Name)
		}
	}
	return ""
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for CRD %s to be established: %w", name, err)
	}
	return nil
}
