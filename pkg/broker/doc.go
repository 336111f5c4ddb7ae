// Package broker is the only place in flameox where a process is started.
//
// Keeping every fork in one package keeps the rules in one place: argv is
// passed to execve as is and no shell ever parses it; the child gets exactly
// the environment it is given (ChildEnv builds it from an allowlist and drops
// loader-injection and credential-like names); argv[0] is resolved in the
// child's PATH and the resolved path is reported; stdin is /dev/null unless
// set; stdout and stderr are drained into byte budgets; and the exit status,
// wall time and wait4 rusage (CPU time, peak RSS) are recorded.
//
// The child runs in its own process group. On timeout or cancellation the
// whole tree gets SIGTERM, a grace period, then SIGKILL; leftovers of a child
// that exited on its own get the same treatment. "The tree" includes
// descendants that left the process group (setsid, setpgid): the first Run
// makes flameox a child subreaper (prctl PR_SET_CHILD_SUBREAPER, once, for
// the life of the process), so such orphans are re-parented to flameox
// rather than init, stay reachable by ppid links in /proc, and are reaped
// here. Being the subreaper also keeps every living descendant below
// flameox, so the tree is read by walking the kernel's children lists down
// from flameox (/proc/<pid>/task/<tid>/children), not by reading every
// process on the machine; without those files it falls back to all of /proc. Any other code that starts processes in flameox would inherit that
// role for its orphans too, which is one more reason there is none.
//
// Guaranteed: the broker signals and reaps only its child's process group
// and processes it saw descend from the child (identities are pid plus start
// time, signals go through pidfds, and the child stays an unreaped zombie,
// pinning its pid and group id, until its tree is cleaned up). Not
// guaranteed: a descendant that detaches (double fork plus setsid) and whose
// parent exits between two scans of the tree is never seen, so it is neither
// killed nor counted; closing that gap takes a pid namespace or a cgroup (the
// containment the spec leaves to Bubblewrap or systemd). A process stuck in
// uninterruptible sleep may outlive SIGKILL; Result.CleanupComplete and
// Result.Leftover say so. If flameox itself is killed, its children are not.
// Descriptors a C library opened without O_CLOEXEC would be inherited.
package broker
