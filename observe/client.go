package observe

import (
	"context"
	"errors"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Client wraps a client (normally mgr.GetClient()) so that every call emits a
// client event. Reads are reported with source "cache" (the manager's client
// reads from the informer cache), writes with source "api".
func Client(em Emitter, c client.Client) client.Client {
	if em == nil {
		em = Discard
	}
	o := clientObserver{em: em, scheme: c.Scheme(), readSource: SourceCache}
	return interceptor.NewClient(withWatch(c), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, key, obj, opts...)
			o.emit(ctx, "get", obj, key.Name, o.readSource, err)
			return err
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			err := c.List(ctx, list, opts...)
			o.emit(ctx, "list", list, "", o.readSource, err)
			return err
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, obj, opts...)
			o.emit(ctx, "create", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			err := c.Update(ctx, obj, opts...)
			o.emit(ctx, "update", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			err := c.Patch(ctx, obj, patch, opts...)
			o.emit(ctx, "patch", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			err := c.Apply(ctx, obj, opts...)
			o.emitApply(ctx, "apply", obj, err)
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			err := c.Delete(ctx, obj, opts...)
			o.emit(ctx, "delete", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			err := c.DeleteAllOf(ctx, obj, opts...)
			o.emit(ctx, "deleteallof", obj, "", SourceAPI, err)
			return err
		},
		// Subresource reads (e.g. scale) go to the API server, not the cache.
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceGetOption) error {
			err := c.SubResource(sub).Get(ctx, obj, subObj, opts...)
			o.emit(ctx, sub+".get", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			err := c.SubResource(sub).Create(ctx, obj, subObj, opts...)
			o.emit(ctx, sub+".create", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			o.emit(ctx, sub+".update", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			o.emit(ctx, sub+".patch", obj, obj.GetName(), SourceAPI, err)
			return err
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			err := c.SubResource(sub).Apply(ctx, obj, opts...)
			o.emitApply(ctx, sub+".apply", obj, err)
			return err
		},
	})
}

// Reader wraps a reader that goes straight to the API server (normally
// mgr.GetAPIReader()); its reads are reported with source "api".
func Reader(em Emitter, r client.Reader) client.Reader {
	if em == nil {
		em = Discard
	}
	var scheme *runtime.Scheme
	if s, ok := r.(interface{ Scheme() *runtime.Scheme }); ok {
		scheme = s.Scheme()
	}
	return &observedReader{inner: r, o: clientObserver{em: em, scheme: scheme, readSource: SourceAPI}}
}

type observedReader struct {
	inner client.Reader
	o     clientObserver
}

func (r *observedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.inner.Get(ctx, key, obj, opts...)
	r.o.emit(ctx, "get", obj, key.Name, r.o.readSource, err)
	return err
}

func (r *observedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := r.inner.List(ctx, list, opts...)
	r.o.emit(ctx, "list", list, "", r.o.readSource, err)
	return err
}

type clientObserver struct {
	em         Emitter
	scheme     *runtime.Scheme
	readSource string
}

func (o clientObserver) emit(ctx context.Context, verb string, obj runtime.Object, name, source string, err error) {
	Emit(ctx, o.em, ClientEvent(ClientCall{
		Verb: verb, Object: kindOf(o.scheme, obj), Name: name,
		Source: source, Outcome: outcomeOf(err), Error: errorText(err),
	}))
}

func (o clientObserver) emitApply(ctx context.Context, verb string, obj runtime.ApplyConfiguration, err error) {
	var kind, name string
	// Generated apply configurations have these getters; others are reported
	// without kind and name rather than guessed.
	if k, ok := obj.(interface{ GetKind() *string }); ok && k.GetKind() != nil {
		kind = *k.GetKind()
	}
	if n, ok := obj.(interface{ GetName() *string }); ok && n.GetName() != nil {
		name = *n.GetName()
	}
	Emit(ctx, o.em, ClientEvent(ClientCall{
		Verb: verb, Object: kind, Name: name,
		Source: SourceAPI, Outcome: outcomeOf(err), Error: errorText(err),
	}))
}

// kindOf names the kind of obj; for a list, the kind of its items.
func kindOf(scheme *runtime.Scheme, obj runtime.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind // set on unstructured objects
	if kind == "" && scheme != nil {
		if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
			kind = gvk.Kind
		}
	}
	if kind == "" {
		if gvk, err := apiutil.GVKForObject(obj, clientgoscheme.Scheme); err == nil {
			kind = gvk.Kind
		}
	}
	if kind == "" { // a type nobody registered: its Go name is still informative
		kind = reflect.Indirect(reflect.ValueOf(obj)).Type().Name()
	}
	if meta.IsListType(obj) {
		kind = strings.TrimSuffix(kind, "List")
	}
	return kind
}

func outcomeOf(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case apierrors.IsNotFound(err):
		return OutcomeNotFound
	case apierrors.IsConflict(err):
		return OutcomeConflict
	case apierrors.IsAlreadyExists(err):
		return OutcomeAlreadyExists
	default:
		return OutcomeError
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// withWatch lets interceptor.NewClient wrap a client that cannot watch (the
// manager's client cannot); Watch then fails with a clear error.
func withWatch(c client.Client) client.WithWatch {
	if w, ok := c.(client.WithWatch); ok {
		return w
	}
	return noWatch{c}
}

type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("observe: the wrapped client does not support Watch")
}
