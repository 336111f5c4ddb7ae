package analysis

// The failures recipe: are failures clustered rather than isolated? It
// reads every attempt the pinned corpus holds (captures, imports with the
// quarantined ones, experiment trials with or without a run), groups the
// failed ones by each thing they can share (collector, outcome, exit code
// or signal, workload, parameter value, environment, source state, error
// shape) and sets every candidate explanation side by side with its
// evidence: how many failures and how many successes it covers, and which
// other candidates cover exactly the same attempts (what the data cannot
// separate). It names no cause. The grouping is plain counting over rows
// (failureGroups), so it is tested on rows as well as end to end.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// OpFailures is the failures analysis's operation name.
const (
	OpFailures      = "failures"
	FailuresVersion = "1"
)

// Bounds of one failures analysis: the attempts read (the newest first),
// the failed runs whose manifests are read for their error message, the
// groups and explanations returned, the runs each names.
const (
	maxFailureAttempts  = 100_000
	maxFailureMessages  = 5000
	maxFailureGroups    = 1000
	maxRepresentatives  = 3
	maxContrastRuns     = 1
	maxMessageShape     = 200
	defaultFailureLimit = 8
)

// Dimensions a failed attempt is grouped by, in the order results list
// them. The first five are candidate explanations (what an attempt ran
// with); outcome, exit and error describe how it failed.
const (
	DimCollector   = "collector"
	DimWorkload    = "workload"
	DimParameter   = "parameter"
	DimEnvironment = "environment"
	DimSourceState = "source_state"
	DimOutcome     = "outcome"
	DimExit        = "exit"
	DimError       = "error"
)

var failureDims = []string{DimCollector, DimWorkload, DimParameter, DimEnvironment, DimSourceState, DimOutcome, DimExit, DimError}

func dimRank(d string) int {
	for i, x := range failureDims {
		if x == d {
			return i
		}
	}
	return len(failureDims)
}

// causeDim reports whether a dimension is a candidate explanation.
func causeDim(d string) bool { return dimRank(d) < 5 }

// FailuresRequest asks how the corpus's failed attempts cluster.
type FailuresRequest struct {
	Since    string `json:"since,omitempty" jsonschema:"only attempts created at or after this time (RFC 3339)"`
	Workload string `json:"workload,omitempty" jsonschema:"only attempts of this declared workload (imports have none)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"groups, and candidate explanations, to return (default 8, max 1000)"`
}

// Flags registers the flags of a failures request (`flameox analyze
// failures`): --since, --workload and --limit.
func (r *FailuresRequest) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Since, "since", "", "only attempts created at or after this RFC 3339 time")
	fs.StringVar(&r.Workload, "workload", "", "only attempts of this declared workload")
	limitFlag(fs, &r.Limit, defaultFailureLimit, "groups (and candidate explanations)")
}

// FailureRef is one attempt a group names.
type FailureRef struct {
	RunID   string `json:"run_id,omitempty"`
	TrialID string `json:"trial_id,omitempty"`
	// Outcome is a failure's (contrast runs succeeded: no outcome).
	Outcome string `json:"outcome,omitempty"`
}

// FailureGroup is the failed attempts that share one value of one
// dimension, with the attempts of that value that succeeded.
type FailureGroup struct {
	Dimension string `json:"dimension"`
	Value     string `json:"value"`
	Label     string `json:"label,omitempty"`
	Failures  int    `json:"failures"`
	// Succeeded counts the attempts with the same value that succeeded;
	// FailureRate is Failures / (Failures + Succeeded).
	Succeeded   int     `json:"succeeded"`
	FailureRate float64 `json:"failure_rate"`
	// SucceededElsewhere counts the succeeded attempts of the workloads
	// this group's failures ran that have another value of the dimension
	// (the same workload succeeded in another environment, say).
	SucceededElsewhere int       `json:"succeeded_elsewhere"`
	FirstSeen          time.Time `json:"first_seen"`
	LastSeen           time.Time `json:"last_seen"`
	// Isolated: the group holds one failure.
	Isolated bool `json:"isolated"`
	// Representatives are the first, a middle and the last failure
	// (at most 3); Contrast one succeeded attempt of the same
	// workloads, another value of the dimension first.
	Representatives []FailureRef `json:"representative_runs"`
	Contrast        []FailureRef `json:"contrast_runs"`
}

