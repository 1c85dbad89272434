package checker

import (
	"context"
	"os"

	"github.com/operator-lab/lab/labs"
)

// Warm builds the checks of every exercise of the workspace the way Check
// does, without running them, so that the go build cache and the kept test
// binaries are ready and the next check only compiles and links what
// changed. It holds the build folder as a check does: a check started
// meanwhile waits for it, then finds the work done. Code the policy
// rejects is not built, as Check would not build it.
func Warm(ctx context.Context, lab *labs.Lab, dir string) error {
	exercises, _, err := admitted(lab, dir, lab.Exercises)
	if err != nil {
		return err
	}
	build, err := NewBuild(ctx, lab, dir, ForChecks, checkFiles(exercises), nil)
	if err != nil {
		return err
	}
	defer build.Close()
	defer func() { _ = os.RemoveAll(build.Dir) }()
	env := GoEnv("", nil)
	for _, g := range groupsOf(exercises, 0, false, nil) {
		// A learner's code that does not compile is the next check's to
		// report; the other packages of the group are built all the same.
		var stderr boundedText
		if _, err := buildGroup(ctx, build.Dir, build.BinDir, g, env, &stderr); err != nil && ctx.Err() != nil {
			return err
		}
	}
	return nil
}
