package query

import (
	"context"
	"database/sql"
	"slices"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
)

// SetMember is one run of a frozen run set with what a comparison needs
// to judge it: its trial (block, outcome), the identities that must match
// across the comparison, and the median of its values of one metric.
type SetMember struct {
	RunID        string `json:"run_id"`
	TrialID      string `json:"trial_id,omitempty"`
	BlockID      string `json:"block_id,omitempty"`
	TrialOutcome string `json:"trial_outcome,omitempty"`
	// Factors are the trial's factor values (canonical JSON): a block
	// holds one trial of each combination, so pairs are matched on them.
	Factors          string   `json:"factors_json,omitempty"`
	ExecutionStatus  string   `json:"execution_status"`
	ValidationStatus string   `json:"validation_status"`
	SourceStateID    string   `json:"source_state_id,omitempty"`
	IdentityQuality  string   `json:"identity_quality,omitempty"`
	EnvironmentID    string   `json:"environment_id,omitempty"`
	DefinitionID     string   `json:"workload_definition_id,omitempty"`
	Adapter          string   `json:"adapter,omitempty"`
	CollectorVersion string   `json:"collector_version,omitempty"`
	ProtocolID       string   `json:"measurement_protocol_id,omitempty"`
	Values           int      `json:"values"`
	Median           *float64 `json:"median,omitempty"`
	Unit             string   `json:"unit,omitempty"`
}

// SetEvidence is a frozen run set read at the pinned HEAD for one metric.
type SetEvidence struct {
	RunSetID       string      `json:"run_set_id"`
	FrozenAt       string      `json:"frozen_at_commit"`
	CorpusCommitID string      `json:"corpus_commit_id"`
	Members        []SetMember `json:"members"`
}

var (
	qSetFrozen = catalog.Query{Name: "compare.set", Version: "1", SQL: `
SELECT r.corpus_commit_id FROM run_sets r WHERE r.run_set_id = $1 LIMIT 1`}
	// qSetMembers reads the members of one or two sets ($1, $4) with only
	// their own trials and measurements: the windows that keep each
	// trial's latest revision and the median run over the members, not
	// the corpus, and once for both sides of a comparison.
	qSetMembers = catalog.Query{Name: "compare.set_members", Version: "5", SQL: `
WITH m AS (
  SELECT r.run_set_id AS set_id, unnest(from_json(r.members_json, '[{"run_id":"VARCHAR","trial_id":"VARCHAR"}]'), recursive := true)
  FROM run_sets r WHERE r.run_set_id = $1 OR r.run_set_id = $4
), t AS (
  SELECT * FROM trials WHERE trial_id IN (SELECT trial_id FROM m)
  QUALIFY row_number() OVER (PARTITION BY trial_id ORDER BY published_at DESC) = 1
), x AS (
  -- measurements_current's rule (the latest generation of each
  -- measurement id), applied to the members' rows of the metric only.
  SELECT * FROM measurements
  WHERE run_id IN (SELECT run_id FROM m) AND name = $2 AND ($3 = '' OR subject = $3)
  QUALIFY row_number() OVER (PARTITION BY measurement_id ORDER BY published_at DESC, evidence_generation_id DESC) = 1
), v AS (
  SELECT x.run_id, count(*) AS n, median(coalesce(x.value_float, x.value_int::DOUBLE)) AS med, any_value(x.unit) AS unit
  FROM x WHERE NOT x.is_warmup AND coalesce(x.value_float, x.value_int::DOUBLE) IS NOT NULL
  GROUP BY x.run_id
), r AS (
  -- runs_current's rule, applied to the members only.
  SELECT * FROM runs WHERE run_id IN (SELECT run_id FROM m)
  QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY revision DESC, published_at DESC, evidence_generation_id DESC) = 1
)
SELECT m.set_id, m.run_id, coalesce(m.trial_id, ''), coalesce(t.block_id, ''), coalesce(t.outcome, ''), coalesce(t.factors_json, ''),
       coalesce(r.execution_status, ''), coalesce(r.validation_status, ''), coalesce(r.source_state_id, ''),
       coalesce(s.identity_quality, ''), coalesce(r.environment_id, ''), coalesce(r.workload_definition_id, ''),
       coalesce(r.adapter, ''), coalesce(r.collector_version, ''), coalesce(r.measurement_protocol_id, ''),
       coalesce(v.n, 0), v.med, coalesce(v.unit, '')
FROM m
LEFT JOIN t ON t.trial_id = m.trial_id
LEFT JOIN r ON r.run_id = m.run_id
LEFT JOIN source_states_current s ON s.source_state_id = r.source_state_id
LEFT JOIN v ON v.run_id = m.run_id
ORDER BY m.set_id, coalesce(t.block_id, ''), m.run_id`}
)

