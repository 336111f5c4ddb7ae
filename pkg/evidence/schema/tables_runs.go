package schema

// Runs, their artifacts and the identities they point to.

// Runs has one row per published run revision (the run manifest projection at
// that revision). The latest revision per run_id is the current state; all the
// columns `flameox runs list` filters and prints are plain columns.
var Runs = newTable("runs", 1, 1,
	"One row per published run revision: statuses, identities, process outcome.",
	req("run_id", tStr, "run UUID"),
	req("revision", tI32, "run manifest revision this row projects (0, 1, ...)"),
	req("run_type", tStr, "execution | import").dict(),
	req("created_at", tTime, "when the run was created"),
	opt("started_at", tTime, "when the workload process started"),
	opt("finished_at", tTime, "when the workload process ended"),
	req("execution_status", tStr, "not_applicable planned running succeeded failed timed_out cancelled").dict(),
	req("capture_status", tStr, "pending running registered failed quarantined cancelled").dict(),
	req("validation_status", tStr, "not_requested pending running passed failed error cancelled").dict(),
	req("environment_id", tStr, "environments.environment_id"),
	opt("source_state_id", tStr, "source_states.source_state_id"),
	opt("workload_name", tStr, "declared workload name").dict(),
	opt("workload_definition_id", tStr, "workload definition identity"),
	opt("workload_instance_id", tStr, "workload instance identity (definition + parameters)"),
	opt("measurement_protocol_id", tStr, "measurement protocol identity"),
	opt("adapter", tStr, "adapter that planned the capture").dict(),
	opt("collector", tStr, "collector tool that produced the native artifact").dict(),
	opt("collector_version", tStr, "its version").dict(),
	opt("exit_code", tI32, "process exit code"),
	opt("signal", tStr, "terminating signal name, e.g. SIGKILL").dict(),
	opt("cancellation_cause", tStr, "caller_cancelled | timeout | process_error | crash_recovery").dict(),
	opt("wall_time_ns", tI64, "process wall-clock time").ns(),
	opt("user_time_ns", tI64, "process user CPU time").ns(),
	opt("system_time_ns", tI64, "process system CPU time").ns(),
	opt("peak_rss_bytes", tI64, "peak resident set size").bytes(),
	opt("containment", tStr, "how the process tree was contained, e.g. process_group | cgroup").dict(),
	opt("orchestrator", tStr, "external orchestrator (CI system, runner)").dict(),
	opt("provider", tStr, "orchestration provider").dict(),
	opt("lease_id", tStr, "orchestration lease"),
	opt("worker_id", tStr, "orchestration worker").dict(),
	opt("orchestration_run_id", tStr, "orchestrator's run id"),
	opt("execution_identity_id", tStr, "digest of the execution identity"),
	opt("execution_identity_quality", tStr, "exact | partial | clean").dict(),
	opt("execution_identity_json", tStr, "canonical execution identity JSON"),
	req("manifest_path", tStr, "workspace-relative runs/<run_id>/manifest.json"),
	opt("reason", tStr, "why the revision was written, e.g. registered, succeeded, crash_recovery, quarantined: ARTIFACT_PARSE_FAILED").since(1),
	opt("error_code", tStr, "error code of a failed, cancelled or quarantined run, e.g. PROCESS_FAILED").dict().since(1),
)

// Artifacts has one row per artifact registration: the same payload (same
// artifact_id) registered by two runs gives two rows.
var Artifacts = newTable("artifacts", 1, 0,
	"One row per artifact registration (a run's use of a content-addressed payload).",
	req("registration_id", tStr, "registration UUID"),
	req("run_id", tStr, "registering run"),
	req("artifact_id", tStr, "sha256:<hex> of the payload bytes"),
	req("display_name", tStr, "name shown to users, e.g. the original file name"),
	req("kind", tStr, "artifact kind, e.g. sample_profile, execution_trace, process_output").dict(),
	req("media_type", tStr, "IANA media type").dict(),
	req("role", tStr, "role in the run, e.g. primary, stdout, stderr").dict(),
	opt("producer", tStr, "tool that wrote the payload").dict(),
	opt("producer_version", tStr, "its version").dict(),
	req("sensitivity", tStr, "declared sensitivity: normal | internal | sensitive").dict(),
	req("byte_length", tU64, "payload size").bytes(),
	req("registered_at", tTime, "registration time"),
	req("payload_path", tStr, "workspace-relative artifacts/sha256/ab/<digest>/payload.<ext>"),
)

// Environments holds content-addressed environment records. Hot facts are
// plain columns; fields_json keeps the whole canonical record.
var Environments = newTable("environments", 1, 0,
	"Content-addressed environment records (no hostnames, users or secrets).",
	req("environment_id", tStr, "digest of the canonical environment JSON"),
	req("observed_at", tTime, "when the environment was observed"),
	req("identity_quality", tStr, "exact | partial | clean").dict(),
	opt("os", tStr, "operating system, e.g. linux").dict(),
	opt("kernel_release", tStr, "kernel release").dict(),
	opt("arch", tStr, "machine architecture, e.g. amd64").dict(),
	opt("cpu_model", tStr, "CPU model name").dict(),
	opt("cpu_count", tI32, "logical CPUs").count(),
	opt("memory_total_bytes", tI64, "physical memory").bytes(),
	req("fields_json", tStr, "canonical JSON of every recorded field"),
	req("missing_fields", tStrList, "fields that could not be observed (unknown is never equal)"),
)

// SourceStates holds content-addressed source identities.
var SourceStates = newTable("source_states", 1, 0,
	"Content-addressed source state: HEAD, working-tree diff, untracked inputs, executable.",
	req("source_state_id", tStr, "digest of the canonical source state JSON"),
	req("identity_quality", tStr, "exact | partial | clean").dict(),
	opt("repository_root", tStr, "repository root (project-relative or absolute)"),
	opt("head_commit", tStr, "git HEAD commit"),
	opt("diff_digest", tStr, "sha256 of `git diff --binary HEAD` (staged included)"),
	opt("untracked_digest", tStr, "digest of untracked relevant inputs"),
	opt("executable_path", tStr, "resolved executable path"),
	opt("executable_digest", tStr, "sha256 of the executable"),
	opt("build_id", tStr, "ELF/Go build id of the executable"),
	req("fields_json", tStr, "canonical JSON of every recorded field"),
	req("missing_fields", tStrList, "fields that could not be observed"),
)
