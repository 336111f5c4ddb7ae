package broker

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/pkg/fault"
)

// Defaults applied when a Spec field is zero.
const (
	DefaultGrace        = 2 * time.Second
	DefaultOutputLimit  = 16 << 20
	DefaultScanInterval = 250 * time.Millisecond
)

// Spec describes one process to start.
type Spec struct {
	// Argv is the program and its arguments, passed to execve unchanged.
	// Argv[0] without a slash is looked up in the PATH of Env (the child's
	// environment), never the parent's; with a slash it is taken relative
	// to Dir.
	Argv []string
	// Dir is the child's working directory; it must exist. Empty means the
	// caller's working directory.
	Dir string
	// Env is the child's exact environment ("NAME=value", names unique),
	// normally built by ChildEnv. Nil means an empty environment.
	Env []string
	// Stdin feeds the child's standard input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr, when set, receive the streams instead of memory.
	// Either way at most StdoutLimit / StderrLimit bytes are kept.
	Stdout, Stderr io.Writer
	// StdoutLimit and StderrLimit are byte budgets (default 16 MiB each).
	// Bytes beyond a budget are read and discarded so the child never blocks.
	StdoutLimit, StderrLimit int64
	// Timeout bounds the run from start; zero means no limit but ctx.
	Timeout time.Duration
	// Grace is how long the tree gets between SIGTERM and SIGKILL
	// (default 2 s).
	Grace time.Duration
	// ScanInterval is how often the process tree is recorded while the
	// child runs (default 250 ms; negative: only when killing). A scan
	// claims a detached descendant for this run while its ancestry is
	// still visible; one whose parent exits first is re-parented to
	// flameox and attributed by the rule in the package doc.
	ScanInterval time.Duration
	// OnStart, if set, is called with the child's pid right after it starts
	// and before the broker waits for it.
	OnStart func(pid int)
	// WorkloadDepth says where the workload is in the tree: 0 when the
	// child is the workload; 1 when the child is a collector that launches
	// the workload as its child (py-spy record -- argv); each wrapper above
	// the collector adds its levels (Bubblewrap with a pid namespace: 2).
	// Result.Workload then covers the processes at that depth and below,
	// Result.Collector the ones above.
	WorkloadDepth int
	// WatchArgv, with WorkloadDepth > 0, has the broker read the exit
	// status of the workload into Result.WorkloadExit: the first process
	// at that depth running WatchArgv, the workload's argv as the
	// collector starts it (see isWorkload). For collectors whose own exit
	// status does not carry the workload's (exit.go).
	WatchArgv []string
}

// Stream is one captured output stream.
type Stream struct {
	Data      []byte // what was kept (nil when streamed to a writer)
	Total     int64  // every byte the child wrote, kept or not
	Truncated bool   // bytes beyond the budget were discarded
	WriteErr  error  // the first error of Spec.Stdout/Stderr; later bytes were discarded
	// Redactions counts the secrets replaced by "<redacted>" before the
	// bytes were kept (see Result.Redacted).
	Redactions int
}

// Result describes a finished (or killed) process.
type Result struct {
	Path  string   // absolute path that was executed (argv[0] resolved)
	Argv  []string // argv as passed
	Dir   string   // absolute working directory
	Pid   int
	Start time.Time
	// Wall runs from just before the fork to the moment the exit was seen
	// (monotonic clock).
	Wall time.Duration
	// UserCPU and SysCPU (nanoseconds) and PeakRSS (bytes) are the whole
	// tree's: wait4's rusage of the child, which includes the descendants
	// it waited for (CPU times summed, the largest peak of any of them).
	UserCPU, SysCPU time.Duration
	PeakRSS         int64
	// PeakRSSSource says where PeakRSS comes from: "wait4" (exact),
	// "sampled" (the highest VmHWM of the tree's processes polled while
	// they ran, because wait4's value includes flameox's own memory; see
	// rss.go) or "unknown".
	PeakRSSSource string
	// Workload is the resource use of the workload's processes (see
	// Spec.WorkloadDepth; the whole tree's when it is 0), Collector that
	// of the processes above them (nil when the depth is 0). rss.go says
	// which figures are exact and why.
	Workload  Usage
	Collector *Usage
	// ExitCode is the exit status of the started child, or -1 when a
	// signal ended it; Signal then names it ("SIGKILL").
	ExitCode   int
	Signal     string
	CoreDumped bool
	// WorkloadExit is how the workload below the collector ended, read by
	// the broker (Spec.WatchArgv); nil when not asked for or unknown.
	WorkloadExit *Exit
	TimedOut     bool
	Cancelled    bool
	Stdout       Stream
	Stderr       Stream
	// Killed counts the processes of the tree (the child included) that the
	// broker signalled. CleanupComplete says that a scan after the last
	// signal found no process of the tree left, orphans re-parented to
	// flameox included (see the package doc for which orphans are the
	// tree's); Leftover lists the pids of any that are, and of orphans this
	// run and another run in progress could both own, which are left alone.
	Killed          int
	CleanupComplete bool
	Leftover        []int
	// Redacted names, sorted, the variables whose values were found in the
	// output and replaced there by "<redacted>": the value of a Sensitive
	// name in the child's environment, or a credential in a URL (user info,
	// a token query parameter) in the child's environment or flameox's own,
	// of at least six bytes. Never the values.
	Redacted []string
}

