package run

import (
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/identity"
	"github.com/flameox/flameox/pkg/lease"
)

// SchemaVersion of run manifests and revisions.
const SchemaVersion = 1

// Run types.
const (
	TypeImport    = "import"
	TypeExecution = "execution"
)

// Manifest is one revision of a run (and, for the newest, the projection).
type Manifest struct {
	SchemaVersion    int                   `json:"schema_version"`
	Revision         int                   `json:"revision"`
	RunID            string                `json:"run_id"`
	RunType          string                `json:"run_type"`
	CreatedAt        time.Time             `json:"created_at"`
	UpdatedAt        time.Time             `json:"updated_at"`
	StartedAt        *time.Time            `json:"started_at,omitempty"`
	FinishedAt       *time.Time            `json:"finished_at,omitempty"`
	ExecutionStatus  string                `json:"execution_status"`
	CaptureStatus    string                `json:"capture_status"`
	ValidationStatus string                `json:"validation_status"`
	Environment      *identity.Environment `json:"environment,omitempty"`
	SourceState      *identity.SourceState `json:"source_state,omitempty"`
	// Import describes where an imported artifact came from.
	Import *ImportInfo `json:"import,omitempty"`
	// Workload, Command, Containment, Process and Validation describe an
	// execution run.
	Workload *WorkloadInfo `json:"workload,omitempty"`
	// Trial names the experiment trial the run executed, if any.
	Trial       *TrialInfo       `json:"trial,omitempty"`
	Command     *CommandInfo     `json:"command,omitempty"`
	Containment *ContainmentInfo `json:"containment,omitempty"`
	Process     *ProcessInfo     `json:"process,omitempty"`
	Validation  *ValidationInfo  `json:"validation,omitempty"`
	// Artifacts are this run's registrations.
	Artifacts   []Registration `json:"artifacts"`
	Limitations []string       `json:"limitations"`
	// Lease names the owner of an open run: every open revision (an
	// import's pending, a capture's planned and running) has one.
	Lease *Lease `json:"lease,omitempty"`
	// Reason says why the newest revision was written ("registered",
	// "copy failed", "owner process gone", ...).
	Reason string `json:"reason,omitempty"`
	// Error is the structured failure of a failed or cancelled run.
	Error *fault.Error `json:"error,omitempty"`
}

// WorkloadInfo names what ran: the declared workload, its approved
// definition, the parameter values, and the adapter that captured it.
type WorkloadInfo struct {
	Name             string            `json:"name"`
	DefinitionID     string            `json:"definition_id"`
	InstanceID       string            `json:"instance_id"`
	Parameters       map[string]string `json:"parameters"`
	Adapter          string            `json:"adapter"`
	Collector        string            `json:"collector,omitempty"`
	CollectorVersion string            `json:"collector_version,omitempty"`
}

// TrialInfo places a run in an experiment: its trial, variant, block and
// position in the block. Publication copies them onto the run's
// measurements (trial_id, variant_id, block_id, order_in_block).
type TrialInfo struct {
	ExperimentID string `json:"experiment_id"`
	TrialID      string `json:"trial_id"`
	VariantID    string `json:"variant_id"`
	BlockID      string `json:"block_id"`
	OrderInBlock int32  `json:"order_in_block"`
}

// CommandInfo is the exact command the broker started. Environment values
// are never recorded, only the names passed and dropped.
type CommandInfo struct {
	Argv       []string `json:"argv"`
	Executable string   `json:"executable"`
	Cwd        string   `json:"cwd"` // project-relative
	EnvNames   []string `json:"env_names"`
	EnvDropped []string `json:"env_dropped"`
	TimeoutNs  int64    `json:"timeout_ns"`
	GraceNs    int64    `json:"grace_ns"`
}

// ContainmentInfo records what containment was actually in force.
type ContainmentInfo struct {
	State     string `json:"state"` // contained | degraded | uncontained
	Mechanism string `json:"mechanism,omitempty"`
	Network   string `json:"network"`
	Reason    string `json:"reason"`
}

