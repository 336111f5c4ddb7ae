package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
)

// maxReportTrials bounds the trials a report lists per experiment; the
// outcome counts per variant cover them all.
const maxReportTrials = 500

// InvestigationReport is the result of `flameox evidence summarize` and
// MCP summarize_investigation: an investigation from its question to its
// findings, every number with the ids that let a reviewer check it, read
// in one session at one pinned commit. Everything in it comes from the
// corpus in a fixed order, so rebuilding the catalog gives the same report.
type InvestigationReport struct {
	SchemaVersion  int                  `json:"schema_version"`
	Query          string               `json:"query"`
	CorpusCommitID string               `json:"corpus_commit_id"`
	Investigation  InvestigationSummary `json:"investigation"`
	Hypotheses     []HypothesisSummary  `json:"hypotheses"`
	Experiments    []ExperimentReport   `json:"experiments"`
	Comparisons    []RecordedComparison `json:"comparisons"`
	Analyses       []RecordedAnalysis   `json:"analyses"`
	Findings       []ReportFinding      `json:"findings"`
	Limitations    []string             `json:"limitations"`
}

// ExperimentReport is one experiment of a report: its design and decision
// rule, each variant's outcomes, its run sets and its trials.
type ExperimentReport struct {
	ExperimentID       string              `json:"experiment_id"`
	HypothesisID       string              `json:"hypothesis_id,omitempty"`
	DesignID           string              `json:"experiment_design_id"`
	WorkloadDefinition string              `json:"workload_definition_id"`
	ProtocolID         string              `json:"measurement_protocol_id"`
	PrimaryMetric      string              `json:"primary_metric"`
	Polarity           string              `json:"polarity"`
	Estimand           string              `json:"estimand"`
	PracticalThreshold float64             `json:"practical_threshold"`
	ConfidenceLevel    float64             `json:"confidence_level"`
	RandomSeed         uint64              `json:"random_seed"`
	StoppingRule       json.RawMessage     `json:"stopping_rule"`
	CreatedAt          time.Time           `json:"created_at"`
	Variants           []ExperimentVariant `json:"variants"`
	RunSets            []RunSetSummary     `json:"run_sets"`
	TrialsTotal        int                 `json:"trials_total"`
	TrialsTruncated    bool                `json:"trials_truncated"`
	Trials             []ExperimentTrial   `json:"trials"`
}

// RecordedComparison is a published comparison (the comparisons table,
// latest revision).
type RecordedComparison struct {
	ComparisonID       string   `json:"comparison_id"`
	ExperimentID       string   `json:"experiment_id,omitempty"`
	BaselineRunSetID   string   `json:"baseline_run_set_id"`
	CandidateRunSetID  string   `json:"candidate_run_set_id"`
	Metric             string   `json:"metric"`
	Unit               string   `json:"unit"`
	Polarity           string   `json:"polarity"`
	Estimand           string   `json:"estimand"`
	PracticalThreshold float64  `json:"practical_threshold"`
	RelativeChange     *float64 `json:"relative_change,omitempty"`
	ConfidenceLow      *float64 `json:"confidence_low,omitempty"`
	ConfidenceHigh     *float64 `json:"confidence_high,omitempty"`
	ConfidenceLevel    *float64 `json:"confidence_level,omitempty"`
	Method             string   `json:"method"`
	Decision           string   `json:"decision"`
	Validity           string   `json:"validity"`
	Mismatches         []string `json:"mismatches"`
	BaselineAttempted  uint64   `json:"baseline_attempted_n"`
	BaselineEligible   uint64   `json:"baseline_eligible_n"`
	BaselineFailed     uint64   `json:"baseline_failed_n"`
	BaselineExcluded   uint64   `json:"baseline_excluded_n"`
	CandidateAttempted uint64   `json:"candidate_attempted_n"`
	CandidateEligible  uint64   `json:"candidate_eligible_n"`
	CandidateFailed    uint64   `json:"candidate_failed_n"`
	CandidateExcluded  uint64   `json:"candidate_excluded_n"`
	Pairs              *uint64  `json:"complete_pair_n,omitempty"`
}

