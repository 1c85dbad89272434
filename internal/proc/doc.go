// Package proc makes sure that nothing lab starts outlives it.
//
// Every child process lab runs (the go command, test binaries, test2json,
// the learner's controller) is started through Command. On Linux, when the
// running binary supports it (see RunIfSupervisor), the child runs under a
// small supervisor: lab itself re-executed in a special mode. The
// supervisor is a child subreaper, so everything its child starts —
// compilers, a test binary's own children, even a process that called
// setsid — is re-parented to it, and it kills all of them when the child
// exits, when it is told to stop, or when lab dies (its parent-death signal,
// backed by polling its parent PID). Without supervision (a test binary
// that does not call RunIfSupervisor) the child gets its own process group
// and a parent-death signal, which ends the child but not what it started;
// on other systems than Linux, only the process group.
//
// UsePrivateTempDir gives each lab process its own temporary folder under
// one 0700 folder per user, points TMPDIR at it (envtest, go and the checks
// put their files there) and removes the folders of lab processes that are
// gone, so that a killed lab's etcd data and keys do not pile up in /tmp.
package proc