// prepared is a validated Spec with defaults and paths resolved.
type prepared struct {
	Spec
	path string
	dir  string
}

func refuse(format string, args ...any) *fault.Error {
	return fault.New(fault.ExecutionRefused, format, args...)
}

// prepare validates spec and resolves argv[0] and Dir. Nothing runs.
func prepare(spec Spec) (*prepared, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, refuse("empty argv").Fix("Give the program to run as the first argv element.")
	}
	for i, a := range spec.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, refuse("argv[%d] contains a NUL byte", i)
		}
	}
	seen := map[string]bool{}
	for i, kv := range spec.Env {
		name, _, ok := strings.Cut(kv, "=")
		switch {
		case strings.IndexByte(kv, 0) >= 0:
			return nil, refuse("environment entry %d contains a NUL byte", i)
		case !ok || name == "":
			return nil, refuse("environment entry %d is not NAME=value", i)
		case seen[name]:
			return nil, refuse("environment names %s twice", name)
		}
		seen[name] = true
	}
	p := &prepared{Spec: spec}
	dir := spec.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, refuse("working directory %q: %v", spec.Dir, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, refuse("working directory %s does not exist or is not a directory", dir).With("dir", dir)
	}
	p.dir = dir
	if p.path, err = resolve(spec.Argv[0], dir, spec.Env); err != nil {
		return nil, fault.Wrap(fault.ProcessFailed, err, "cannot start %s", spec.Argv[0]).With("argv0", spec.Argv[0])
	}
	if p.StdoutLimit <= 0 {
		p.StdoutLimit = DefaultOutputLimit
	}
	if p.StderrLimit <= 0 {
		p.StderrLimit = DefaultOutputLimit
	}
	if p.Grace <= 0 {
		p.Grace = DefaultGrace
	}
	if p.ScanInterval == 0 {
		p.ScanInterval = DefaultScanInterval
	}
	return p, nil
}

// resolve finds the executable for argv0 the way execvp would in the child:
// a name with a slash is relative to dir, a bare name is searched in the
// child's PATH. Relative PATH entries are skipped (they would depend on the
// working directory). A path with ".." is kept uncleaned so that it means
// exactly what the kernel would make of it.
func resolve(argv0, dir string, env []string) (string, error) {
	if strings.Contains(argv0, "/") {
		p := argv0
		if !filepath.IsAbs(p) {
			p = dir + "/" + p
		}
		if !strings.Contains(p, "..") {
			p = filepath.Clean(p)
		}
		return p, executable(p)
	}
	path, ok := "", false
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			path, ok = v, true
		}
	}
	if !ok {
		return "", errNoPath
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, argv0); executable(p) == nil {
			return p, nil
		}
	}
	return "", errNotInPath
}

type resolveError string

func (e resolveError) Error() string { return string(e) }

const (
	errNoPath    = resolveError("PATH is not set in the child environment")
	errNotInPath = resolveError("not found in the child's PATH")
)

// executable reports why p cannot be executed, or nil.
func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &os.PathError{Op: "exec", Path: p, Err: unix.EACCES}
	}
	if err := unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS); err != nil {
		return &os.PathError{Op: "exec", Path: p, Err: err}
	}
	return nil
}

// Resolve finds the program argv0 would run in a child with environment env
// and working directory dir, exactly as Run would (the child's PATH, never
// the parent's). Plans use it to show the resolved executable.
func Resolve(argv0, dir string, env []string) (string, error) {
	p, err := resolve(argv0, dir, env)
	if err != nil {
		return "", fault.Wrap(fault.ExecutionRefused, err, "cannot run %q", argv0).With("program", argv0)
	}
	return p, nil
}
