package inquiry

import (
	"encoding/json"
	"time"

	"github.com/flameox/flameox/pkg/record"
)

// The record kinds of this package.
const (
	KindInvestigation = "investigation"
	KindHypothesis    = "hypothesis"
	KindExperiment    = "experiment"
	KindVariant       = "variant"
	KindTrial         = "trial"
	KindRunSet        = "run_set"
)

// Kinds lists every kind, in the order a publication writes them.
func Kinds() []string {
	return []string{KindInvestigation, KindHypothesis, KindExperiment, KindVariant, KindTrial, KindRunSet}
}

// Investigation is the question being investigated.
type Investigation struct {
	InvestigationID       string    `json:"investigation_id"`
	Question              string    `json:"question"`
	Symptom               string    `json:"symptom,omitempty"`
	ProjectRoot           string    `json:"project_root"`
	Status                string    `json:"status"`
	ParentInvestigationID string    `json:"parent_investigation_id,omitempty"`
	CreatedAt             time.Time `json:"created_at"`
}

// Hypothesis assessments and lifecycles.
const (
	Unassessed   = "unassessed"
	Supported    = "supported"
	Contradicted = "contradicted"
	Inconclusive = "inconclusive"
	Active       = "active"
	Retired      = "retired"
)

// Hypothesis is one revision of a hypothesis. Revisions go 1 upwards; a
// new revision names the one it replaces in ExpectedRevision (0 for a new
// hypothesis), and the writer refuses it unless that is still the latest
// (compare-and-swap). ExpectedRevision is not a column: Revision is.
type Hypothesis struct {
	HypothesisID            string    `json:"hypothesis_id"`
	InvestigationID         string    `json:"investigation_id"`
	Revision                int32     `json:"revision"`
	ExpectedRevision        int32     `json:"expected_revision"`
	Claim                   string    `json:"claim"`
	Prediction              string    `json:"prediction"`
	DiscriminatingCondition string    `json:"discriminating_condition"`
	Assessment              string    `json:"assessment"`
	Lifecycle               string    `json:"lifecycle"`
	CreatedAt               time.Time `json:"created_at"`
}

// Experiment is an experiment's design and decision rule, declared before
// any trial runs.
type Experiment struct {
	ExperimentID          string    `json:"experiment_id"`
	InvestigationID       string    `json:"investigation_id"`
	HypothesisID          string    `json:"hypothesis_id,omitempty"`
	Recipe                string    `json:"recipe"`
	RecipeVersion         string    `json:"recipe_version"`
	WorkloadDefinitionID  string    `json:"workload_definition_id"`
	ExperimentDesignID    string    `json:"experiment_design_id"`
	MeasurementProtocolID string    `json:"measurement_protocol_id"`
	ValidationSpecID      string    `json:"validation_spec_id,omitempty"`
	PrimaryMetric         string    `json:"primary_metric"`
	Polarity              string    `json:"polarity"`
	Estimand              string    `json:"estimand"`
	PracticalThreshold    float64   `json:"practical_threshold"`
	ConfidenceLevel       float64   `json:"confidence_level"`
	StoppingRuleJSON      string    `json:"stopping_rule_json"`
	RandomSeed            uint64    `json:"random_seed"`
	Role                  string    `json:"role"`
	CreatedAt             time.Time `json:"created_at"`
}

// Variant is one arm of an experiment.
type Variant struct {
	VariantID                   string `json:"variant_id"`
	ExperimentID                string `json:"experiment_id"`
	Name                        string `json:"name"`
	SourceStateID               string `json:"source_state_id,omitempty"`
	WorkloadInstanceID          string `json:"workload_instance_id,omitempty"`
	EnvironmentRequirementsJSON string `json:"environment_requirements_json"`
	ParametersJSON              string `json:"parameters_json"`
}

// Trial outcomes: every attempted trial ends in exactly one; failed ones
// stay in the denominator of every comparison.
const (
	TrialSucceeded    = "succeeded"
	TrialFailed       = "failed"
	TrialTimedOut     = "timed_out"
	TrialCancelled    = "cancelled"
	TrialOracleFailed = "oracle_failed"
	TrialUnattempted  = "unattempted"
	TrialPending      = "pending" // registered, about to run: never terminal
	TrialPlanned      = "planned" // declared with its experiment: never terminal
)

