package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// Findings as published (SPEC §7): one findings row per revision, the
// highest current; their evidence in evidence_refs (owner_type finding),
// accumulated across revisions.

// FindingRevision is one revision of a finding.
type FindingRevision struct {
	Revision        int32     `json:"revision"`
	Kind            string    `json:"kind"`
	Title           string    `json:"title"`
	Claim           string    `json:"claim"`
	EvidenceLevel   string    `json:"evidence_level"`
	Confidence      string    `json:"confidence"`
	Assessment      string    `json:"assessment"`
	Lifecycle       string    `json:"lifecycle"`
	Limitations     []string  `json:"limitations"`
	NextExperiments []string  `json:"next_experiments"`
	CreatedAt       time.Time `json:"created_at"`
}

// FindingSummary is a finding at its latest revision, with how many
// revisions it has.
type FindingSummary struct {
	FindingID string `json:"finding_id"`
	Revisions int64  `json:"revisions"`
	FindingRevision
}

// FindingList is the result of `flameox findings list` and MCP
// list_findings.
type FindingList struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	Page
	Findings []FindingSummary `json:"findings"`
}

// ListFindingsRequest filters (on the latest revision) and pages the list.
type ListFindingsRequest struct {
	Kind       string `json:"kind,omitempty" jsonschema:"only findings of this kind"`
	Assessment string `json:"assessment,omitempty" jsonschema:"only findings with this assessment"`
	Limit      int    `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// FindingRef is one reference of a finding. A commit reference (relation
// input) names the commit at which a revision's references were found.
type FindingRef struct {
	RefType  string `json:"ref_type"`
	RefID    string `json:"ref_id"`
	Relation string `json:"relation"`
}

// FindingDetail is the result of `flameox findings show` and MCP
// get_finding: the current revision, the finding's evidence (sorted, at
// most MaxLimit), and its revisions newest first (Page counts them).
type FindingDetail struct {
	SchemaVersion     int             `json:"schema_version"`
	Query             string          `json:"query"`
	CorpusCommitID    string          `json:"corpus_commit_id"`
	FindingID         string          `json:"finding_id"`
	Current           int32           `json:"current_revision"`
	Finding           FindingRevision `json:"finding"`
	EvidenceTotal     int64           `json:"evidence_total"`
	EvidenceTruncated bool            `json:"evidence_truncated"`
	Evidence          []FindingRef    `json:"evidence"`
	Page
	Revisions []FindingRevision `json:"revisions"`
}

// GetFindingRequest names a finding and bounds its revisions.
type GetFindingRequest struct {
	FindingID string `json:"finding_id" jsonschema:"finding id"`
	Limit     int    `json:"limit,omitempty" jsonschema:"revisions to return, newest first (default 50, max 1000)"`
}

const findingCols = `f.revision, f.kind, f.title, f.claim, f.evidence_level, f.confidence, f.assessment, f.lifecycle,
       to_json(f.limitations)::VARCHAR, f.next_experiments_json, f.created_at`

var (
	qFindingsList = catalog.Query{Name: "findings.list", Version: "1", SQL: `
WITH latest AS (
SELECT f.*, count(*) OVER (PARTITION BY f.finding_id) AS n
FROM findings f
QUALIFY row_number() OVER (PARTITION BY f.finding_id ORDER BY f.revision DESC, f.published_at DESC) = 1)
SELECT f.finding_id, f.n, ` + findingCols + `, epoch_us(f.created_at)
FROM latest f
WHERE ($1 = '' OR f.kind = $1) AND ($2 = '' OR f.assessment = $2)
  AND ($3::BIGINT IS NULL OR epoch_us(f.created_at) < $3 OR (epoch_us(f.created_at) = $3 AND f.finding_id < $4))
ORDER BY f.created_at DESC, f.finding_id DESC LIMIT $5`}
	qFindingsCount = catalog.Query{Name: "findings.count", Version: "1", SQL: `
SELECT count(*) FROM (SELECT f.kind, f.assessment FROM findings f
QUALIFY row_number() OVER (PARTITION BY f.finding_id ORDER BY f.revision DESC, f.published_at DESC) = 1)
WHERE ($1 = '' OR kind = $1) AND ($2 = '' OR assessment = $2)`}
	qFindingRevisions = catalog.Query{Name: "findings.get", Version: "1", SQL: `
SELECT ` + findingCols + `, count(*) OVER (), max(f.revision) OVER ()
FROM findings f WHERE f.finding_id = $1
ORDER BY f.revision DESC, f.published_at DESC LIMIT $2`}
	qFindingRefs = catalog.Query{Name: "findings.refs", Version: "1", SQL: `
SELECT ref_type, ref_id, relation, count(*) OVER ()
FROM (SELECT DISTINCT ref_type, ref_id, relation FROM evidence_refs WHERE owner_type = 'finding' AND owner_id = $1)
ORDER BY ref_type, ref_id, relation LIMIT $2`}
	qFindingComparison = catalog.Query{Name: "findings.comparison", Version: "1", SQL: `
SELECT c.comparison_id, coalesce(c.experiment_id, ''), c.validity, c.decision, c.metric, c.estimand, c.practical_threshold,
       to_json(c.mismatches)::VARCHAR, c.baseline_run_set_id, c.candidate_run_set_id
FROM comparisons c WHERE c.comparison_id = $1 ORDER BY c.published_at DESC LIMIT 1`}
	qFindingExperiment = catalog.Query{Name: "findings.experiment", Version: "1", SQL: `
SELECT e.primary_metric, e.estimand, e.practical_threshold FROM experiments e WHERE e.experiment_id = $1 LIMIT 1`}
	qFindingSetMembers = catalog.Query{Name: "findings.set_members", Version: "1", SQL: `
SELECT r.members_json FROM run_sets r WHERE r.run_set_id = $1 LIMIT 1`}
	qFindingTrials = catalog.Query{Name: "findings.trials", Version: "1", SQL: `
SELECT t.trial_id, coalesce(t.run_id, ''), t.outcome, coalesce(t.exclusion_reason, ''), t.validation_status
FROM ` + trialsLatest + ` t WHERE t.experiment_id = $1 ORDER BY t.trial_id LIMIT $2`}
)

func scanFindingRevision(r *FindingRevision, limitations, next *string) []any {
	return []any{&r.Revision, &r.Kind, &r.Title, &r.Claim, &r.EvidenceLevel, &r.Confidence, &r.Assessment, &r.Lifecycle,
		limitations, next, &r.CreatedAt}
}

func (r *FindingRevision) finish(limitations, next string) {
	r.CreatedAt = r.CreatedAt.UTC()
	r.Limitations, r.NextExperiments = stringList(limitations), stringList(next)
}

// stringList reads a JSON list of strings; anything else reads as none.
func stringList(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil || out == nil {
		return []string{}
	}
	return out
}

// ListFindings lists findings at their latest revision, newest first.
func ListFindings(ctx context.Context, ws *workspace.Workspace, req ListFindingsRequest) (*FindingList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*FindingList, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qFindingsList, filters, "created_at desc, finding_id desc", req.Cursor)
		if err != nil {
			return nil, err
		}
		afterUS, afterID, err := timeKey(key)
		if err != nil {
			return nil, err
		}
		res := &FindingList{SchemaVersion: 1, Query: qFindingsList.ID(), CorpusCommitID: s.Commit(), Findings: []FindingSummary{}}
		var lastUS int64
		err = s.R.Scan(ctx, qFindingsList, []any{req.Kind, req.Assessment, afterUS, afterID, limit + 1}, func(rows *sql.Rows) error {
			for rows.Next() {
				var f FindingSummary
				var lim, next string
				var us int64
				dst := append([]any{&f.FindingID, &f.Revisions}, scanFindingRevision(&f.FindingRevision, &lim, &next)...)
				if err := rows.Scan(append(dst, &us)...); err != nil {
					return err
				}
				if len(res.Findings) == limit {
					res.Truncated = true
					break
				}
				f.finish(lim, next)
				res.Findings = append(res.Findings, f)
				lastUS = us
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.Findings)
		if res.Truncated {
			want.Key = []string{strconv.FormatInt(lastUS, 10), res.Findings[len(res.Findings)-1].FindingID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qFindingsCount, []any{req.Kind, req.Assessment})
		return res, err
	})
}

// GetFinding returns a finding: its current revision, evidence and
// revisions, newest first.
func GetFinding(ctx context.Context, ws *workspace.Workspace, req GetFindingRequest) (*FindingDetail, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*FindingDetail, error) {
		res := &FindingDetail{SchemaVersion: 1, Query: qFindingRevisions.ID(), CorpusCommitID: s.Commit(), FindingID: req.FindingID,
			Evidence: []FindingRef{}, Revisions: []FindingRevision{}}
		revs, total, current, err := s.findingRevisions(ctx, req.FindingID, limit)
		if err != nil {
			return nil, err
		}
		if total == 0 {
			return nil, notFoundInquiry("finding", req.FindingID, "findings list", "list_findings")
		}
		res.Total, res.Current = total, current
		if len(revs) > limit {
			revs, res.Truncated = revs[:limit], true
		}
		res.Revisions, res.Returned = revs, len(revs)
		res.Finding = revs[0]
		res.Evidence, res.EvidenceTotal, err = s.findingRefs(ctx, req.FindingID)
		res.EvidenceTruncated = int64(len(res.Evidence)) < res.EvidenceTotal
		return res, err
	})
}

// findingRevisions reads up to limit+1 revisions of id, newest first,
// with how many there are and the latest revision number.
func (s *Session) findingRevisions(ctx context.Context, id string, limit int) ([]FindingRevision, int64, int32, error) {
	var out []FindingRevision
	var total int64
	var current int32
	err := s.R.Scan(ctx, qFindingRevisions, []any{id, limit + 1}, func(rows *sql.Rows) error {
		for rows.Next() {
			var r FindingRevision
			var lim, next string
			if err := rows.Scan(append(scanFindingRevision(&r, &lim, &next), &total, &current)...); err != nil {
				return err
			}
			r.finish(lim, next)
			out = append(out, r)
		}
		return nil
	})
	return out, total, current, err
}

func (s *Session) findingRefs(ctx context.Context, id string) ([]FindingRef, int64, error) {
	out := []FindingRef{}
	var total int64
	err := s.R.Scan(ctx, qFindingRefs, []any{id, MaxLimit}, func(rows *sql.Rows) error {
		for rows.Next() {
			var r FindingRef
			if err := rows.Scan(&r.RefType, &r.RefID, &r.Relation, &total); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, total, err
}

// FindingFacts is what the corpus at one commit says about a finding
// revision to be recorded: the revision it replaces, the references
// already recorded, which of the new references do not exist, and for
// every comparison cited what SPEC §7's rule for `supported` reads.
type FindingFacts struct {
	CorpusCommitID string
	// Current is the finding's latest revision (0: none); Previous the
	// expected revision's row, when it exists.
	Current  int32
	Previous *FindingRevision
	Recorded []inquiry.EvidenceRef // without commit references
	Missing  []inquiry.EvidenceRef
	// Comparisons maps each cited comparison id that exists to its facts.
	Comparisons map[string]*ComparisonFacts
}

// ComparisonFacts is a recorded comparison as the supported rule reads
// it: its validity, decision, estimand, threshold and mismatches; the
// experiment its run sets belong to, with what it declared; and the
// latest row of each trial of that experiment that produced a compared
// run, with the oracle strength its run recorded.
type ComparisonFacts struct {
	ComparisonID string
	ExperimentID string
	Validity     string
	Decision     string
	Metric       string
	Estimand     string
	Threshold    float64
	Mismatches   []string
	// Declared is nil when the experiment is not in the corpus.
	Declared *DeclaredExperiment
	Trials   []ComparedTrial
	// RunsWithoutTrial counts compared runs no trial of the experiment ran.
	RunsWithoutTrial int
}

// DeclaredExperiment is what an experiment declared before collection.
type DeclaredExperiment struct {
	Metric    string // primary metric
	Estimand  string
	Threshold float64
}

// ComparedTrial is one trial behind a compared run.
type ComparedTrial struct {
	TrialID, RunID, Outcome, ExclusionReason, ValidationStatus string
	// OracleStrength is the oracle strength the run's validation recorded
	// ("" when none ran).
	OracleStrength string
}

// maxComparedTrials bounds the trials one comparison's facts read.
const maxComparedTrials = 100000

// GetFindingFacts reads, at HEAD, what recording a revision of finding id
// that replaces revision expected and cites refs depends on.
func GetFindingFacts(ctx context.Context, ws *workspace.Workspace, id string, expected int32, refs []inquiry.EvidenceRef) (*FindingFacts, error) {
	return with(ctx, ws, func(s *Session) (*FindingFacts, error) {
		f := &FindingFacts{CorpusCommitID: s.Commit(), Comparisons: map[string]*ComparisonFacts{}}
		if id != "" {
			revs, _, current, err := s.findingRevisions(ctx, id, MaxLimit)
			if err != nil {
				return nil, err
			}
			f.Current = current
			for i := range revs {
				if revs[i].Revision == expected {
					f.Previous = &revs[i]
				}
			}
			recorded, _, err := s.findingRefs(ctx, id)
			if err != nil {
				return nil, err
			}
			for _, r := range recorded {
				if r.RefType != "commit" {
					f.Recorded = append(f.Recorded, inquiry.EvidenceRef{RefType: r.RefType, RefID: r.RefID, Relation: r.Relation})
				}
			}
		}
		for _, r := range refs {
			ok, err := s.exists(ctx, r)
			if err != nil {
				return nil, err
			}
			if !ok {
				f.Missing = append(f.Missing, r)
			}
		}
		for _, r := range append(append([]inquiry.EvidenceRef{}, f.Recorded...), refs...) {
			if r.RefType != "comparison" || f.Comparisons[r.RefID] != nil {
				continue
			}
			c, err := s.comparisonFacts(ctx, r.RefID)
			if err != nil {
				return nil, err
			}
			if c != nil {
				f.Comparisons[r.RefID] = c
			}
		}
		return f, nil
	})
}

// exists reports whether ref names evidence at the session's commit: a
// published run, a registered artifact, a generation (live or compacted
// away), or a row of its table.
func (s *Session) exists(ctx context.Context, ref inquiry.EvidenceRef) (bool, error) {
	var err error
	switch ref.RefType {
	case "run":
		var d *RunDetail
		if !run.ValidID(ref.RefID) {
			return false, nil
		}
		if d, err = s.showRun(ctx, ref.RefID); err == nil && !d.Published {
			return false, nil
		}
	case "artifact":
		var d *ArtifactDetail
		if d, err = s.showArtifact(ctx, ref.RefID); err == nil && d.RegistrationsTotal == 0 {
			return false, nil
		}
	case "generation":
		_, _, err = s.generation(ref.RefID)
	default:
		if _, ok := refTables[ref.RefType]; !ok {
			return false, nil
		}
		err = s.row(ctx, &EvidenceResult{RefType: ref.RefType, RefID: ref.RefID})
	}
	if fault.Is(err, fault.NotFound) || fault.Is(err, fault.InvalidArguments) {
		return false, nil
	}
	return err == nil, err
}

// comparisonFacts reads one recorded comparison's facts, nil when the
// corpus has no such comparison.
func (s *Session) comparisonFacts(ctx context.Context, id string) (*ComparisonFacts, error) {
	var c *ComparisonFacts
	var sets [2]string
	err := s.R.Scan(ctx, qFindingComparison, []any{id}, func(rows *sql.Rows) error {
		for rows.Next() {
			c = &ComparisonFacts{}
			var mm string
			if err := rows.Scan(&c.ComparisonID, &c.ExperimentID, &c.Validity, &c.Decision, &c.Metric, &c.Estimand, &c.Threshold, &mm, &sets[0], &sets[1]); err != nil {
				return err
			}
			c.Mismatches = stringList(mm)
		}
		return nil
	})
	if err != nil || c == nil || c.ExperimentID == "" {
		return c, err
	}
	err = s.R.Scan(ctx, qFindingExperiment, []any{c.ExperimentID}, func(rows *sql.Rows) error {
		for rows.Next() {
			d := &DeclaredExperiment{}
			if err := rows.Scan(&d.Metric, &d.Estimand, &d.Threshold); err != nil {
				return err
			}
			c.Declared = d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The compared runs (and trials, when the sets name them).
	runs, trials := map[string]bool{}, map[string]bool{}
	for _, set := range sets {
		err := s.R.Scan(ctx, qFindingSetMembers, []any{set}, func(rows *sql.Rows) error {
			for rows.Next() {
				var mj string
				if err := rows.Scan(&mj); err != nil {
					return err
				}
				ms, err := inquiry.DecodeMembers(mj)
				if err != nil {
					return fault.Wrap(fault.ArtifactIntegrityFailed, err, "run set %s: members_json", set)
				}
				for _, m := range ms {
					runs[m.RunID] = true
					if m.TrialID != "" {
						trials[m.TrialID] = true
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	ran := map[string]bool{}
	err = s.R.Scan(ctx, qFindingTrials, []any{c.ExperimentID, maxComparedTrials}, func(rows *sql.Rows) error {
		for rows.Next() {
			var t ComparedTrial
			if err := rows.Scan(&t.TrialID, &t.RunID, &t.Outcome, &t.ExclusionReason, &t.ValidationStatus); err != nil {
				return err
			}
			if trials[t.TrialID] || (t.RunID != "" && runs[t.RunID]) {
				c.Trials = append(c.Trials, t)
				ran[t.RunID] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for r := range runs {
		if !ran[r] {
			c.RunsWithoutTrial++
		}
	}
	store := &run.Store{Root: s.WS.Root}
	for i := range c.Trials {
		t := &c.Trials[i]
		if t.RunID == "" || !run.ValidID(t.RunID) {
			continue
		}
		m, err := store.Get(t.RunID)
		if err != nil {
			return nil, err
		}
		if m.Validation != nil {
			t.OracleStrength = m.Validation.Strength
		}
	}
	return c, nil
}
