package fault

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Code is a stable, documented error code.
type Code string

// The error codes of the product contract (SPEC §2), plus the few flameox adds
// for concurrency, lookups and a full disk.
const (
	WorkspaceNotFound        Code = "WORKSPACE_NOT_FOUND"
	WorkspaceInvalid         Code = "WORKSPACE_INVALID"
	CapabilityUnavailable    Code = "CAPABILITY_UNAVAILABLE"
	InvalidCapturePlan       Code = "INVALID_CAPTURE_PLAN"
	ExecutionRefused         Code = "EXECUTION_REFUSED"
	ProcessFailed            Code = "PROCESS_FAILED"
	ProcessTimeout           Code = "PROCESS_TIMEOUT"
	ProcessCancelled         Code = "PROCESS_CANCELLED"
	ArtifactTooLarge         Code = "ARTIFACT_TOO_LARGE"
	ArtifactIntegrityFailed  Code = "ARTIFACT_INTEGRITY_FAILED"
	ArtifactParseFailed      Code = "ARTIFACT_PARSE_FAILED"
	EvidenceSchemaMismatch   Code = "EVIDENCE_SCHEMA_MISMATCH"
	ComparisonInvalid        Code = "COMPARISON_INVALID"
	QueryBudgetExceeded      Code = "QUERY_BUDGET_EXCEEDED"
	WriteLockTimeout         Code = "WRITE_LOCK_TIMEOUT"
	SensitiveArtifactRefused Code = "SENSITIVE_ARTIFACT_REFUSED"
	InvalidArguments         Code = "INVALID_ARGUMENTS"
	InternalError            Code = "INTERNAL_ERROR"

	// Added by flameox.
	NotFound         Code = "NOT_FOUND"         // the named run, artifact or record does not exist
	StaleCursor      Code = "STALE_CURSOR"      // a cursor from another commit, query or filter
	RevisionConflict Code = "REVISION_CONFLICT" // a compare-and-swap lost a race
	StorageFull      Code = "STORAGE_FULL"      // a write found its file system full or over quota
)

// Exit codes shared by every binary (SPEC §2).
const (
	ExitOK          = 0
	ExitNegative    = 1
	ExitUsage       = 2
	ExitCapability  = 3
	ExitProcess     = 4
	ExitIntegrity   = 5
	ExitComparison  = 6
	ExitConcurrency = 7
	ExitCancelled   = 8
	ExitPolicy      = 9
)

// exitCodes is the one place codes become exit statuses. WORKSPACE_INVALID is
// refined in ExitCode: a bad configuration file is a usage error (2), damaged
// workspace state is an integrity failure (5). STORAGE_FULL is 3, like a
// missing capability: a resource of the environment, which the user must
// free before the same command can succeed.
var exitCodes = map[Code]int{
	WorkspaceNotFound:        ExitUsage,
	WorkspaceInvalid:         ExitIntegrity,
	CapabilityUnavailable:    ExitCapability,
	InvalidCapturePlan:       ExitPolicy,
	ExecutionRefused:         ExitPolicy,
	ProcessFailed:            ExitProcess,
	ProcessTimeout:           ExitCancelled,
	ProcessCancelled:         ExitCancelled,
	ArtifactTooLarge:         ExitIntegrity,
	ArtifactIntegrityFailed:  ExitIntegrity,
	ArtifactParseFailed:      ExitIntegrity,
	EvidenceSchemaMismatch:   ExitIntegrity,
	ComparisonInvalid:        ExitComparison,
	QueryBudgetExceeded:      ExitUsage,
	WriteLockTimeout:         ExitConcurrency,
	SensitiveArtifactRefused: ExitPolicy,
	InvalidArguments:         ExitUsage,
	InternalError:            ExitNegative,
	NotFound:                 ExitNegative,
	StaleCursor:              ExitConcurrency,
	RevisionConflict:         ExitConcurrency,
	StorageFull:              ExitCapability,
}

// Codes lists every code in a stable order (for docs and schema enums).
func Codes() []Code {
	out := make([]Code, 0, len(exitCodes))
	for c := range exitCodes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// DetailKind is the details key that classifies a WORKSPACE_INVALID error.
// Its value KindConfig marks an invalid configuration file (exit 2).
const (
	DetailKind = "kind"
	KindConfig = "config"
)

// Error is flameox's structured error. Its JSON form is part of the CLI and
// MCP contract.
type Error struct {
	Code        Code              `json:"code"`
	Message     string            `json:"message"`
	Retryable   bool              `json:"retryable"`
	Details     map[string]string `json:"details"`
	Remediation []string          `json:"remediation"`
	RunID       string            `json:"run_id,omitempty"`
	// NextTools are the MCP tool calls the remediations name, over MCP
	// only (see FixSteps).
	NextTools []Call `json:"next_tools,omitempty"`

	cause    error
	remedies []remedy
	mcp      bool
}

// New returns an error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Details: map[string]string{}, Remediation: []string{}}
}

// Wrap returns an error with a message that keeps cause for errors.Is/As.
// The cause's text is appended to the message.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	e := New(code, format, args...)
	if cause != nil {
		e.Message += ": " + cause.Error()
		e.cause = cause
	}
	return e
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.cause }

// With sets a detail and returns e.
func (e *Error) With(key, value string) *Error {
	if e.Details == nil {
		e.Details = map[string]string{}
	}
	e.Details[key] = value
	return e
}

// Fix appends remediation steps and returns e.
func (e *Error) Fix(steps ...string) *Error {
	e.Remediation = append(e.Remediation, steps...)
	return e
}

// Retry marks e as retryable and returns it.
func (e *Error) Retry() *Error { e.Retryable = true; return e }

// ForRun sets the run the error concerns and returns e.
func (e *Error) ForRun(runID string) *Error { e.RunID = runID; return e }

// ExitCode maps the error to its process exit status.
func (e *Error) ExitCode() int {
	if e.Code == WorkspaceInvalid && e.Details[DetailKind] == KindConfig {
		return ExitUsage
	}
	if c, ok := exitCodes[e.Code]; ok {
		return c
	}
	return ExitNegative
}

// As finds the *Error in err's chain. A chain that holds ENOSPC or EDQUOT
// (or a library's text for them) becomes STORAGE_FULL, whatever code a call
// site gave it; anything else without an *Error becomes INTERNAL_ERROR
// carrying the original text, so callers always have a structured error.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) && fe.Code == StorageFull {
		return fe
	}
	if sf := storageFull(err, fe); sf != nil {
		return sf
	}
	if ro := readOnly(err, fe); ro != nil {
		return ro
	}
	if fe != nil {
		return fe
	}
	return Wrap(InternalError, err, "unexpected error").Fix("This is a bug in flameox; please report it with the command you ran.")
}

// Is reports whether err carries the given code (STORAGE_FULL as As
// would report it).
func Is(err error, code Code) bool {
	if code == StorageFull {
		return err != nil && As(err).Code == StorageFull
	}
	var fe *Error
	return errors.As(err, &fe) && fe.Code == code
}

// Human renders the error for a terminal: "CODE: message" then each
// remediation step indented.
func (e *Error) Human() string {
	var b strings.Builder
	b.WriteString(e.Error())
	keys := make([]string, 0, len(e.Details))
	for k := range e.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s: %s", k, e.Details[k])
	}
	for _, r := range e.Remediation {
		b.WriteString("\n  hint: " + r)
	}
	return b.String()
}
