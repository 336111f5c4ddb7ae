package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
)

// EvidenceResult is the result of `flameox evidence get TYPE ID` and MCP
// get_evidence: one typed piece of evidence from the pinned commit. Exactly
// one of the typed fields is set; Fields carries the row of the types that
// have no richer model yet, every value rendered as text.
type EvidenceResult struct {
	SchemaVersion  int                `json:"schema_version"`
	CorpusCommitID string             `json:"corpus_commit_id"`
	RefType        string             `json:"ref_type"`
	RefID          string             `json:"ref_id"`
	Run            *RunDetail         `json:"run,omitempty"`
	Artifact       *ArtifactDetail    `json:"artifact,omitempty"`
	Generation     *corpus.Generation `json:"generation,omitempty"`
	// SupersededBy names the generation (a compaction) that replaced this
	// one in the inventory; its rows live on in that generation's files.
	SupersededBy string            `json:"superseded_by,omitempty"`
	Table        string            `json:"table,omitempty"`
	Fields       map[string]string `json:"fields,omitempty"`
	Truncated    bool              `json:"truncated"`
}

// refTables maps the row-backed evidence types to their table and id column.
var refTables = map[string][2]string{
	"analysis":     {"analyses", "analysis_id"},
	"frame":        {"frames", "frame_id"}, // its invalid_utf8 digests (docs/tables.md)
	"comparison":   {"comparisons", "comparison_id"},
	"run_set":      {"run_sets", "run_set_id"},
	"trial":        {"trials", "trial_id"},
	"observation":  {"observations", "observation_id"},
	"finding":      {"findings", "finding_id"},
	"hypothesis":   {"hypotheses", "hypothesis_id"},
	"experiment":   {"experiments", "experiment_id"},
	"measurement":  {"measurements", "measurement_id"},
	"environment":  {"environments_current", "environment_id"},
	"source_state": {"source_states_current", "source_state_id"},
}

// RefTypes lists every evidence type `evidence get` accepts.
func RefTypes() []string {
	out := []string{"run", "artifact", "generation"}
	for t := range refTables {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// GetEvidence looks up one piece of evidence by type and id.
func GetEvidence(ctx context.Context, ws *workspace.Workspace, refType, refID string) (*EvidenceResult, error) {
	refID = strings.TrimSpace(refID)
	if refID == "" {
		return nil, fault.New(fault.InvalidArguments, "evidence get needs an id")
	}
	if refType != "run" && refType != "artifact" && refType != "generation" {
		if _, ok := refTables[refType]; !ok {
			return nil, fault.New(fault.InvalidArguments, "unknown evidence type %q", refType).With("allowed", strings.Join(RefTypes(), ","))
		}
	}
	return with(ctx, ws, func(s *Session) (*EvidenceResult, error) {
		res := &EvidenceResult{SchemaVersion: 1, CorpusCommitID: s.Commit(), RefType: refType, RefID: refID}
		var err error
		switch refType {
		case "run":
			res.Run, err = s.showRun(ctx, refID)
			if err == nil && !res.Run.Published {
				err = notFound(refType, refID)
			}
		case "artifact":
			res.Artifact, err = s.showArtifact(ctx, refID)
			if err == nil && res.Artifact.RegistrationsTotal == 0 {
				err = notFound(refType, refID)
			}
		case "generation":
			res.Generation, res.SupersededBy, err = s.generation(refID)
		default:
			err = s.row(ctx, res)
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	})
}

func notFound(refType, refID string) error {
	return fault.New(fault.NotFound, "no %s %s in the published corpus", refType, refID).With("missing_entity", refType)
}

// generation finds a live generation, or one that compaction superseded
// (rows keep naming it, so provenance must still resolve).
func (s *Session) generation(id string) (*corpus.Generation, string, error) {
	g, by, err := corpus.FindGeneration(s.R.Snapshot(), id)
	if err != nil {
		return nil, "", err
	}
	if g == nil {
		return nil, "", notFound("generation", id)
	}
	return g, by, nil
}

func (s *Session) row(ctx context.Context, res *EvidenceResult) error {
	tc := refTables[res.RefType]
	res.Table = strings.TrimSuffix(tc[0], "_current")
	// Table and column names come from the fixed map above, never from input.
	q := catalog.Query{Name: "evidence.get." + res.RefType, Version: "1",
		SQL: fmt.Sprintf(`SELECT * FROM %s WHERE %s = $1 ORDER BY published_at DESC LIMIT 1`, tc[0], tc[1])}
	found := false
	err := s.R.Scan(ctx, q, []any{res.RefID}, func(rows *sql.Rows) error {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			found = true
			res.Fields = map[string]string{}
			for i, c := range cols {
				text, cut := catalog.Clip(render(vals[i]), 4096)
				res.Fields[c] = text
				res.Truncated = res.Truncated || cut
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return notFound(res.RefType, res.RefID)
	}
	return nil
}

func render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}
