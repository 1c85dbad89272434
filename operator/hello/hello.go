package hello

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/operator-lab/lab/observe"
	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/internal/status"
	"github.com/operator-lab/lab/operator/switches"
)

// ControllerName is the name the HelloWorld controller runs and emits under.
const ControllerName = "helloworld"

// dependencyRetry is how long requeue=after waits for the dependency, before
// timescale: the lesson's "dependency not ready — check again soon".
const dependencyRetry = 5 * time.Second

// Dependency is what a HelloWorld needs before it can be rendered: the
// simulated external system's health check.
type Dependency interface {
	HealthCheck(ctx context.Context) error
}

// Reconciler reconciles HelloWorld objects.
type Reconciler struct {
	// Client should read from the manager's cache (mgr.GetClient(), wrapped by
	// observe.Client to report every call).
	Client client.Client
	// APIReader reads straight from the API server (mgr.GetAPIReader(),
	// wrapped by observe.Reader): for the Secret a spec.secretRef names.
	// Secrets are not watched, and a cached read would start an informer on
	// every Secret the operator may see.
	APIReader  client.Reader
	Scheme     *runtime.Scheme
	Switches   *switches.Switches
	Dependency Dependency
	// Emitter receives condition events (nil: none).
	Emitter observe.Emitter
}

// ConfigMapName is the name of the ConfigMap owned by the HelloWorld named name.
func ConfigMapName(name string) string { return name + "-greeting" }

// Render returns the ConfigMap data for a spec: the message, and the
// greeting as count lines of it.
func Render(spec v1alpha1.HelloWorldSpec) map[string]string {
	lines := make([]string, 0, max(spec.Count, 0))
	for i := int32(0); i < spec.Count; i++ {
		lines = append(lines, spec.Message)
	}
	return map[string]string{
		"message":  spec.Message,
		"greeting": strings.Join(lines, "\n"),
	}
}

// +kubebuilder:rbac:groups=lab.operator-lab.dev,resources=helloworlds,verbs=get;list;watch
// +kubebuilder:rbac:groups=lab.operator-lab.dev,resources=helloworlds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=lab.operator-lab.dev,resources=helloworlds/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reconcile brings the HelloWorld's ConfigMap and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hw := &v1alpha1.HelloWorld{}
	if err := r.Client.Get(ctx, req.NamespacedName, hw); err != nil {
		// Deleted since it was queued: nothing to do. The ConfigMap goes with
		// it through its owner reference (garbage collection).
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	sw := r.Switches.Get()
	before := hw.Status.DeepCopy()
	var conds status.Conditions
	gen := hw.Generation
	list := &hw.Status.Conditions

	if hw.Spec.Count > v1alpha1.MaxHelloCount {
		msg := fmt.Sprintf("spec.count is %d, at most %d is supported", hw.Spec.Count, v1alpha1.MaxHelloCount)
		conds.Set(list, gen, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, msg)
		conds.Set(list, gen, v1alpha1.ConditionFailed, metav1.ConditionTrue, v1alpha1.ReasonInvalidSpec, msg)
		if err := r.persist(ctx, hw, before, &conds); err != nil {
			return reconcile.Result{}, err
		}
		// Retrying cannot fix the spec; a spec change (a new event) will.
		return reconcile.Result{}, reconcile.TerminalError(errors.New(msg))
	}

	if err := r.Dependency.HealthCheck(ctx); err != nil {
		msg := err.Error()
		conds.Set(list, gen, v1alpha1.ConditionDependencyAvailable, metav1.ConditionFalse, v1alpha1.ReasonUnavailable, msg)
		conds.Set(list, gen, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonUnavailable, "waiting for the dependency")
		if sw.Requeue == switches.RequeueTerminal {
			conds.Set(list, gen, v1alpha1.ConditionFailed, metav1.ConditionTrue, v1alpha1.ReasonGaveUp, msg)
		}
		if err := r.persist(ctx, hw, before, &conds); err != nil {
			return reconcile.Result{}, err
		}
		return sw.NotDone(err, sw.Scale(dependencyRetry))
	}
	conds.Set(list, gen, v1alpha1.ConditionDependencyAvailable, metav1.ConditionTrue, v1alpha1.ReasonAvailable, "health check passed")

	signature, err := r.signature(ctx, hw)
	if err != nil {
		return reconcile.Result{}, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(hw.Name), Namespace: hw.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = Render(hw.Spec)
		if hw.Spec.SecretRef != "" {
			cm.Data[v1alpha1.SignatureKey] = signature
		}
		return controllerutil.SetControllerReference(hw, cm, r.Scheme)
	}); apierrors.IsAlreadyExists(err) {
		// The cache has not yet seen the ConfigMap an earlier reconcile
		// created: its watch event queues this HelloWorld again, and a
		// retry now would read the same cache.
		return reconcile.Result{}, nil
	} else if err != nil {
		return reconcile.Result{}, fmt.Errorf("sync ConfigMap %s: %w", cm.Name, err)
	}

	hw.Status.ConfigMapName = cm.Name
	hw.Status.ObservedGeneration = gen
	conds.Set(list, gen, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReconciled, "ConfigMap "+cm.Name+" is in sync")
	conds.Clear(list, gen, v1alpha1.ConditionFailed, v1alpha1.ReasonRecovered, "reconciled again")
	return reconcile.Result{}, r.persist(ctx, hw, before, &conds)
}

// signature reads the signature from the Secret spec.secretRef names, if
// any, through the APIReader: one request, and no informer on Secrets. A
// missing Secret is an error: Secrets are not watched, so only a retry will
// notice it once it is created.
func (r *Reconciler) signature(ctx context.Context, hw *v1alpha1.HelloWorld) (string, error) {
	if hw.Spec.SecretRef == "" {
		return "", nil
	}
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: hw.Namespace, Name: hw.Spec.SecretRef}
	if err := r.APIReader.Get(ctx, key, &secret); err != nil {
		return "", fmt.Errorf("read Secret %s: %w", key.Name, err)
	}
	return string(secret.Data[v1alpha1.SignatureKey]), nil
}

// persist writes the status if it changed and then reports the changed
// conditions. Writing only on change keeps a steady state free of writes
// (each write is a watch event that would reconcile the object again).
//
// A Conflict means this reconcile worked from an outdated copy (typically
// the cache had not caught up with a newer write): as the lesson says, it
// is returned, wrapped, and the queue's retry works from fresh data.
// NotFound means the object is gone: there is no status left to write.
// Either way no condition events follow, as nothing was persisted.
func (r *Reconciler) persist(ctx context.Context, hw *v1alpha1.HelloWorld, before *v1alpha1.HelloWorldStatus, conds *status.Conditions) error {
	if equality.Semantic.DeepEqual(before, &hw.Status) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, hw); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("update status of HelloWorld %s/%s: %w", hw.Namespace, hw.Name, err)
	}
	conds.Emit(ctx, r.Emitter)
	return nil
}