// RecordedAnalysis is a published analysis (the analyses table) that read
// this investigation's runs or backs one of its comparisons.
type RecordedAnalysis struct {
	AnalysisID       string          `json:"analysis_id"`
	Recipe           string          `json:"recipe"`
	RecipeVersion    string          `json:"recipe_version"`
	CorpusCommitID   string          `json:"corpus_commit_id"`
	Parameters       json.RawMessage `json:"parameters"`
	ResultDigest     string          `json:"result_digest"`
	ResultArtifactID string          `json:"result_artifact_id,omitempty"`
	InputRuns        int             `json:"input_run_count"`
	Limitations      []string        `json:"limitations"`
}

// ReportFinding is a finding's latest revision that cites this
// investigation's evidence, with what it cites.
type ReportFinding struct {
	FindingID     string      `json:"finding_id"`
	Revision      int32       `json:"revision"`
	Kind          string      `json:"kind"`
	Title         string      `json:"title"`
	Claim         string      `json:"claim"`
	EvidenceLevel string      `json:"evidence_level"`
	Confidence    string      `json:"confidence"`
	Assessment    string      `json:"assessment"`
	Lifecycle     string      `json:"lifecycle"`
	Limitations   []string    `json:"limitations"`
	Evidence      []ReportRef `json:"evidence"`
}

// ReportRef is one evidence reference of a finding.
type ReportRef struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Relation string `json:"relation"`
}

// scope is the set of ids an investigation owns, as a CTE every report
// query starts from: its experiments, their runs and run sets, its
// hypotheses and the comparisons made on them.
const scope = `WITH ex AS (SELECT experiment_id FROM experiments WHERE investigation_id = $1),
tr AS (SELECT DISTINCT t.run_id FROM trials t WHERE t.experiment_id IN (SELECT experiment_id FROM ex) AND t.run_id IS NOT NULL),
rs AS (SELECT run_set_id FROM run_sets WHERE json_extract_string(selection_json, '$.experiment_id') IN (SELECT experiment_id FROM ex)),
cmp AS (SELECT * FROM comparisons c WHERE c.experiment_id IN (SELECT experiment_id FROM ex)
          OR c.baseline_run_set_id IN (SELECT run_set_id FROM rs) OR c.candidate_run_set_id IN (SELECT run_set_id FROM rs)
        QUALIFY row_number() OVER (PARTITION BY c.comparison_id ORDER BY c.published_at DESC) = 1),
an AS (SELECT a.* FROM analyses a
       WHERE list_has_any(a.input_run_ids, (SELECT coalesce(list(run_id), []::VARCHAR[]) FROM tr))
          OR a.analysis_id IN (SELECT ref_id FROM evidence_refs WHERE owner_type = 'comparison' AND ref_type = 'analysis'
                               AND owner_id IN (SELECT comparison_id FROM cmp))
       QUALIFY row_number() OVER (PARTITION BY a.analysis_id ORDER BY a.published_at DESC) = 1),
ids AS (SELECT $1 AS id UNION SELECT experiment_id FROM ex UNION SELECT run_id FROM tr UNION SELECT run_set_id FROM rs
        UNION SELECT comparison_id FROM cmp UNION SELECT analysis_id FROM an
        UNION SELECT hypothesis_id FROM hypotheses WHERE investigation_id = $1)
`