// TerminalOutcomes lists the outcomes a trial may end in.
func TerminalOutcomes() []string {
	return []string{TrialSucceeded, TrialFailed, TrialTimedOut, TrialCancelled, TrialOracleFailed, TrialUnattempted}
}

// Trial is one trial attempt: which variant ran in which block and order,
// the run that executed it, and how it ended. Parameter* hold the swept
// scaling value, when the experiment has one.
type Trial struct {
	TrialID             string   `json:"trial_id"`
	ExperimentID        string   `json:"experiment_id"`
	VariantID           string   `json:"variant_id"`
	RunID               string   `json:"run_id,omitempty"`
	CombinationID       string   `json:"combination_id"`
	FactorsJSON         string   `json:"factors_json"`
	BlockID             string   `json:"block_id,omitempty"`
	OrderInBlock        *int32   `json:"order_in_block,omitempty"`
	ParameterName       string   `json:"parameter_name,omitempty"`
	ParameterValueInt   *int64   `json:"parameter_value_int,omitempty"`
	ParameterValueFloat *float64 `json:"parameter_value_float,omitempty"`
	Attempt             int32    `json:"attempt"`
	Outcome             string   `json:"outcome"`
	ExclusionReason     string   `json:"exclusion_reason,omitempty"`
	ValidationStatus    string   `json:"validation_status"`
	FailureClass        string   `json:"failure_class"`
}

// RunSet is a frozen, digest-checked selection of runs at one corpus
// commit. A frozen set never changes: a new selection is a new set.
type RunSet struct {
	RunSetID         string    `json:"run_set_id"`
	CorpusCommitID   string    `json:"corpus_commit_id"`
	CreatedAt        time.Time `json:"created_at"`
	SelectionJSON    string    `json:"selection_json"`
	MembersJSON      string    `json:"members_json"`
	MemberCount      uint64    `json:"member_count"`
	MembershipDigest string    `json:"membership_digest"`
}

// Record is one line of fox-publish's input carrying exactly one of the
// types above, named by Header.Record, beside the workspace it belongs to.
type Record struct {
	record.Header
	Workspace string `json:"workspace"`
	Body      any    `json:"-"`
}

// MarshalJSON writes the header, the workspace and Body's fields flat on
// one object.
func (r Record) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(r.Body)
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	put := func(k string, v any) error {
		b, err := json.Marshal(v)
		fields[k] = b
		return err
	}
	if err := put("record", r.Record); err != nil {
		return nil, err
	}
	if err := put("schema_version", r.SchemaVersion); err != nil {
		return nil, err
	}
	if err := put("workspace", r.Workspace); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// New wraps body (one of this package's types, by value or pointer) as a
// record of its kind for workspace ws.
func New(ws string, body any) Record {
	return Record{Header: record.Header{Record: KindOf(body), SchemaVersion: record.SchemaVersion}, Workspace: ws, Body: body}
}

// KindOf returns the kind of one of this package's types, "" for others.
func KindOf(body any) string {
	switch body.(type) {
	case Investigation, *Investigation:
		return KindInvestigation
	case Hypothesis, *Hypothesis:
		return KindHypothesis
	case Experiment, *Experiment:
		return KindExperiment
	case Variant, *Variant:
		return KindVariant
	case Trial, *Trial:
		return KindTrial
	case RunSet, *RunSet:
		return KindRunSet
	}
	return ""
}

// Decode reads one line of kind raw.Record into a pointer to its type and
// the workspace the line names. Unknown fields are ignored (the stream
// only grows); a kind this package does not define returns nil, "", nil.
func Decode(raw *record.Raw) (body any, workspace string, err error) {
	switch raw.Record {
	case KindInvestigation:
		body = &Investigation{}
	case KindHypothesis:
		body = &Hypothesis{}
	case KindExperiment:
		body = &Experiment{}
	case KindVariant:
		body = &Variant{}
	case KindTrial:
		body = &Trial{}
	case KindRunSet:
		body = &RunSet{}
	default:
		return nil, "", nil
	}
	if err := record.Check(raw.Header, raw.Record, record.SchemaVersion); err != nil {
		return nil, "", err
	}
	if err := raw.Decode(body); err != nil {
		return nil, "", err
	}
	var ws struct {
		Workspace string `json:"workspace"`
	}
	if err := raw.Decode(&ws); err != nil {
		return nil, "", err
	}
	return body, ws.Workspace, nil
}
