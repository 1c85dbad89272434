package crds

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// InstallMissing creates those of the operator's CRDs (and the extra ones,
// such as a lab's exercise CRDs) that the cluster behind cfg does not have
// yet, and waits until every one is established. Existing CRDs are left
// exactly as they are (a shared classroom cluster may hold a newer version).
// It returns the names of the CRDs it created.
func InstallMissing(ctx context.Context, cfg *rest.Config, extra ...*apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	all = append(all, extra...)
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register apiextensions types: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	var created []string
	for _, crd := range all {
		err := c.Create(ctx, crd)
		switch {
		case err == nil:
			created = append(created, crd.Name)
		case apierrors.IsAlreadyExists(err):
		default:
			return created, fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range all {
		if err := waitEstablished(ctx, c, crd.Name); err != nil {
			return created, err
		}
	}
	return created, nil
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