var (
	qReportExperiments = catalog.Query{Name: "report.experiments", Version: "1", SQL: `
SELECT e.experiment_id, coalesce(e.hypothesis_id, ''), e.experiment_design_id, e.workload_definition_id, e.measurement_protocol_id,
       e.primary_metric, e.polarity, e.estimand, e.practical_threshold, e.confidence_level, e.random_seed, e.stopping_rule_json, e.created_at
FROM experiments e WHERE e.investigation_id = $1
QUALIFY row_number() OVER (PARTITION BY e.experiment_id ORDER BY e.published_at DESC) = 1
ORDER BY e.created_at, e.experiment_id`}
	qReportComparisons = catalog.Query{Name: "report.comparisons", Version: "1", SQL: scope + `
SELECT comparison_id, coalesce(experiment_id, ''), baseline_run_set_id, candidate_run_set_id, metric, unit, polarity, estimand,
       practical_threshold, relative_change, confidence_low, confidence_high, confidence_level, method, decision, validity,
       to_json(mismatches)::VARCHAR, baseline_attempted_n, baseline_eligible_n, baseline_failed_n, baseline_excluded_n,
       candidate_attempted_n, candidate_eligible_n, candidate_failed_n, candidate_excluded_n, complete_pair_n
FROM cmp ORDER BY metric, comparison_id`}
	qReportAnalyses = catalog.Query{Name: "report.analyses", Version: "1", SQL: scope + `
SELECT analysis_id, recipe, recipe_version, corpus_commit_id, parameters_json, result_digest, coalesce(result_artifact_id, ''),
       len(input_run_ids), to_json(limitations)::VARCHAR
FROM an ORDER BY recipe, analysis_id`}
	qReportFindings = catalog.Query{Name: "report.findings", Version: "1", SQL: scope + `,
f AS (SELECT * FROM findings QUALIFY row_number() OVER (PARTITION BY finding_id ORDER BY revision DESC, published_at DESC) = 1),
cited AS (SELECT DISTINCT owner_id FROM evidence_refs WHERE owner_type = 'finding' AND ref_id IN (SELECT id FROM ids))
SELECT f.finding_id, f.revision, f.kind, f.title, f.claim, f.evidence_level, f.confidence, f.assessment, f.lifecycle, to_json(f.limitations)::VARCHAR,
       coalesce((SELECT list({'t': r.ref_type, 'i': r.ref_id, 'r': r.relation} ORDER BY r.ref_type, r.ref_id, r.relation)
                 FROM (SELECT DISTINCT ref_type, ref_id, relation, owner_id, owner_type FROM evidence_refs) r
                 WHERE r.owner_type = 'finding' AND r.owner_id = f.finding_id)::JSON, '[]')::VARCHAR
FROM f WHERE f.finding_id IN (SELECT owner_id FROM cited) ORDER BY f.finding_id`}
)

