package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/operator-lab/lab/labs/checkkit"
)

// DeleteNamespace deletes a namespace and does what the namespace controller
// would: it deletes every object in it, releases the finalizers the
// deletes leave (whoever would finalize them has stopped) and finalizes the
// namespace. envtest runs no namespace controller, so without this a
// deleted namespace stays Terminating, with its objects, as long as the
// control plane runs; lab's sessions and checks share one for days.
//
// On a cluster with a namespace controller (it has begun, and says so in
// the namespace's conditions) the finalizing is left to it, and what the
// credentials may not delete or finalize is its to do: a learner's rights
// on a shared cluster need not reach every kind.
func DeleteNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	err = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil && !apierrors.IsConflict(err) { // a conflict: it is being deleted already
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	if err := deleteContents(ctx, cfg, name); err != nil {
		return fmt.Errorf("empty namespace %s: %w", name, err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finalize namespace %s: %w", name, err)
	}
	if len(ns.Status.Conditions) > 0 {
		return nil // a namespace controller is on it
	}
	ns.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("finalize namespace %s: %w", name, err)
	}
	return nil
}

// DeleteRun deletes, as DeleteNamespace does, every namespace labelled as
// made by the check run runID (checkkit.RunLabel): those a check binary
// that died could not delete itself. It returns how many there were.
func DeleteRun(ctx context.Context, cfg *rest.Config, runID string) (int, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: checkkit.RunLabel + "=" + runID})
	if err != nil {
		return 0, fmt.Errorf("list the run's namespaces: %w", err)
	}
	errs := make([]error, len(list.Items))
	var wg sync.WaitGroup
	for i, ns := range list.Items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = DeleteNamespace(ctx, cfg, ns.Name)
		}()
	}
	wg.Wait()
	return len(list.Items), errors.Join(errs...)
}

// deleteInBackground is how the namespace controller deletes. Without a
// garbage collector (envtest) it changes nothing but the warning about
// dependents kept: every kind is deleted anyway.
var deleteInBackground = metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}

// deleteContents deletes every object in namespace, of every namespaced
// resource that can be deleted as a collection, the resources at once: a
// check's clean-up is part of the learner's wait for a verdict.
func deleteContents(ctx context.Context, cfg *rest.Config, namespace string) error {
	resources, err := deletableResources(cfg)
	if err != nil {
		return err
	}
	// Deleting every kind includes deprecated ones (v1 Endpoints): their
	// warnings say nothing about the learner's code, and would be printed
	// under its verdict.
	quiet := rest.CopyConfig(cfg)
	quiet.WarningHandler = rest.NoWarnings{}
	mc, err := metadata.NewForConfig(quiet)
	if err != nil {
		return err
	}
	errs := make([]error, len(resources))
	var wg sync.WaitGroup
	for i, gvr := range resources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := mc.Resource(gvr).Namespace(namespace)
			err := res.DeleteCollection(ctx, deleteInBackground, metav1.ListOptions{})
			if err == nil || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				err = releaseFinalized(ctx, res)
			}
			if apierrors.IsForbidden(err) {
				err = nil // not the credentials' to delete: the namespace controller's
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", gvr.Resource, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// discovered caches, per API server, the namespaced resources that can be
// deleted as a collection: the CRDs a lab installs are there before any
// check or session starts, so one discovery per process is enough.
var discovered sync.Map // host → []schema.GroupVersionResource

func deletableResources(cfg *rest.Config) ([]schema.GroupVersionResource, error) {
	if v, ok := discovered.Load(cfg.Host); ok {
		return v.([]schema.GroupVersionResource), nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// Partial discovery (an aggregated API down) still lists the rest.
	lists, err := dc.ServerPreferredNamespacedResources()
	if len(lists) == 0 && err != nil {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if slices.Contains(r.Verbs, "deletecollection") {
				out = append(out, gv.WithResource(r.Name))
			}
		}
	}
	if err == nil {
		discovered.Store(cfg.Host, out)
	}
	return out, nil
}

// releaseFinalized removes the finalizers of the objects a delete left
// behind: the controller that would finalize them has stopped, and what
// they guard (a simulated external system) ended with it.
func releaseFinalized(ctx context.Context, res metadata.ResourceInterface) error {
	left, err := res.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	noFinalizers := []byte(`{"metadata":{"finalizers":null}}`)
	var errs []error
	for _, obj := range left.Items {
		if len(obj.Finalizers) == 0 {
			continue
		}
		if _, err := res.Patch(ctx, obj.Name, types.MergePatchType, noFinalizers, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release %s: %w", obj.Name, err))
		}
	}
	return errors.Join(errs...)
}
