// Package broker is the only place in flameox where a process is started.
//
// Keeping every fork in one package keeps the rules in one place: argv is
// passed to execve as is and no shell ever parses it; the child gets exactly
// the environment it is given (ChildEnv builds it from an allowlist and drops
// loader-injection and credential-like names); argv[0] is resolved in the
// child's PATH and the resolved path is reported; stdin is /dev/null unless
// set; stdout and stderr are drained into byte budgets; and the exit status,
// wall time and wait4 rusage (CPU time, peak RSS) are recorded. When the
// child is a collector that launches the workload (Spec.WorkloadDepth),
// the workload's resource use is recorded apart from the collector's
// (rss.go says which figures are exact and why).
//
// The child runs in its own process group. On timeout or cancellation the
// whole tree gets SIGTERM, a grace period, then SIGKILL; leftovers of a child
// that exited on its own get the same treatment. "The tree" includes
// descendants that left the process group (setsid, setpgid): the first Run
// makes flameox a child subreaper (prctl PR_SET_CHILD_SUBREAPER, once, for
// the life of the process), so such orphans are re-parented to flameox
// rather than init, stay reachable in /proc, and are reaped here. Being the
// subreaper also keeps every living descendant below flameox, so the tree is
// read by walking the kernel's children lists down from flameox
// (/proc/<pid>/task/<tid>/children), not by reading every process on the
// machine; without those files it falls back to all of /proc. Any other code
// that starts processes in flameox would inherit that role for its orphans
// too, which is one more reason there is none.
//
// An orphan whose parent exited before any scan saw it (a double fork plus
// setsid: sh -c "(setsid daemon &)") has lost every link to its tree: it is
// simply a child of flameox. A long-lived flameox (the MCP server) runs
// several children at once, so such a process is given to a run by this
// rule, applied to the children of flameox that are not the child of a run
// in progress:
//
//  1. a process that a run in progress has already seen (pid and start
//     time) or that is in its process group is that run's;
//  2. a process holding one of a run's stdout or stderr pipes open (the
//     per-run marker every descendant inherits unless it closes or
//     redirects its output; read from /proc/<pid>/fd) is that run's;
//  3. otherwise it is the run's whose child started before it (start time
//     in clock ticks, pid order within a tick), when exactly one run in
//     progress did. When several did, none adopts it: each run that ends
//     meanwhile reports it in Leftover with CleanupComplete false, and the
//     last of them, once it is the only one left, kills it. When none did,
//     it is left to its run, which has ended (and reported it).
//
// A run never signals a process another run in progress owns by this rule;
// a zombie two runs could own is reaped all the same (that harms neither). The rule assumes the broker starts every child of flameox: a child
// started otherwise during a run would be taken for an orphan.
//
// Guaranteed: the broker signals and reaps only its child's process group
// and processes it owns by the rule above (identities are pid plus start
// time, signals go through pidfds, and the child stays an unreaped zombie,
// pinning its pid and group id, until its tree is cleaned up).
// CleanupComplete is read from a scan of the tree after the last signal,
// never assumed from the signals sent: a process stuck in uninterruptible
// sleep that outlives SIGKILL, or an orphan two runs could own, makes it
// false and is listed in Leftover. Not guaranteed: without the subreaper
// flag (prctl refused) orphans go to init and are neither killed nor
// counted; closing that gap takes a pid namespace or a cgroup (the
// containment the spec leaves to Bubblewrap or systemd). If flameox itself
// is killed, its child gets SIGKILL with it (Pdeathsig; the thread that
// started the child is held until the child exits, since the kernel sends
// the signal when that thread ends), but the child's own descendants live
// on in its process group until recovery kills them (pkg/lease.KillGroup).
// Descriptors a C library opened without
// O_CLOEXEC would be inherited.
package broker
