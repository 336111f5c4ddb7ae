package query

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
)

// GetExperimentRequest names an experiment and pages its trials.
type GetExperimentRequest struct {
	ExperimentID string `json:"experiment_id" jsonschema:"the experiment id"`
	Outcome      string `json:"outcome,omitempty" jsonschema:"only trials with this outcome, e.g. oracle_failed"`
	Limit        int    `json:"limit,omitempty" jsonschema:"trials to return (default 50, max 1000)"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// ExperimentTrial is one trial as published: its latest record.
type ExperimentTrial struct {
	TrialID          string `json:"trial_id"`
	BlockID          string `json:"block_id"`
	OrderInBlock     *int32 `json:"order_in_block"`
	Variant          string `json:"variant"`
	VariantID        string `json:"variant_id"`
	Factors          string `json:"factors_json"`
	RunID            string `json:"run_id,omitempty"`
	Outcome          string `json:"outcome"`
	ExclusionReason  string `json:"exclusion_reason,omitempty"`
	ValidationStatus string `json:"validation_status"`
	FailureClass     string `json:"failure_class"`
}

// ExperimentVariant is one arm and how its trials ended.
type ExperimentVariant struct {
	VariantID  string         `json:"variant_id"`
	Name       string         `json:"name"`
	Parameters string         `json:"parameters_json"`
	Outcomes   map[string]int `json:"outcomes"`
}

// ExperimentDetail is the result of `flameox experiment show` and MCP
// get_experiment: the declared design and decision rule, each variant
// with its outcome counts over every trial, the experiment's run sets,
// and one page of its trials in block order.
type ExperimentDetail struct {
	SchemaVersion      int                 `json:"schema_version"`
	Query              string              `json:"query"`
	CorpusCommitID     string              `json:"corpus_commit_id"`
	ExperimentID       string              `json:"experiment_id"`
	InvestigationID    string              `json:"investigation_id"`
	HypothesisID       string              `json:"hypothesis_id,omitempty"`
	DesignID           string              `json:"experiment_design_id"`
	WorkloadDefinition string              `json:"workload_definition_id"`
	PrimaryMetric      string              `json:"primary_metric"`
	Polarity           string              `json:"polarity"`
	Estimand           string              `json:"estimand"`
	PracticalThreshold float64             `json:"practical_threshold"`
	ConfidenceLevel    float64             `json:"confidence_level"`
	RandomSeed         uint64              `json:"random_seed"`
	CreatedAt          time.Time           `json:"created_at"`
	Variants           []ExperimentVariant `json:"variants"`
	RunSets            []RunSetSummary     `json:"run_sets"`
	Page
	Trials []ExperimentTrial `json:"trials"`
}

// A trial may be published more than once (a recovered experiment's
// trials after a crash); the newest generation's row is the trial.
const trialsLatest = `(SELECT * FROM trials QUALIFY row_number() OVER (PARTITION BY trial_id ORDER BY published_at DESC) = 1)`

var (
	qExperimentGet = catalog.Query{Name: "experiments.get", Version: "1", SQL: `
SELECT e.experiment_id, e.investigation_id, coalesce(e.hypothesis_id, ''), e.experiment_design_id, e.workload_definition_id,
       e.primary_metric, e.polarity, e.estimand, e.practical_threshold, e.confidence_level, e.random_seed, e.created_at
FROM experiments e WHERE e.experiment_id = $1 LIMIT 1`}
	qExperimentVariants = catalog.Query{Name: "experiments.variants", Version: "1", SQL: `
SELECT v.variant_id, v.name, v.parameters_json, coalesce(t.outcome, ''), count(t.trial_id)
FROM variants v LEFT JOIN ` + trialsLatest + ` t ON t.variant_id = v.variant_id AND t.experiment_id = v.experiment_id
WHERE v.experiment_id = $1
GROUP BY 1, 2, 3, 4 ORDER BY 2, 1, 4`}
	qExperimentRunSets = catalog.Query{Name: "experiments.run_sets", Version: "1", SQL: `
SELECT r.run_set_id, r.corpus_commit_id, r.created_at, r.selection_json, r.member_count, r.membership_digest
FROM run_sets r WHERE json_extract_string(r.selection_json, '$.experiment_id') = $1
ORDER BY r.created_at, r.run_set_id LIMIT 1000`}
	qExperimentTrials = catalog.Query{Name: "experiments.trials", Version: "1", SQL: `
SELECT t.trial_id, coalesce(t.block_id, ''), t.order_in_block, coalesce(v.name, ''), t.variant_id, t.factors_json,
       coalesce(t.run_id, ''), t.outcome, coalesce(t.exclusion_reason, ''), t.validation_status, t.failure_class
FROM ` + trialsLatest + ` t LEFT JOIN variants v ON v.variant_id = t.variant_id AND v.experiment_id = t.experiment_id
WHERE t.experiment_id = $1 AND ($2 = '' OR t.outcome = $2)
ORDER BY coalesce(t.block_id, ''), t.order_in_block NULLS LAST, t.trial_id
LIMIT $3 OFFSET $4`}
	qExperimentTrialsCount = catalog.Query{Name: "experiments.trials_count", Version: "1", SQL: `
SELECT count(*) FROM ` + trialsLatest + ` t WHERE t.experiment_id = $1 AND ($2 = '' OR t.outcome = $2)`}
)

// GetExperiment reads one published experiment: its design, variants with
// outcome counts, run sets, and a page of trials.
func GetExperiment(ctx context.Context, ws *workspace.Workspace, req GetExperimentRequest) (*ExperimentDetail, error) {
	if req.ExperimentID == "" {
		return nil, fault.New(fault.InvalidArguments, "get_experiment needs the experiment id").With("field", "experiment_id")
	}
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*ExperimentDetail, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qExperimentTrials, filters, "block_id, order_in_block, trial_id", req.Cursor)
		if err != nil {
			return nil, err
		}
		offset, err := offsetOf(key)
		if err != nil {
			return nil, err
		}
		res := &ExperimentDetail{SchemaVersion: 1, Query: qExperimentGet.ID(), CorpusCommitID: s.Commit(),
			Variants: []ExperimentVariant{}, RunSets: []RunSetSummary{}, Trials: []ExperimentTrial{}}
		found := false
		err = s.R.Scan(ctx, qExperimentGet, []any{req.ExperimentID}, func(rows *sql.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&res.ExperimentID, &res.InvestigationID, &res.HypothesisID, &res.DesignID, &res.WorkloadDefinition,
					&res.PrimaryMetric, &res.Polarity, &res.Estimand, &res.PracticalThreshold, &res.ConfidenceLevel,
					&res.RandomSeed, &res.CreatedAt); err != nil {
					return err
				}
				res.CreatedAt, found = res.CreatedAt.UTC(), true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, notFoundInquiry("experiment", req.ExperimentID, "investigations list", "list_investigations")
		}
		if res.Variants, err = s.experimentVariants(ctx, req.ExperimentID); err != nil {
			return nil, err
		}
		if res.RunSets, err = s.experimentRunSets(ctx, req.ExperimentID); err != nil {
			return nil, err
		}
		fargs := []any{req.ExperimentID, req.Outcome}
		if res.Trials, res.Truncated, err = s.experimentTrials(ctx, req.ExperimentID, req.Outcome, limit, offset); err != nil {
			return nil, err
		}
		res.Returned = len(res.Trials)
		if res.Truncated {
			want.Key = []string{strconv.FormatInt(offset+int64(limit), 10), res.Trials[len(res.Trials)-1].TrialID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qExperimentTrialsCount, fargs)
		return res, err
	})
}

// experimentVariants reads an experiment's variants with their trials'
// outcome counts.
func (s *Session) experimentVariants(ctx context.Context, id string) ([]ExperimentVariant, error) {
	out := []ExperimentVariant{}
	err := s.R.Scan(ctx, qExperimentVariants, []any{id}, func(rows *sql.Rows) error {
		for rows.Next() {
			var vid, name, params, outcome string
			var n int
			if err := rows.Scan(&vid, &name, &params, &outcome, &n); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].VariantID != vid {
				out = append(out, ExperimentVariant{VariantID: vid, Name: name, Parameters: params, Outcomes: map[string]int{}})
			}
			if outcome != "" {
				out[len(out)-1].Outcomes[outcome] = n
			}
		}
		return nil
	})
	return out, err
}

// experimentRunSets reads the run sets frozen for an experiment.
func (s *Session) experimentRunSets(ctx context.Context, id string) ([]RunSetSummary, error) {
	out := []RunSetSummary{}
	err := s.R.Scan(ctx, qExperimentRunSets, []any{id}, func(rows *sql.Rows) error {
		for rows.Next() {
			var r RunSetSummary
			var sel string
			if err := rows.Scan(&r.RunSetID, &r.CorpusCommitID, &r.CreatedAt, &sel, &r.MemberCount, &r.MembershipDigest); err != nil {
				return err
			}
			r.CreatedAt, r.Selection = r.CreatedAt.UTC(), rawJSON(sel)
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// experimentTrials reads a page of an experiment's trials (those with
// outcome, when it is not empty) in block order; truncated says more follow.
func (s *Session) experimentTrials(ctx context.Context, id, outcome string, limit int, offset int64) ([]ExperimentTrial, bool, error) {
	out, truncated := []ExperimentTrial{}, false
	err := s.R.Scan(ctx, qExperimentTrials, []any{id, outcome, limit + 1, offset}, func(rows *sql.Rows) error {
		for rows.Next() {
			var t ExperimentTrial
			var order sql.NullInt32
			if err := rows.Scan(&t.TrialID, &t.BlockID, &order, &t.Variant, &t.VariantID, &t.Factors, &t.RunID, &t.Outcome,
				&t.ExclusionReason, &t.ValidationStatus, &t.FailureClass); err != nil {
				return err
			}
			if len(out) == limit {
				truncated = true
				break
			}
			if order.Valid {
				t.OrderInBlock = &order.Int32
			}
			out = append(out, t)
		}
		return nil
	})
	return out, truncated, err
}
