package adapter

import "context"

// Failure classes a FailureReader (or the capture itself) names. An
// adapter may name others; these are the ones an agent can rely on.
const (
	// FailureBuild: the workload's code did not compile or link.
	FailureBuild = "build_failed"
	// FailureSetup: the tool could not start its work (a read-only cache,
	// a missing module, a bad flag) before anything was built or run.
	FailureSetup = "setup_failed"
	// FailureTest: the workload ran and its own tests failed.
	FailureTest = "test_failed"
	// FailurePanic: the workload panicked (or crashed).
	FailurePanic = "panic"
	// FailureTimeout: the workload ran out of time (its own -timeout or
	// the capture's).
	FailureTimeout = "timeout"
	// FailureCancelled: the capture was cancelled.
	FailureCancelled = "cancelled"
	// FailureNoBenchmarks: the workload succeeded but measured nothing
	// (a -bench pattern that matched no benchmark).
	FailureNoBenchmarks = "no_benchmarks_matched"
	// FailureNoTests: the workload succeeded but ran no test.
	FailureNoTests = "no_tests_ran"
	// FailureValidation: the oracle or the adapter's check rejected the
	// result.
	FailureValidation = "validation_failed"
	// FailureProcess: the workload failed and nothing more is known.
	FailureProcess = "process_failed"
)

// FailureInput is what a FailureReader reads: the stored (redacted)
// output of a workload that did not succeed and how it ended.
type FailureInput struct {
	Plan *Plan
	// Stdout and Stderr are paths that may not exist (the workload wrote
	// nothing on that stream).
	Stdout, Stderr string
	ExitCode       int
	Signal         string
	TimedOut       bool
	Cancelled      bool
	// Validation is the reason validation failed, when the workload
	// succeeded but its result was rejected.
	Validation string
}

// Failure is an adapter's reading of why a workload did not succeed.
type Failure struct {
	// Class is one of the Failure* constants (or an adapter's own).
	Class string `json:"class"`
	// Summary is one line for a person or an agent.
	Summary string `json:"summary"`
	// Remediation says what to change, when the adapter knows.
	Remediation []string `json:"remediation"`
	// FailedTests names the failed tests (package.Test), when known.
	FailedTests []string `json:"failed_tests,omitempty"`
	// Lines are the last lines of the output that explain the failure,
	// decoded from the adapter's format (e.g. test2json output events);
	// untrusted text: the caller bounds and escapes them.
	Lines []string `json:"lines,omitempty"`
}

// FailureReader is implemented by adapters that can tell from a failed,
// timed-out, cancelled or rejected workload's output why it did not
// succeed: `go test` says "[build failed]" or "--- FAIL: TestX". The
// capture calls it after registration; nil means the adapter found
// nothing to say, and the capture's own class applies.
type FailureReader interface {
	ReadFailure(ctx context.Context, in FailureInput) *Failure
}

// Cache is a directory a collector writes across captures (the Go build
// cache): a contained capture, whose file system is read-only, gets it as
// a persistent, writable directory of the workspace.
type Cache struct {
	// Name is the directory under the workspace's cache root
	// (.diagnostics/cache/NAME).
	Name string `json:"name"`
	// Env is the variable pointing the collector at the directory.
	Env string `json:"env"`
}

// CacheUser is implemented by adapters whose collector needs writable
// caches inside containment. ContainedEnv returns, given the child
// environment and the directory each cache got (by Name), further
// NAME=value entries that make the collector work there (e.g. a read-only
// fallback to the user's own module cache); it must be passive.
type CacheUser interface {
	Caches() []Cache
	ContainedEnv(env []string, dirs map[string]string) []string
}