// RunSetEvidence reads the members of a frozen run set with their trials,
// identities and the median of their values of metric (optionally of one
// subject), at the pinned HEAD.
func RunSetEvidence(ctx context.Context, ws *workspace.Workspace, runSetID, metric, subject string) (*SetEvidence, error) {
	sets, err := RunSetsEvidence(ctx, ws, metric, subject, runSetID)
	if err != nil {
		return nil, err
	}
	return sets[0], nil
}

// RunSetsEvidence is RunSetEvidence of several sets, read in one session:
// every set at the same commit, through one set of readers.
func RunSetsEvidence(ctx context.Context, ws *workspace.Workspace, metric, subject string, runSetIDs ...string) ([]*SetEvidence, error) {
	if len(runSetIDs) == 0 || metric == "" || slices.Contains(runSetIDs, "") {
		return nil, fault.New(fault.InvalidArguments, "a comparison needs two run sets and a metric").With("field", "metric")
	}
	return with(ctx, ws, func(s *Session) ([]*SetEvidence, error) {
		out := make([]*SetEvidence, 0, len(runSetIDs))
		byID := map[string]*SetEvidence{}
		for _, id := range runSetIDs {
			res := &SetEvidence{RunSetID: id, CorpusCommitID: s.Commit(), Members: []SetMember{}}
			found := false
			if err := s.R.Scan(ctx, qSetFrozen, []any{id}, func(rows *sql.Rows) error {
				for rows.Next() {
					if err := rows.Scan(&res.FrozenAt); err != nil {
						return err
					}
					found = true
				}
				return nil
			}); err != nil {
				return nil, err
			}
			if !found {
				return nil, notFoundInquiry("run set", id, "run-sets list", "list_run_sets")
			}
			out = append(out, res)
			byID[id] = res
		}
		for i := 0; i < len(runSetIDs); i += 2 {
			a, b := runSetIDs[i], runSetIDs[i]
			if i+1 < len(runSetIDs) {
				b = runSetIDs[i+1]
			}
			err := s.R.Scan(ctx, qSetMembers, []any{a, metric, subject, b}, func(rows *sql.Rows) error {
				for rows.Next() {
					var set string
					var m SetMember
					var med sql.NullFloat64
					if err := rows.Scan(&set, &m.RunID, &m.TrialID, &m.BlockID, &m.TrialOutcome, &m.Factors, &m.ExecutionStatus, &m.ValidationStatus,
						&m.SourceStateID, &m.IdentityQuality, &m.EnvironmentID, &m.DefinitionID, &m.Adapter, &m.CollectorVersion,
						&m.ProtocolID, &m.Values, &med, &m.Unit); err != nil {
						return err
					}
					if med.Valid {
						m.Median = &med.Float64
					}
					if res := byID[set]; res != nil && len(res.Members) < inquiryMaxMembers {
						res.Members = append(res.Members, m)
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// inquiryMaxMembers bounds what one comparison reads of a set.
const inquiryMaxMembers = 10000