// SummarizeInvestigation reads an investigation's report at HEAD.
func SummarizeInvestigation(ctx context.Context, ws *workspace.Workspace, id string) (*InvestigationReport, error) {
	if id == "" {
		return nil, fault.New(fault.InvalidArguments, "a summary needs the investigation id").With("field", "investigation_id")
	}
	return with(ctx, ws, func(s *Session) (*InvestigationReport, error) {
		res := &InvestigationReport{SchemaVersion: 1, Query: qReportExperiments.ID(), CorpusCommitID: s.Commit(),
			Hypotheses: []HypothesisSummary{}, Experiments: []ExperimentReport{}, Comparisons: []RecordedComparison{},
			Analyses: []RecordedAnalysis{}, Findings: []ReportFinding{}, Limitations: []string{}}
		var err error
		if res.Investigation, err = s.investigation(ctx, id); err != nil {
			return nil, err
		}
		var truncated bool
		if res.Hypotheses, truncated, err = s.hypotheses(ctx, id); err != nil {
			return nil, err
		}
		if truncated {
			res.Limitations = append(res.Limitations, fmt.Sprintf("only the first %d hypotheses are listed", MaxLimit))
		}
		if err := s.R.Scan(ctx, qReportExperiments, []any{id}, func(rows *sql.Rows) error {
			for rows.Next() {
				var e ExperimentReport
				var stop string
				if err := rows.Scan(&e.ExperimentID, &e.HypothesisID, &e.DesignID, &e.WorkloadDefinition, &e.ProtocolID, &e.PrimaryMetric,
					&e.Polarity, &e.Estimand, &e.PracticalThreshold, &e.ConfidenceLevel, &e.RandomSeed, &stop, &e.CreatedAt); err != nil {
					return err
				}
				e.StoppingRule, e.CreatedAt = rawJSON(stop), e.CreatedAt.UTC()
				res.Experiments = append(res.Experiments, e)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		for i := range res.Experiments {
			if err := s.experimentReport(ctx, &res.Experiments[i]); err != nil {
				return nil, err
			}
		}
		if err := s.R.Scan(ctx, qReportComparisons, []any{id}, func(rows *sql.Rows) error {
			for rows.Next() {
				var c RecordedComparison
				var mism string
				if err := rows.Scan(&c.ComparisonID, &c.ExperimentID, &c.BaselineRunSetID, &c.CandidateRunSetID, &c.Metric, &c.Unit,
					&c.Polarity, &c.Estimand, &c.PracticalThreshold, &c.RelativeChange, &c.ConfidenceLow, &c.ConfidenceHigh,
					&c.ConfidenceLevel, &c.Method, &c.Decision, &c.Validity, &mism, &c.BaselineAttempted, &c.BaselineEligible,
					&c.BaselineFailed, &c.BaselineExcluded, &c.CandidateAttempted, &c.CandidateEligible, &c.CandidateFailed,
					&c.CandidateExcluded, &c.Pairs); err != nil {
					return err
				}
				c.Mismatches = jsonStrings(mism)
				res.Comparisons = append(res.Comparisons, c)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := s.R.Scan(ctx, qReportAnalyses, []any{id}, func(rows *sql.Rows) error {
			for rows.Next() {
				var a RecordedAnalysis
				var params string
				var lim string
				if err := rows.Scan(&a.AnalysisID, &a.Recipe, &a.RecipeVersion, &a.CorpusCommitID, &params, &a.ResultDigest,
					&a.ResultArtifactID, &a.InputRuns, &lim); err != nil {
					return err
				}
				a.Parameters, a.Limitations = rawJSON(params), jsonStrings(lim)
				res.Analyses = append(res.Analyses, a)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := s.R.Scan(ctx, qReportFindings, []any{id}, func(rows *sql.Rows) error {
			for rows.Next() {
				var f ReportFinding
				var lim string
				var refs string
				if err := rows.Scan(&f.FindingID, &f.Revision, &f.Kind, &f.Title, &f.Claim, &f.EvidenceLevel, &f.Confidence,
					&f.Assessment, &f.Lifecycle, &lim, &refs); err != nil {
					return err
				}
				f.Limitations = jsonStrings(lim)
				var rs []struct{ T, I, R string }
				if err := json.Unmarshal([]byte(refs), &rs); err != nil {
					return fault.Wrap(fault.InternalError, err, "reading finding %s's evidence", f.FindingID)
				}
				f.Evidence = []ReportRef{}
				for _, r := range rs {
					f.Evidence = append(f.Evidence, ReportRef{Type: r.T, ID: r.I, Relation: r.R})
				}
				res.Findings = append(res.Findings, f)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if len(res.Experiments) == 0 {
			res.Limitations = append(res.Limitations, "no experiment belongs to this investigation yet")
		}
		if len(res.Comparisons) == 0 {
			res.Limitations = append(res.Limitations, "no comparison is recorded for it (flameox analyze record-comparison)")
		}
		if len(res.Findings) == 0 {
			res.Limitations = append(res.Limitations, "no finding cites its evidence")
		}
		return res, nil
	})
}

// experimentReport fills one experiment's variants, run sets and trials.
func (s *Session) experimentReport(ctx context.Context, e *ExperimentReport) error {
	var err error
	if e.Variants, err = s.experimentVariants(ctx, e.ExperimentID); err != nil {
		return err
	}
	if e.RunSets, err = s.experimentRunSets(ctx, e.ExperimentID); err != nil {
		return err
	}
	if e.Trials, e.TrialsTruncated, err = s.experimentTrials(ctx, e.ExperimentID, "", maxReportTrials, 0); err != nil {
		return err
	}
	n, err := count(ctx, s, qExperimentTrialsCount, []any{e.ExperimentID, ""})
	e.TrialsTotal = int(n)
	return err
}

// jsonStrings reads a list of strings the query gave as JSON text (NULL
// or anything else reads as none).
func jsonStrings(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil || out == nil {
		return []string{}
	}
	return out
}
