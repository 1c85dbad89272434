package scheme

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
)

// New returns a fresh scheme with client-go's types and lab.operator-lab.dev/v1alpha1.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register client-go types: %w", err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register %s types: %w", v1alpha1.GroupVersion, err)
	}
	return s, nil
}
