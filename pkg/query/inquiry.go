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
	"github.com/flameox/flameox/pkg/workspace"
)

// Investigations, hypotheses and run sets as published (SPEC §7). A
// hypothesis has one row per revision; these queries take the highest
// revision as current and count the others. Investigation and run set ids
// are unique: the publisher refuses a second row under its write lock.

// InvestigationSummary is one investigation.
type InvestigationSummary struct {
	InvestigationID       string    `json:"investigation_id"`
	Question              string    `json:"question"`
	Symptom               string    `json:"symptom,omitempty"`
	ProjectRoot           string    `json:"project_root"`
	Status                string    `json:"status"`
	ParentInvestigationID string    `json:"parent_investigation_id,omitempty"`
	CreatedAt             time.Time `json:"created_at"`
	HypothesisCount       int64     `json:"hypothesis_count"`
}

// InvestigationList is the result of `flameox investigations list` and MCP
// list_investigations.
type InvestigationList struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	Page
	Investigations []InvestigationSummary `json:"investigations"`
}

// ListInvestigationsRequest filters and pages the list.
type ListInvestigationsRequest struct {
	Status string `json:"status,omitempty" jsonschema:"open or closed"`
	Limit  int    `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// HypothesisRevision is one revision of a hypothesis.
type HypothesisRevision struct {
	Revision                int32     `json:"revision"`
	Claim                   string    `json:"claim"`
	Prediction              string    `json:"prediction"`
	DiscriminatingCondition string    `json:"discriminating_condition"`
	Assessment              string    `json:"assessment"`
	Lifecycle               string    `json:"lifecycle"`
	CreatedAt               time.Time `json:"created_at"`
}

// HypothesisSummary is a hypothesis at its latest revision, with how many
// revisions it has.
type HypothesisSummary struct {
	HypothesisID    string `json:"hypothesis_id"`
	InvestigationID string `json:"investigation_id"`
	Revisions       int64  `json:"revisions"`
	HypothesisRevision
}

// InvestigationDetail is the result of `flameox investigations show` and
// MCP get_investigation: the investigation and its hypotheses (latest
// revision each, by id, at most MaxLimit).
type InvestigationDetail struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	InvestigationSummary
	HypothesesTruncated bool                `json:"hypotheses_truncated"`
	Hypotheses          []HypothesisSummary `json:"hypotheses"`
}

// HypothesisDetail is the result of `flameox hypotheses show` and MCP
// get_hypothesis: every revision, newest first. Current is the latest
// revision: a revision recorded next names it as its expected revision.
type HypothesisDetail struct {
	SchemaVersion   int    `json:"schema_version"`
	Query           string `json:"query"`
	CorpusCommitID  string `json:"corpus_commit_id"`
	HypothesisID    string `json:"hypothesis_id"`
	InvestigationID string `json:"investigation_id"`
	Current         int32  `json:"current_revision"`
	Page
	Revisions []HypothesisRevision `json:"revisions"`
}

// RunSetSummary is one frozen run set without its members.
type RunSetSummary struct {
	RunSetID         string          `json:"run_set_id"`
	CorpusCommitID   string          `json:"corpus_commit_id"`
	CreatedAt        time.Time       `json:"created_at"`
	Selection        json.RawMessage `json:"selection"`
	MemberCount      uint64          `json:"member_count"`
	MembershipDigest string          `json:"membership_digest"`
}

// RunSetList is the result of `flameox run-sets list` and MCP
// list_run_sets.
type RunSetList struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	Page
	RunSets []RunSetSummary `json:"run_sets"`
}

// ListRunSetsRequest pages the run-set list.
type ListRunSetsRequest struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// RunSetDetail is the result of `flameox run-sets show` and MCP
// get_run_set: the set and its first Limit members (sorted by run id);
// Page counts members. The corpus commit the set was frozen at is
// RunSet.CorpusCommitID; CorpusCommitID is the one this read pinned.
type RunSetDetail struct {
	SchemaVersion  int           `json:"schema_version"`
	Query          string        `json:"query"`
	CorpusCommitID string        `json:"corpus_commit_id"`
	RunSet         RunSetSummary `json:"run_set"`
	Page
	Members []inquiry.Member `json:"members"`
}

var (
	qInvestigationsList = catalog.Query{Name: "investigations.list", Version: "1", SQL: `
WITH page AS (
SELECT i.investigation_id, i.question, coalesce(i.symptom, '') AS symptom, i.project_root, i.status,
       coalesce(i.parent_investigation_id, '') AS parent, i.created_at, epoch_us(i.created_at) AS created_us
FROM investigations i
WHERE ($1 = '' OR i.status = $1)
  AND ($2::BIGINT IS NULL OR epoch_us(i.created_at) < $2 OR (epoch_us(i.created_at) = $2 AND i.investigation_id < $3))
ORDER BY i.created_at DESC, i.investigation_id DESC
LIMIT $4)
SELECT p.*, (SELECT count(DISTINCT h.hypothesis_id) FROM hypotheses h WHERE h.investigation_id = p.investigation_id)
FROM page p ORDER BY p.created_at DESC, p.investigation_id DESC`}
	qInvestigationsCount = catalog.Query{Name: "investigations.count", Version: "1",
		SQL: `SELECT count(*) FROM investigations i WHERE ($1 = '' OR i.status = $1)`}
	qInvestigationGet = catalog.Query{Name: "investigations.get", Version: "1", SQL: `
SELECT i.investigation_id, i.question, coalesce(i.symptom, '') AS symptom, i.project_root, i.status,
       coalesce(i.parent_investigation_id, '') AS parent, i.created_at, 0::BIGINT,
       (SELECT count(DISTINCT h.hypothesis_id) FROM hypotheses h WHERE h.investigation_id = i.investigation_id)
FROM investigations i WHERE i.investigation_id = $1 LIMIT 1`}
	qInvestigationHypotheses = catalog.Query{Name: "investigations.hypotheses", Version: "1", SQL: `
SELECT hypothesis_id, investigation_id, n, revision, claim, prediction, discriminating_condition, assessment, lifecycle, created_at
FROM (SELECT h.*, count(*) OVER (PARTITION BY h.hypothesis_id) AS n,
             row_number() OVER (PARTITION BY h.hypothesis_id ORDER BY h.revision DESC, h.published_at DESC) AS rn
      FROM hypotheses h WHERE h.investigation_id = $1)
WHERE rn = 1 ORDER BY hypothesis_id LIMIT $2`}
	qHypothesisRevisions = catalog.Query{Name: "hypotheses.get", Version: "1", SQL: `
SELECT h.hypothesis_id, h.investigation_id, h.revision, h.claim, h.prediction, h.discriminating_condition, h.assessment,
       h.lifecycle, h.created_at, count(*) OVER (), max(h.revision) OVER ()
FROM hypotheses h WHERE h.hypothesis_id = $1
ORDER BY h.revision DESC, h.published_at DESC LIMIT $2`}
	qRunSetsList = catalog.Query{Name: "run_sets.list", Version: "1", SQL: `
SELECT r.run_set_id, r.corpus_commit_id, r.created_at, r.selection_json, r.member_count, r.membership_digest, epoch_us(r.created_at)
FROM run_sets r
WHERE ($1::BIGINT IS NULL OR epoch_us(r.created_at) < $1 OR (epoch_us(r.created_at) = $1 AND r.run_set_id < $2))
ORDER BY r.created_at DESC, r.run_set_id DESC LIMIT $3`}
	qRunSetsCount = catalog.Query{Name: "run_sets.count", Version: "1", SQL: `SELECT count(*) FROM run_sets`}
	qRunSetGet    = catalog.Query{Name: "run_sets.get", Version: "1", SQL: `
SELECT r.run_set_id, r.corpus_commit_id, r.created_at, r.selection_json, r.member_count, r.membership_digest, r.members_json
FROM run_sets r WHERE r.run_set_id = $1 LIMIT 1`}
)

func scanInvestigation(rows *sql.Rows) (InvestigationSummary, error) {
	var i InvestigationSummary
	var us int64
	err := rows.Scan(&i.InvestigationID, &i.Question, &i.Symptom, &i.ProjectRoot, &i.Status,
		&i.ParentInvestigationID, &i.CreatedAt, &us, &i.HypothesisCount)
	i.CreatedAt = i.CreatedAt.UTC()
	return i, err
}

// ListInvestigations lists investigations, newest first.
func ListInvestigations(ctx context.Context, ws *workspace.Workspace, req ListInvestigationsRequest) (*InvestigationList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*InvestigationList, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qInvestigationsList, filters, "created_at desc, investigation_id desc", req.Cursor)
		if err != nil {
			return nil, err
		}
		afterUS, afterID, err := timeKey(key)
		if err != nil {
			return nil, err
		}
		res := &InvestigationList{SchemaVersion: 1, Query: qInvestigationsList.ID(), CorpusCommitID: s.Commit(), Investigations: []InvestigationSummary{}}
		var lastUS int64
		err = s.R.Scan(ctx, qInvestigationsList, []any{req.Status, afterUS, afterID, limit + 1}, func(rows *sql.Rows) error {
			for rows.Next() {
				var i InvestigationSummary
				var us int64
				if err := rows.Scan(&i.InvestigationID, &i.Question, &i.Symptom, &i.ProjectRoot, &i.Status,
					&i.ParentInvestigationID, &i.CreatedAt, &us, &i.HypothesisCount); err != nil {
					return err
				}
				if len(res.Investigations) == limit {
					res.Truncated = true
					break
				}
				i.CreatedAt = i.CreatedAt.UTC()
				res.Investigations = append(res.Investigations, i)
				lastUS = us
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.Investigations)
		if res.Truncated {
			want.Key = []string{strconv.FormatInt(lastUS, 10), res.Investigations[len(res.Investigations)-1].InvestigationID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qInvestigationsCount, []any{req.Status})
		return res, err
	})
}

// GetInvestigation returns one investigation with its hypotheses.
func GetInvestigation(ctx context.Context, ws *workspace.Workspace, id string) (*InvestigationDetail, error) {
	return with(ctx, ws, func(s *Session) (*InvestigationDetail, error) {
		res := &InvestigationDetail{SchemaVersion: 1, Query: qInvestigationGet.ID(), CorpusCommitID: s.Commit()}
		var err error
		if res.InvestigationSummary, err = s.investigation(ctx, id); err != nil {
			return nil, err
		}
		res.Hypotheses, res.HypothesesTruncated, err = s.hypotheses(ctx, id)
		return res, err
	})
}

// investigation reads one investigation; NOT_FOUND when there is none.
func (s *Session) investigation(ctx context.Context, id string) (InvestigationSummary, error) {
	var inv InvestigationSummary
	found := false
	err := s.R.Scan(ctx, qInvestigationGet, []any{id}, func(rows *sql.Rows) error {
		for rows.Next() {
			i, err := scanInvestigation(rows)
			if err != nil {
				return err
			}
			inv, found = i, true
		}
		return nil
	})
	if err == nil && !found {
		err = notFoundInquiry("investigation", id, "investigations list", "list_investigations")
	}
	return inv, err
}

// hypotheses reads the latest revision of an investigation's hypotheses
// (at most MaxLimit; truncated says more exist).
func (s *Session) hypotheses(ctx context.Context, id string) ([]HypothesisSummary, bool, error) {
	out, truncated := []HypothesisSummary{}, false
	err := s.R.Scan(ctx, qInvestigationHypotheses, []any{id, MaxLimit + 1}, func(rows *sql.Rows) error {
		for rows.Next() {
			var h HypothesisSummary
			if err := rows.Scan(&h.HypothesisID, &h.InvestigationID, &h.Revisions, &h.Revision, &h.Claim, &h.Prediction,
				&h.DiscriminatingCondition, &h.Assessment, &h.Lifecycle, &h.CreatedAt); err != nil {
				return err
			}
			if len(out) == MaxLimit {
				truncated = true
				break
			}
			h.CreatedAt = h.CreatedAt.UTC()
			out = append(out, h)
		}
		return nil
	})
	return out, truncated, err
}

// GetHypothesisRequest names a hypothesis and bounds its revisions.
type GetHypothesisRequest struct {
	HypothesisID string `json:"hypothesis_id" jsonschema:"hypothesis id"`
	Limit        int    `json:"limit,omitempty" jsonschema:"revisions to return, newest first (default 50, max 1000)"`
}

// GetHypothesis returns a hypothesis's revisions, newest first.
func GetHypothesis(ctx context.Context, ws *workspace.Workspace, req GetHypothesisRequest) (*HypothesisDetail, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*HypothesisDetail, error) {
		res := &HypothesisDetail{SchemaVersion: 1, Query: qHypothesisRevisions.ID(), CorpusCommitID: s.Commit(), Revisions: []HypothesisRevision{}}
		err := s.R.Scan(ctx, qHypothesisRevisions, []any{req.HypothesisID, limit + 1}, func(rows *sql.Rows) error {
			for rows.Next() {
				var r HypothesisRevision
				if err := rows.Scan(&res.HypothesisID, &res.InvestigationID, &r.Revision, &r.Claim, &r.Prediction,
					&r.DiscriminatingCondition, &r.Assessment, &r.Lifecycle, &r.CreatedAt, &res.Total, &res.Current); err != nil {
					return err
				}
				if len(res.Revisions) == limit {
					res.Truncated = true
					break
				}
				r.CreatedAt = r.CreatedAt.UTC()
				res.Revisions = append(res.Revisions, r)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if res.Total == 0 {
			return nil, notFoundInquiry("hypothesis", req.HypothesisID, "investigations show ID", "get_investigation")
		}
		res.Returned = len(res.Revisions)
		return res, nil
	})
}

// ListRunSets lists frozen run sets, newest first.
func ListRunSets(ctx context.Context, ws *workspace.Workspace, req ListRunSetsRequest) (*RunSetList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*RunSetList, error) {
		want, key, err := s.resume(qRunSetsList, struct{}{}, "created_at desc, run_set_id desc", req.Cursor)
		if err != nil {
			return nil, err
		}
		afterUS, afterID, err := timeKey(key)
		if err != nil {
			return nil, err
		}
		res := &RunSetList{SchemaVersion: 1, Query: qRunSetsList.ID(), CorpusCommitID: s.Commit(), RunSets: []RunSetSummary{}}
		var lastUS int64
		err = s.R.Scan(ctx, qRunSetsList, []any{afterUS, afterID, limit + 1}, func(rows *sql.Rows) error {
			for rows.Next() {
				var r RunSetSummary
				var sel string
				var us int64
				if err := rows.Scan(&r.RunSetID, &r.CorpusCommitID, &r.CreatedAt, &sel, &r.MemberCount, &r.MembershipDigest, &us); err != nil {
					return err
				}
				if len(res.RunSets) == limit {
					res.Truncated = true
					break
				}
				r.CreatedAt, r.Selection = r.CreatedAt.UTC(), rawJSON(sel)
				res.RunSets = append(res.RunSets, r)
				lastUS = us
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.RunSets)
		if res.Truncated {
			want.Key = []string{strconv.FormatInt(lastUS, 10), res.RunSets[len(res.RunSets)-1].RunSetID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qRunSetsCount, nil)
		return res, err
	})
}

// GetRunSetRequest names a run set and bounds its members.
type GetRunSetRequest struct {
	RunSetID string `json:"run_set_id" jsonschema:"run set id"`
	Limit    int    `json:"limit,omitempty" jsonschema:"members to return, by run id (default 50, max 1000)"`
}

// GetRunSet returns a run set and its first members.
func GetRunSet(ctx context.Context, ws *workspace.Workspace, req GetRunSetRequest) (*RunSetDetail, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*RunSetDetail, error) {
		res := &RunSetDetail{SchemaVersion: 1, Query: qRunSetGet.ID(), CorpusCommitID: s.Commit(), Members: []inquiry.Member{}}
		var members string
		found := false
		err := s.R.Scan(ctx, qRunSetGet, []any{req.RunSetID}, func(rows *sql.Rows) error {
			for rows.Next() {
				var sel string
				r := &res.RunSet
				if err := rows.Scan(&r.RunSetID, &r.CorpusCommitID, &r.CreatedAt, &sel, &r.MemberCount, &r.MembershipDigest, &members); err != nil {
					return err
				}
				r.CreatedAt, r.Selection, found = r.CreatedAt.UTC(), rawJSON(sel), true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, notFoundInquiry("run set", req.RunSetID, "run-sets list", "list_run_sets")
		}
		ms, err := inquiry.DecodeMembers(members)
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "run set %s: members_json", req.RunSetID)
		}
		ms = inquiry.SortMembers(ms)
		res.Total = int64(len(ms))
		if len(ms) > limit {
			ms, res.Truncated = ms[:limit], true
		}
		res.Members = append(res.Members, ms...)
		res.Returned = len(res.Members)
		return res, nil
	})
}

func rawJSON(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		b, _ := json.Marshal(s)
		return b
	}
	return json.RawMessage(s)
}

func notFoundInquiry(kind, id, command, tool string) error {
	return fault.New(fault.NotFound, "no %s %s in the published corpus", kind, id).With("missing_entity", kind).
		FixSteps("List them with %s.", fault.Step{Command: "flameox " + command, Tool: tool})
}