// ProcessInfo is the process outcome (the process adapter's evidence).
//
// Pid and WallTimeNs are the started command's: the collector's when an
// adapter's collector launches the workload (py-spy, perf), Bubblewrap's
// when contained. ExitCode and Signal are the workload's (ExitSource says
// how they were read). UserTimeNs, SystemTimeNs and
// PeakRSSBytes are the workload's own processes' (the whole tree's when
// nothing stands above the workload), and Collector holds the processes
// above it; the sources say how each figure was obtained (broker.Usage).
type ProcessInfo struct {
	Pid      int    `json:"pid"`
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// ExitSource says whose exit status ExitCode and Signal are. Empty:
	// the command flameox started (the workload, or a collector that
	// passes its workload's status on). pidfd_info or proc_stat: the
	// workload's own, read below a collector whose status does not carry
	// it (py-spy); collector: that workload's could not be read, so they
	// are the collector's (Collector holds its status either way).
	ExitSource    string `json:"exit_source,omitempty"`
	WallTimeNs    int64  `json:"wall_time_ns"`
	UserTimeNs    int64  `json:"user_time_ns"`
	SystemTimeNs  int64  `json:"system_time_ns"`
	PeakRSSBytes  int64  `json:"peak_rss_bytes"`
	PeakRSSSource string `json:"peak_rss_source"`
	// CPUSource: wait4, proc_stat or sampled (empty in runs recorded
	// before it was kept: wait4).
	CPUSource string `json:"cpu_source,omitempty"`
	// Processes names the processes the workload's figures cover (their
	// distinct command names, as sampled), e.g. ["python3.11"].
	Processes []string `json:"processes,omitempty"`
	// Collector is the resource use of the processes above the workload,
	// nil when there are none.
	Collector       *Usage `json:"collector,omitempty"`
	TimedOut        bool   `json:"timed_out"`
	Cancelled       bool   `json:"cancelled"`
	CleanupComplete bool   `json:"cleanup_complete"`
	Killed          int    `json:"killed"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StderrBytes     int64  `json:"stderr_bytes"`
	OutputTruncated bool   `json:"output_truncated"`
	// Leftover lists the pids still running when cleanup gave up
	// (cleanup_complete false; see broker.Result.Leftover).
	Leftover []int `json:"leftover,omitempty"`
	// RedactedEnv names the variables whose values were replaced by
	// "<redacted>" in the stored output (broker.Result.Redacted). Never the
	// values.
	RedactedEnv []string `json:"redacted_env,omitempty"`
	// StartedAt is when the broker started the command (just before the
	// fork); WallTimeNs runs from there.
	StartedAt *time.Time `json:"started_at,omitempty"`
}

// Usage is the resource use of the processes a run started above its
// workload (see ProcessInfo).
type Usage struct {
	// Processes names them, outermost first: ["py-spy"], ["bwrap", "perf"].
	Processes []string `json:"processes"`
	// ExitCode and Signal are how the outermost of them ended (-1 and the
	// signal's name when a signal ended it).
	ExitCode      int    `json:"exit_code"`
	Signal        string `json:"signal,omitempty"`
	UserTimeNs    int64  `json:"user_time_ns"`
	SystemTimeNs  int64  `json:"system_time_ns"`
	CPUSource     string `json:"cpu_source"`
	PeakRSSBytes  int64  `json:"peak_rss_bytes"`
	PeakRSSSource string `json:"peak_rss_source"`
}

// ValidationInfo records the oracle run that decided validation_status.
type ValidationInfo struct {
	Strength   string `json:"strength"`
	ExitCode   int    `json:"exit_code"`
	Signal     string `json:"signal,omitempty"`
	WallTimeNs int64  `json:"wall_time_ns"`
	Reason     string `json:"reason"`
}

// ImportInfo records an import's source name (never its directory, which
// may reveal a home path) and the requested classification.
type ImportInfo struct {
	SourceName  string `json:"source_name"`
	RequestedBy string `json:"requested_by"` // "cli" or "mcp"
}

// Registration is one run's claim on a stored artifact: what it is and how
// carefully it must be handled. The same object may have several.
type Registration struct {
	RegistrationID  string    `json:"registration_id"`
	RunID           string    `json:"run_id"`
	ArtifactID      string    `json:"artifact_id"`
	DisplayName     string    `json:"display_name"`
	Kind            string    `json:"kind"`
	MediaType       string    `json:"media_type"`
	Role            string    `json:"role"`
	Producer        string    `json:"producer"`
	ProducerVersion string    `json:"producer_version"`
	Sensitivity     string    `json:"sensitivity"`
	ByteLength      int64     `json:"byte_length"`
	PayloadPath     string    `json:"payload_path"` // workspace-relative
	RegisteredAt    time.Time `json:"registered_at"`
}

// Lease proves a live owner of a running run: the owning process (pid,
// start time, boot id), a heartbeat and an expiry. Recovery closes a run
// only when its owner is provably gone.
type Lease struct {
	Owner       lease.Owner `json:"owner"`
	HeartbeatAt time.Time   `json:"heartbeat_at"`
	ExpiresAt   time.Time   `json:"expires_at"`
}

// Terminal reports whether no machine can move any more except into
// quarantine.
func (m *Manifest) Terminal() bool {
	return Execution.Terminal(m.ExecutionStatus) &&
		(m.CaptureStatus != CapturePending && m.CaptureStatus != CaptureRunning) &&
		(Validation.Terminal(m.ValidationStatus))
}

// Clone returns a deep-enough copy for building the next revision.
func (m *Manifest) Clone() Manifest {
	c := *m
	c.Artifacts = append([]Registration{}, m.Artifacts...)
	c.Limitations = append([]string{}, m.Limitations...)
	return c
}