// FailureExplanation is one candidate explanation: a value that several
// failures share, with the evidence for and against it.
type FailureExplanation struct {
	Dimension string `json:"dimension"`
	Value     string `json:"value"`
	Label     string `json:"label,omitempty"`
	Failures  int    `json:"failures"`
	// FailureFraction is Failures over every failure read.
	FailureFraction float64 `json:"failure_fraction"`
	Succeeded       int     `json:"succeeded"`
	FailureRate     float64 `json:"failure_rate"`
	// Strength: exclusive (no attempt with this value succeeded), mixed
	// (some did: weaker), uniform (every attempt that has the dimension
	// has this value, so the data cannot say whether it matters).
	Strength string `json:"strength"`
	Evidence string `json:"evidence"`
	// Indistinguishable names ("dimension=value") the other candidates
	// that cover exactly the same failed and succeeded attempts: the data
	// cannot separate them.
	Indistinguishable []string `json:"indistinguishable_from"`
}

// FailureKind counts the attempts of one kind (capture, import, trial).
type FailureKind struct {
	Kind      string `json:"kind"`
	Attempts  int    `json:"attempts"`
	Failed    int    `json:"failed"`
	Succeeded int    `json:"succeeded"`
}

// FailureSummary says how many attempts were read and how their failures
// cluster: a signature is a workload with one outcome and one error
// shape; a failure is isolated when no other failure shares its signature.
type FailureSummary struct {
	Attempts    int           `json:"attempts"`
	Failed      int           `json:"failed"`
	Succeeded   int           `json:"succeeded"`
	Open        int           `json:"open"`
	Unattempted int           `json:"unattempted_trials"`
	Kinds       []FailureKind `json:"kinds"`
	Clusters    int           `json:"clusters"`
	Clustered   int           `json:"clustered_failures"`
	Isolated    int           `json:"isolated_failures"`
	Answer      string        `json:"answer"`
}

// FailuresResult is the result of `flameox analyze failures` and MCP
// analyze_failures.
type FailuresResult struct {
	SchemaVersion    int             `json:"schema_version"`
	Operation        string          `json:"operation"`
	OperationVersion string          `json:"operation_version"`
	CorpusCommitID   string          `json:"corpus_commit_id"`
	Parameters       FailuresRequest `json:"parameters"`
	Summary          FailureSummary  `json:"summary"`
	// Groups are the failures grouped by each dimension's values, the
	// largest first; the page counts them.
	Groups []FailureGroup `json:"groups"`
	query.Page
	// Explanations are the candidate explanations, side by side (at
	// most limit of ExplanationsTotal).
	Explanations      []FailureExplanation `json:"explanations"`
	ExplanationsTotal int                  `json:"explanations_total"`
	EvidenceLevel     string               `json:"evidence_level"`
	Limitations       []string             `json:"limitations"`
	fault.Next
}

// FailuresOutput is `flameox analyze failures --json` and the MCP
// analyze_failures result: the analysis, and its recording when asked.
type FailuresOutput struct {
	*FailuresResult
	Recorded *Recorded `json:"recorded,omitempty"`
}

func (r *FailuresResult) provenance() (string, string, string, any, Source, any, []string) {
	cov := map[string]any{"attempts": r.Summary.Attempts, "failed": r.Summary.Failed, "groups_total": r.Total, "returned": r.Returned, "truncated": r.Truncated}
	return r.Operation, r.OperationVersion, r.CorpusCommitID, r.Parameters, Source{Kind: "corpus"}, cov, r.Limitations
}

// inputs lists the runs the returned groups name.
func (r *FailuresResult) inputs() (runs, artifacts, generations []string) {
	seen := map[string]bool{}
	for _, g := range r.Groups {
		for _, refs := range [][]FailureRef{g.Representatives, g.Contrast} {
			for _, ref := range refs {
				if ref.RunID != "" && !seen[ref.RunID] {
					seen[ref.RunID] = true
					runs = append(runs, ref.RunID)
				}
			}
		}
	}
	sort.Strings(runs)
	return nonNil(runs), []string{}, []string{}
}

// failureAttempt is one attempt as read: a run (with its trial, when it
// executed one) or a trial without a run.
type failureAttempt struct {
	RunID, TrialID, ExperimentID, Variant string
	RunType                               string
	At                                    int64 // microseconds since the epoch
	Revision                              int
	Exec, Capture, Validation             string
	TrialOutcome, TrialClass, Exclusion   string
	Adapter, Collector, CollectorVersion  string
	Exit                                  *int32
	Signal                                string
	Workload, WorkloadDef                 string
	Env, Source                           string
	Reason, ErrorCode                     string
	Params                                map[string]string
	ImportKind, ImportProducer            string
	// Message is the error's message (the run manifest's error, its
	// validation's reason, or the trial's exclusion reason).
	Message string
	// shape is errorShape(ErrorCode, Message), filled by analyseFailures.
	shape string
}

