package checkkit

import (
	"os"
	"regexp"
	"strings"
)

// A check run's identity, which the checker hands every check binary of
// the run and the checks put on what they create in the cluster: on a
// cluster shared by a class, a teacher sees whose run a namespace is, and
// the checker finds, when the run ends, every namespace it left.
const (
	// RunEnv holds the run's id.
	RunEnv = "LAB_CHECK_RUN"
	// LearnerEnv holds who runs it.
	LearnerEnv = "LAB_LEARNER"
	// RunLabel and LearnerLabel are the labels they go into.
	RunLabel     = "lab.operator-lab.dev/check-run"
	LearnerLabel = "lab.operator-lab.dev/learner"
)

// RunLabels are the labels of what this process's checks create: the
// run's and the learner's, as the checker handed them (none outside a
// check run).
func RunLabels() map[string]string {
	labels := map[string]string{}
	for label, env := range map[string]string{RunLabel: RunEnv, LearnerLabel: LearnerEnv} {
		if v := LabelValue(os.Getenv(env)); v != "" {
			labels[label] = v
		}
	}
	return labels
}

var notInLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// LabelValue makes s a label value: at most 63 letters, digits, '-', '_'
// and '.', beginning and ending with a letter or digit ("" if none is left).
func LabelValue(s string) string {
	v := notInLabel.ReplaceAllString(s, "-")
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "-_.")
}
