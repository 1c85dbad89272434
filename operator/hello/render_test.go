package hello_test

import (
	"testing"

	"github.com/operator-lab/lab/operator/api/v1alpha1"
	"github.com/operator-lab/lab/operator/hello"
)

func TestRenderRepeatsTheMessageCountTimes(t *testing.T) {
	for _, tc := range []struct {
		count int32
		want  string
	}{{0, ""}, {1, "hi"}, {3, "hi\nhi\nhi"}} {
		got := hello.Render(v1alpha1.HelloWorldSpec{Message: "hi", Count: tc.count})
		if got["greeting"] != tc.want || got["message"] != "hi" {
			t.Errorf("count %d: %q", tc.count, got)
		}
	}
}