// kind is capture, import or trial.
func (a *failureAttempt) kind() string {
	switch {
	case a.TrialID != "":
		return "trial"
	case a.RunType == run.TypeImport:
		return "import"
	}
	return "capture"
}

// Outcomes an attempt can end with (the trials' vocabulary).
const (
	outcomeSucceeded = "succeeded"
	outcomeOpen      = "open"
	outcomeSkipped   = "unattempted"
)

// outcome reads an attempt's outcome and failure class: a trial's own
// (a cross-treatment oracle can fail a trial whose run succeeded), else
// the run's statuses read as trials read them, with an import's capture
// status (quarantined: its artifact could not be extracted). Open runs
// and trials that never ran are not attempts yet.
func (a *failureAttempt) outcome() (outcome, class string) {
	if a.TrialID != "" {
		switch a.TrialOutcome {
		case "pending":
			return outcomeOpen, ""
		case "unattempted", "planned", "":
			if a.RunID == "" {
				return outcomeSkipped, ""
			}
		default:
			return a.TrialOutcome, a.TrialClass
		}
	}
	if a.Exec == run.ExecPlanned || a.Exec == run.ExecRunning || a.Capture == run.CapturePending || a.Capture == run.CaptureRunning ||
		a.Validation == run.ValidationPending || a.Validation == run.ValidationRunning {
		return outcomeOpen, ""
	}
	switch a.Exec {
	case run.ExecSucceeded, run.ExecNotApplicable:
		switch {
		case a.Validation == run.ValidationFailed || a.Validation == run.ValidationError:
			return "oracle_failed", "validation"
		case a.Validation == run.ValidationCancelled || a.Capture == run.CaptureCancelled:
			return "cancelled", "cancelled"
		case a.Capture != run.CaptureRegistered:
			return "failed", "capture"
		}
		return outcomeSucceeded, "none"
	case run.ExecTimedOut:
		return "timed_out", "timeout"
	case run.ExecCancelled:
		return "cancelled", "cancelled"
	}
	return "failed", "process"
}

// dimValue is one value of one dimension an attempt has.
type dimValue struct{ dim, value, label string }

// values lists what an attempt can share with others. An import's
// environment and source state are the importing machine's, not the
// collector's, so imports join no environment or source-state group.
func (a *failureAttempt) values(outcome, class string) []dimValue {
	var out []dimValue
	add := func(dim, value, label string) {
		if value != "" {
			out = append(out, dimValue{dim, value, label})
		}
	}
	if a.kind() == "import" {
		label := "import " + orUnknown(a.ImportKind)
		if a.ImportProducer != "" && a.ImportProducer != "flameox.import" {
			label += " by " + a.ImportProducer
		}
		add(DimCollector, label, "")
	} else if a.Adapter != "" || a.Collector != "" {
		label := orUnknown(a.Adapter)
		if a.Collector != "" && a.Collector != a.Adapter {
			label += " (" + a.Collector
			if a.CollectorVersion != "" {
				label += " " + a.CollectorVersion
			}
			label += ")"
		} else if a.CollectorVersion != "" {
			label += " " + a.CollectorVersion
		}
		add(DimCollector, label, "")
	}
	add(DimWorkload, a.WorkloadDef, a.Workload)
	keys := make([]string, 0, len(a.Params))
	for k := range a.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(DimParameter, strings.TrimSpace(a.Workload+" "+k+"="+a.Params[k]), "")
	}
	if a.kind() != "import" {
		add(DimEnvironment, a.Env, "")
		add(DimSourceState, a.Source, "")
	}
	add(DimOutcome, outcome+"/"+class, "")
	switch {
	case a.Signal != "":
		add(DimExit, "signal "+a.Signal, "")
	case a.Exit != nil:
		add(DimExit, fmt.Sprintf("exit %d", *a.Exit), "")
	}
	if outcome != outcomeSucceeded {
		add(DimError, a.shape, "")
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// message picks the text that says why an attempt failed: a
// cross-treatment trial's exclusion reason (its run succeeded), else the
// run's error or validation reason, else the trial's exclusion reason.
func message(a *failureAttempt, m *run.Manifest) string {
	if a.TrialClass == "cross_treatment" && a.Exclusion != "" {
		return a.Exclusion
	}
	if m != nil {
		if m.Error != nil && m.Error.Message != "" {
			return m.Error.Message
		}
		if v := m.Validation; v != nil && v.Reason != "" && (m.ValidationStatus == run.ValidationFailed || m.ValidationStatus == run.ValidationError) {
			return v.Reason
		}
	}
	return a.Exclusion
}

// The parts of a message that differ between occurrences of one error.
// Written out here rather than taken from a library: what must go is
// flameox's own id forms (run UUIDs, sha256 digests, rs-/tr-/va- ids),
// paths and numbers, and the rest of the message must stay as written.
// They compile on first use, not at every process start.
var shapeRegexps = sync.OnceValue(func() *shapeRes {
	return &shapeRes{
		reQuoted: regexp.MustCompile(`"(?:[^"\\]|\\.)*"`),
		reUUID:   regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		reDigest: regexp.MustCompile(`(?i)\bsha256:[0-9a-f]{8,64}\b`),
		rePrefID: regexp.MustCompile(`(?i)\b[a-z]{2,4}-[0-9a-f]{16,}\b`),
		reHex:    regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b`),
		rePath:   regexp.MustCompile(`(?:[A-Za-z]:)?(?:[\w.+~-]*[/\\])+[\w.+~-]*`),
		reFile:   regexp.MustCompile(`\b[\w+-]+(?:\.[\w+-]+)*\.(?:[a-z][a-z0-9]{0,7})\b`),
		reNumber: regexp.MustCompile(`(^|[^A-Za-z_<])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`),
		reSpace:  regexp.MustCompile(`\s+`),
	}
})

type shapeRes struct {
	reQuoted, reUUID, reDigest, rePrefID, reHex, rePath, reFile, reNumber, reSpace *regexp.Regexp
}

// errorShape is an error's code and its message with ids, paths, file
// names, quoted values and numbers replaced, so that one error seen in
// many runs is one group.
func errorShape(code, msg string) string {
	s := normaliseMessage(msg)
	switch {
	case code == "" && s == "":
		return ""
	case s == "":
		return code
	case code == "":
		return s
	}
	return code + ": " + s
}

func normaliseMessage(msg string) string {
	re := shapeRegexps()
	s := re.reSpace.ReplaceAllString(strings.TrimSpace(msg), " ")
	s = re.reQuoted.ReplaceAllString(s, `"…"`)
	s = re.reUUID.ReplaceAllString(s, "<id>")
	s = re.reDigest.ReplaceAllString(s, "<digest>")
	s = re.rePrefID.ReplaceAllString(s, "<id>")
	s = re.rePath.ReplaceAllString(s, "<path>")
	s = re.reFile.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Count(m, ".") == 1 && len(m) <= 4 { // "e.g", "i.e"
			return m
		}
		return "<file>"
	})
	s = re.reHex.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) < 8 && !strings.HasPrefix(strings.ToLower(m), "0x") {
			return m
		}
		return "<hex>"
	})
	s = re.reNumber.ReplaceAllString(s, "${1}<n>")
	if r := []rune(s); len(r) > maxMessageShape {
		s = string(r[:maxMessageShape]) + "…"
	}
	return s
}

// qFailureAttempts reads every attempt: each run's latest published
// revision with the trial it executed, and each trial without a run,
// the newest first.
var qFailureAttempts = catalog.Query{Name: "analysis.failure_attempts", Version: "1", SQL: `
WITH t AS (SELECT * FROM trials QUALIFY row_number() OVER (PARTITION BY trial_id ORDER BY published_at DESC, evidence_generation_id DESC) = 1),
e AS (SELECT experiment_id, any_value(workload_definition_id) AS wd FROM experiments GROUP BY 1),
v AS (SELECT variant_id, experiment_id, any_value(name) AS name FROM variants GROUP BY 1, 2),
a AS (SELECT run_id, arg_min(kind, registered_at) AS kind, arg_min(coalesce(producer, ''), registered_at) AS producer
      FROM artifacts_current WHERE role = 'primary' GROUP BY 1),
x AS (
SELECT coalesce(r.run_id, '') AS run_id, coalesce(t.trial_id, '') AS trial_id, coalesce(t.experiment_id, '') AS experiment_id,
       coalesce(v.name, '') AS variant, coalesce(r.run_type, '') AS run_type,
       epoch_us(coalesce(r.created_at, t.published_at)) AS created_us, coalesce(r.revision, -1) AS revision,
       coalesce(r.execution_status, '') AS exec_status, coalesce(r.capture_status, '') AS capture_status, coalesce(r.validation_status, '') AS validation_status,
       coalesce(t.outcome, '') AS outcome, coalesce(t.failure_class, '') AS failure_class, coalesce(t.exclusion_reason, '') AS exclusion,
       coalesce(r.adapter, '') AS adapter, coalesce(r.collector, '') AS collector, coalesce(r.collector_version, '') AS collector_version,
       r.exit_code AS exit_code, coalesce(r.signal, '') AS signal,
       coalesce(r.workload_name, '') AS workload_name, coalesce(r.workload_definition_id, e.wd, '') AS workload_def,
       coalesce(r.environment_id, '') AS env, coalesce(r.source_state_id, '') AS src,
       coalesce(r.reason, '') AS reason, coalesce(r.error_code, '') AS error_code,
       coalesce(map_keys(r.workload_parameters), []::VARCHAR[]) AS pk, coalesce(map_values(r.workload_parameters), []::VARCHAR[]) AS pv,
       coalesce(a.kind, '') AS import_kind, coalesce(a.producer, '') AS import_producer
FROM runs_current r FULL OUTER JOIN t ON t.run_id = r.run_id
LEFT JOIN e ON e.experiment_id = t.experiment_id
LEFT JOIN v ON v.variant_id = t.variant_id AND v.experiment_id = t.experiment_id
LEFT JOIN a ON a.run_id = r.run_id)
SELECT run_id, trial_id, experiment_id, variant, run_type, created_us, revision, exec_status, capture_status, validation_status, outcome, failure_class, exclusion,
       adapter, collector, collector_version, exit_code, signal, workload_name, workload_def, env, src, reason, error_code, pk, pv,
       import_kind, import_producer
FROM x
WHERE ($1::TIMESTAMPTZ IS NULL OR created_us >= epoch_us($1::TIMESTAMPTZ)) AND ($2 = '' OR workload_name = $2)
ORDER BY created_us DESC, run_id DESC, trial_id DESC
LIMIT $3`}

// Failures reads every attempt of the pinned corpus and groups its
// failures by what they share, with the candidate explanations side by
// side. It decides nothing: a value failures coincide with is a
// candidate, never a cause.
func Failures(ctx context.Context, ws *workspace.Workspace, req FailuresRequest) (*FailuresResult, error) {
	if req.Limit == 0 {
		req.Limit = defaultFailureLimit
	}
	if req.Limit < 0 || req.Limit > maxFailureGroups {
		return nil, fault.New(fault.QueryBudgetExceeded, "limit %d is outside 1..%d", req.Limit, maxFailureGroups).With("max_limit", fmt.Sprint(maxFailureGroups))
	}
	req.Workload = strings.TrimSpace(req.Workload)
	req.Since = strings.TrimSpace(req.Since)
	var since any
	if req.Since != "" {
		t, err := time.Parse(time.RFC3339, req.Since)
		if err != nil {
			return nil, fault.New(fault.InvalidArguments, "since %q is not an RFC 3339 time (e.g. 2026-12-01T00:00:00Z)", req.Since).With("field", "since")
		}
		since = t.UTC()
	}
	s, err := query.OpenTables(ctx, ws, "runs_current", "artifacts_current", "trials", "experiments", "variants")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var atts []failureAttempt
	err = s.R.Scan(ctx, qFailureAttempts, []any{since, req.Workload, maxFailureAttempts + 1}, func(rows *sql.Rows) error {
		for rows.Next() {
			var a failureAttempt
			var rev int32
			var exit sql.NullInt32
			var keys, values []any
			if err := rows.Scan(&a.RunID, &a.TrialID, &a.ExperimentID, &a.Variant, &a.RunType, &a.At, &rev, &a.Exec, &a.Capture, &a.Validation,
				&a.TrialOutcome, &a.TrialClass, &a.Exclusion, &a.Adapter, &a.Collector, &a.CollectorVersion, &exit, &a.Signal,
				&a.Workload, &a.WorkloadDef, &a.Env, &a.Source, &a.Reason, &a.ErrorCode, &keys, &values, &a.ImportKind, &a.ImportProducer); err != nil {
				return err
			}
			a.Revision = int(rev)
			if exit.Valid {
				a.Exit = &exit.Int32
			}
			a.Params = paramMap(keys, values)
			atts = append(atts, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	res := &FailuresResult{SchemaVersion: 1, Operation: OpFailures, OperationVersion: FailuresVersion, CorpusCommitID: s.Commit(),
		Parameters: req, EvidenceLevel: "derived", Limitations: []string{}, Next: fault.Next{NextSteps: []string{}}}
	if len(atts) > maxFailureAttempts {
		atts = atts[:maxFailureAttempts]
		res.Limitations = append(res.Limitations, fmt.Sprintf("only the newest %d attempts are read; narrow with --since or --workload", maxFailureAttempts))
	}
	res.Limitations = append(res.Limitations, readMessages(&run.Store{Root: ws.Root}, atts)...)
	analyseFailures(res, atts, req.Limit)
	if len(res.Groups) > 0 {
		if ref := res.Groups[0].Representatives; len(ref) > 0 && ref[0].RunID != "" {
			id := ref[0].RunID
			res.Next.Then(fault.Step{Command: "flameox runs show " + id, Tool: "get_run", Arguments: map[string]any{"run_id": id}})
			res.Next.Then(fault.Step{Command: "flameox runs output " + id, Tool: "get_run_output", Arguments: map[string]any{"run_id": id}})
		}
	}
	return res, nil
}

func paramMap(keys, values []any) map[string]string {
	if len(keys) == 0 || len(keys) != len(values) {
		return nil
	}
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		ks, _ := k.(string)
		vs, _ := values[i].(string)
		m[ks] = vs
	}
	return m
}

// readMessages fills the message of each failed attempt from its run's
// published revision (immutable: the pinned corpus's), at most
// maxFailureMessages of them, and says what it could not read.
func readMessages(store *run.Store, atts []failureAttempt) []string {
	var lim []string
	read, missing, skipped := 0, 0, 0
	for i := range atts {
		a := &atts[i]
		o, _ := a.outcome()
		if o == outcomeSucceeded || o == outcomeOpen || o == outcomeSkipped {
			continue
		}
		var m *run.Manifest
		if a.RunID != "" && a.Revision >= 0 {
			if read == maxFailureMessages {
				skipped++
			} else {
				read++
				var err error
				if m, err = store.Revision(a.RunID, a.Revision); err != nil {
					m = nil
					missing++
				}
			}
		}
		a.Message = message(a, m)
	}
	if skipped > 0 {
		lim = append(lim, fmt.Sprintf("the error messages of %d failed runs past the first %d were not read: those group by error code alone", skipped, maxFailureMessages))
	}
	if missing > 0 {
		lim = append(lim, fmt.Sprintf("%d failed runs' manifests could not be read: they group by error code alone", missing))
	}
	return lim
}

// groupAcc accumulates one group.
type groupAcc struct {
	dim, value, label string
	failed, succeeded []int // attempt indexes
}

// analyseFailures fills the summary, groups and explanations of res from
// the attempts read.
func analyseFailures(res *FailuresResult, atts []failureAttempt, limit int) {
	type state struct{ outcome, class string }
	states := make([]state, len(atts))
	groups := map[string]*groupAcc{}
	dimValues := map[string]map[string]bool{} // values seen per dimension
	dimAttempts := map[string]int{}           // attempts that have the dimension
	kinds := map[string]*FailureKind{}
	sum := &res.Summary
	signatures := map[string]int{}
	shapes := map[[2]string]string{} // one error is normalised once
	for i := range atts {
		a := &atts[i]
		o, c := a.outcome()
		states[i] = state{o, c}
		switch o {
		case outcomeOpen:
			sum.Open++
			continue
		case outcomeSkipped:
			sum.Unattempted++
			continue
		}
		sum.Attempts++
		if o != outcomeSucceeded {
			key := [2]string{a.ErrorCode, a.Message}
			sh, ok := shapes[key]
			if !ok {
				sh = errorShape(a.ErrorCode, a.Message)
				shapes[key] = sh
			}
			a.shape = sh
		}
		k := kinds[a.kind()]
		if k == nil {
			k = &FailureKind{Kind: a.kind()}
			kinds[a.kind()] = k
		}
		k.Attempts++
		ok := o == outcomeSucceeded
		if ok {
			sum.Succeeded++
			k.Succeeded++
		} else {
			sum.Failed++
			k.Failed++
			signatures[signature(a, o, c)]++
		}
		seenDim := map[string]bool{}
		for _, v := range a.values(o, c) {
			key := v.dim + "\x00" + v.value
			g := groups[key]
			if g == nil {
				g = &groupAcc{dim: v.dim, value: v.value, label: v.label}
				groups[key] = g
			}
			if ok {
				g.succeeded = append(g.succeeded, i)
			} else {
				g.failed = append(g.failed, i)
			}
			if dimValues[v.dim] == nil {
				dimValues[v.dim] = map[string]bool{}
			}
			dimValues[v.dim][v.value] = true
			if !seenDim[v.dim] {
				seenDim[v.dim] = true
				dimAttempts[v.dim]++
			}
		}
	}
	for _, name := range []string{"capture", "import", "trial"} {
		if k := kinds[name]; k != nil {
			sum.Kinds = append(sum.Kinds, *k)
		}
	}
	if sum.Kinds == nil {
		sum.Kinds = []FailureKind{}
	}
	for _, n := range signatures {
		if n > 1 {
			sum.Clusters++
			sum.Clustered += n
		} else {
			sum.Isolated++
		}
	}

	// Succeeded attempts per workload, for the contrast.
	okByWorkload := map[string][]int{}
	for i := range atts {
		if states[i].outcome == outcomeSucceeded && atts[i].WorkloadDef != "" {
			okByWorkload[atts[i].WorkloadDef] = append(okByWorkload[atts[i].WorkloadDef], i)
		}
	}
	at := func(i int) time.Time { return time.UnixMicro(atts[i].At).UTC() }
	ref := func(i int) FailureRef {
		return FailureRef{RunID: atts[i].RunID, TrialID: atts[i].TrialID, Outcome: states[i].outcome}
	}
	older := func(i, j int) bool {
		if atts[i].At != atts[j].At {
			return atts[i].At < atts[j].At
		}
		if atts[i].RunID != atts[j].RunID {
			return atts[i].RunID < atts[j].RunID
		}
		return atts[i].TrialID < atts[j].TrialID
	}
	var accs []*groupAcc
	for _, g := range groups {
		if len(g.failed) > 0 {
			sort.Slice(g.failed, func(x, y int) bool { return older(g.failed[x], g.failed[y]) })
			sort.Slice(g.succeeded, func(x, y int) bool { return older(g.succeeded[x], g.succeeded[y]) })
			accs = append(accs, g)
		}
	}
	rate := func(f, s int) float64 { return float64(f) / float64(f+s) }
	sort.Slice(accs, func(x, y int) bool {
		a, b := accs[x], accs[y]
		if len(a.failed) != len(b.failed) {
			return len(a.failed) > len(b.failed)
		}
		if ra, rb := rate(len(a.failed), len(a.succeeded)), rate(len(b.failed), len(b.succeeded)); ra != rb {
			return ra > rb
		}
		if la, lb := atts[a.failed[len(a.failed)-1]].At, atts[b.failed[len(b.failed)-1]].At; la != lb {
			return la > lb
		}
		if a.dim != b.dim {
			return dimRank(a.dim) < dimRank(b.dim)
		}
		return a.value < b.value
	})
	res.Total = int64(len(accs))
	res.Groups = []FailureGroup{}
	for _, g := range accs {
		if len(res.Groups) == limit {
			res.Truncated = true
			break
		}
		res.Groups = append(res.Groups, buildGroup(g, atts, okByWorkload, ref, at, older))
	}
	res.Returned = len(res.Groups)

	// Candidate explanations: values of the cause dimensions that two or
	// more failures share.
	var expl []*groupAcc
	bySet := map[string][]string{}
	setOf := map[*groupAcc]string{}
	for _, g := range accs {
		if !causeDim(g.dim) || len(g.failed) < 2 {
			continue
		}
		expl = append(expl, g)
		d := attemptSet(g.failed, g.succeeded)
		setOf[g] = d
		bySet[d] = append(bySet[d], g.dim+"="+g.value)
	}
	res.ExplanationsTotal = len(expl)
	res.Explanations = []FailureExplanation{}
	for _, g := range expl {
		if len(res.Explanations) == limit {
			break
		}
		f, s := len(g.failed), len(g.succeeded)
		e := FailureExplanation{Dimension: g.dim, Value: g.value, Label: g.label, Failures: f, Succeeded: s,
			FailureFraction: float64(f) / float64(sum.Failed), FailureRate: rate(f, s), Indistinguishable: []string{}}
		switch {
		case len(dimValues[g.dim]) == 1:
			e.Strength = "uniform"
			e.Evidence = fmt.Sprintf("all %d attempts that record %s have it: the data cannot tell whether it matters", dimAttempts[g.dim], dimNoun(g.dim))
		case s == 0:
			e.Strength = "exclusive"
			e.Evidence = "no attempt with it succeeded"
		default:
			e.Strength = "mixed"
			e.Evidence = fmt.Sprintf("%d attempts with it succeeded: weaker", s)
		}
		for _, other := range bySet[setOf[g]] {
			if other != g.dim+"="+g.value {
				e.Indistinguishable = append(e.Indistinguishable, other)
			}
		}
		sort.Strings(e.Indistinguishable)
		res.Explanations = append(res.Explanations, e)
	}
	if res.ExplanationsTotal > limit {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d candidate explanations; the %d covering the most failures are listed (raise --limit for more)", res.ExplanationsTotal, limit))
	}
	sum.Answer = failureAnswer(sum, res.Explanations)
	if kinds["import"] != nil {
		res.Limitations = append(res.Limitations, "an import's environment and source state are the importing machine's, not where its file was collected: imports join no environment or source-state group")
	}
	if sum.Open > 0 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d attempts had not finished at this commit and are not counted", sum.Open))
	}
	if sum.Unattempted > 0 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d trials were never attempted and are not counted", sum.Unattempted))
	}
	res.Limitations = append(res.Limitations,
		"failures grouped by what they share, not by why they failed: a value failures coincide with is a candidate explanation, never a cause; a discriminating experiment (vary it alone) can tell",
		"cancelled attempts count as not succeeded; succeeded attempts cannot prove a rare failure absent")
}

// attemptSet identifies a set of attempts (by index): the sha256 of the
// sorted indexes, so two candidates that cover the same attempts compare
// equal.
func attemptSet(failed, succeeded []int) string {
	idx := make([]int, 0, len(failed)+len(succeeded))
	idx = append(append(idx, failed...), succeeded...)
	sort.Ints(idx)
	h := sha256.New()
	var b [8]byte
	for _, i := range idx {
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		h.Write(b[:])
	}
	return string(h.Sum(nil))
}

// signature is what tells one failure's symptom from another's: its
// workload (or imported kind), outcome and error shape.
func signature(a *failureAttempt, outcome, class string) string {
	w := a.WorkloadDef
	if w == "" {
		w = a.kind() + ":" + a.ImportKind
	}
	return w + "\x00" + outcome + "/" + class + "\x00" + a.shape
}

func dimNoun(d string) string {
	return map[string]string{DimCollector: "a collector", DimWorkload: "a workload", DimParameter: "a parameter value",
		DimEnvironment: "an environment", DimSourceState: "a source state"}[d]
}

// buildGroup fills one group's counts, dates and runs.
func buildGroup(g *groupAcc, atts []failureAttempt, okByWorkload map[string][]int, ref func(int) FailureRef, at func(int) time.Time, older func(i, j int) bool) FailureGroup {
	f, s := len(g.failed), len(g.succeeded)
	out := FailureGroup{Dimension: g.dim, Value: g.value, Label: g.label, Failures: f, Succeeded: s,
		FailureRate: float64(f) / float64(f+s), Isolated: f == 1,
		FirstSeen: at(g.failed[0]), LastSeen: at(g.failed[f-1]),
		Representatives: []FailureRef{}, Contrast: []FailureRef{}}
	for _, i := range pickSpread(g.failed, maxRepresentatives) {
		out.Representatives = append(out.Representatives, ref(i))
	}
	// The workloads the failures ran; their successes with another value
	// of this dimension are the contrast.
	inGroup := map[int]bool{}
	for _, i := range g.succeeded {
		inGroup[i] = true
	}
	workloads := map[string]bool{}
	for _, i := range g.failed {
		if w := atts[i].WorkloadDef; w != "" {
			workloads[w] = true
		}
	}
	var elsewhere, same []int
	for w := range workloads {
		for _, i := range okByWorkload[w] {
			if inGroup[i] {
				same = append(same, i)
			} else {
				elsewhere = append(elsewhere, i)
			}
		}
	}
	sort.Slice(elsewhere, func(x, y int) bool { return older(elsewhere[x], elsewhere[y]) })
	sort.Slice(same, func(x, y int) bool { return older(same[x], same[y]) })
	out.SucceededElsewhere = len(elsewhere)
	for _, i := range append(elsewhere, same...) {
		if len(out.Contrast) == maxContrastRuns {
			break
		}
		c := ref(i)
		c.Outcome = ""
		out.Contrast = append(out.Contrast, c)
	}
	return out
}

// pickSpread picks up to n of idx (sorted oldest first): the first, the
// last, and evenly between.
func pickSpread(idx []int, n int) []int {
	if len(idx) <= n {
		return idx
	}
	out := make([]int, 0, n)
	for k := range n {
		out = append(out, idx[k*(len(idx)-1)/(n-1)])
	}
	return out
}

// failureAnswer is the summary's one line.
func failureAnswer(sum *FailureSummary, expl []FailureExplanation) string {
	switch {
	case sum.Attempts == 0:
		return "no attempts in the corpus"
	case sum.Failed == 0:
		return fmt.Sprintf("no failures in %d attempts", sum.Attempts)
	}
	head := fmt.Sprintf("%d of %d attempts failed", sum.Failed, sum.Attempts)
	switch {
	case sum.Clustered == 0:
		head += "; every failure is isolated (no two share a workload, outcome and error)"
	case sum.Isolated == 0:
		head += fmt.Sprintf("; all of them clustered in %d signature(s)", sum.Clusters)
	default:
		head += fmt.Sprintf("; %d clustered in %d signature(s), %d isolated", sum.Clustered, sum.Clusters, sum.Isolated)
	}
	var cands []string
	for _, e := range expl {
		if e.Strength == "exclusive" {
			cands = append(cands, e.Dimension+" "+firstNonEmpty(e.Label, e.Value))
		}
	}
	if len(cands) > 0 {
		if len(cands) > 3 {
			cands = append(cands[:3], fmt.Sprintf("%d more", len(cands)-3))
		}
		head += "; candidate explanations no success contradicts: " + strings.Join(cands, ", ")
	}
	return head
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
