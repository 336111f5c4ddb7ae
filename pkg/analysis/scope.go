// Package analysis holds flameox's read-only recipes over the published
// corpus: hotspots, and the drill-down from a frame to its callers,
// callees and representative stacks. Every result names its operation and
// version, the pinned commit, its inputs, its parameters, its units, how
// much of the data it covers, what it cannot say (limitations) and what to
// look at next; lists are bounded and continue with a cursor. Nothing here
// takes the write lock; --record persists a result through fox-publish.
//
// Numbers follow `go tool pprof -top` exactly: frames are function-level
// nodes named and merged as pprof merges them, flat counts the leaf,
// cumulative counts a function once per sample even when it recurses.
package analysis

import (
	"context"
	"database/sql"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
)

// profileTables are the tables the profile analyses read; hotspots read
// the first four (a reader binds only the views it is asked for).
var (
	profileTables  = []string{"artifacts", "measurements", "frames", "frame_measurements", "call_edges", "stacks"}
	hotspotsTables = profileTables[:4]
)

// Source is the profile an analysis reads: one artifact of one run, at the
// generation that extracted it last.
type Source struct {
	RunID        string `json:"run_id"`
	ArtifactID   string `json:"artifact_id"`
	DisplayName  string `json:"display_name"`
	Kind         string `json:"kind"`
	Producer     string `json:"producer,omitempty"`
	GenerationID string `json:"generation_id"`
}

// qProfiles finds extracted profiles through their few profile.total
// measurement rows (cheap), not through the frame tables.
var qProfiles = catalog.Query{Name: "analysis.profiles", Version: "2", SQL: `
WITH p AS (
  SELECT run_id, artifact_id, arg_max(evidence_generation_id, published_at) AS gen, max(published_at) AS at
  FROM measurements
  WHERE name = 'profile.total' AND (($1 <> '' AND run_id = $1) OR ($2 <> '' AND artifact_id = $2))
  GROUP BY run_id, artifact_id),
a AS (
  SELECT run_id, artifact_id, any_value(display_name) AS display_name, any_value(kind) AS kind,
         any_value(producer) AS producer, any_value(role) AS role
  FROM artifacts WHERE (($1 <> '' AND run_id = $1) OR ($2 <> '' AND artifact_id = $2))
  GROUP BY run_id, artifact_id)
SELECT p.run_id, p.artifact_id, p.gen, coalesce(a.display_name, ''), coalesce(a.kind, ''), coalesce(a.producer, ''), coalesce(a.role, '')
FROM p LEFT JOIN a USING (run_id, artifact_id)
ORDER BY p.at DESC, p.run_id, p.artifact_id`}

// resolve finds the profile an input names: a run id (its profile
// artifact; sample profiles before memory profiles, primary before derived)
// or an artifact id (its latest extraction).
func resolve(ctx context.Context, s *query.Session, input string) (*Source, []string, error) {
	input = strings.TrimSpace(input)
	var runID, artID string
	switch {
	case digest.Valid(input):
		artID = input
	case run.ValidID(input):
		runID = input
	default:
		return nil, nil, fault.New(fault.InvalidArguments, "%q is neither a run id nor an artifact id (sha256:…)", input)
	}
	var found []Source
	roles := map[string]string{}
	err := s.R.Scan(ctx, qProfiles, []any{runID, artID}, func(rows *sql.Rows) error {
		for rows.Next() {
			var src Source
			var role string
			if err := rows.Scan(&src.RunID, &src.ArtifactID, &src.GenerationID, &src.DisplayName, &src.Kind, &src.Producer, &role); err != nil {
				return err
			}
			roles[src.RunID+src.ArtifactID] = role
			found = append(found, src)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(found) == 0 {
		return nil, nil, fault.New(fault.NotFound, "no extracted profile for %s in the published corpus", input).
			With("missing_entity", "profile").
			Fix("Import a profile (`flameox import FILE`) or capture one (`flameox capture run gotest|perf|py-spy …`), then retry.")
	}
	rank := func(src Source) int {
		r := 0
		if src.Kind != "sample_profile" {
			r += 2
		}
		if roles[src.RunID+src.ArtifactID] != "primary" {
			r++
		}
		return r
	}
	sort.SliceStable(found, func(i, j int) bool { return rank(found[i]) < rank(found[j]) })
	var lim []string
	if runID != "" && len(found) > 1 {
		others := []string{}
		for _, f := range found[1:] {
			others = append(others, f.ArtifactID+" ("+f.DisplayName+")")
		}
		lim = append(lim, "The run has several profiles; this analysis reads "+found[0].DisplayName+". Pass an artifact id for another: "+strings.Join(others, ", "))
	}
	return &found[0], lim, nil
}

// SampleType is one metric of a profile.
type SampleType struct {
	Type    string `json:"type"`
	Unit    string `json:"unit"`
	Total   int64  `json:"total"`
	Samples int64  `json:"samples"`
	Default bool   `json:"default"`
}

var qTotals = catalog.Query{Name: "analysis.totals", Version: "1", SQL: `
SELECT subject, any_value(unit) FILTER (WHERE name = 'profile.total'),
       coalesce(sum(value_int) FILTER (WHERE name = 'profile.total'), 0),
       coalesce(sum(value_int) FILTER (WHERE name = 'profile.samples'), 0),
       bool_or(coalesce(dimensions['default'], '') = 'true')
FROM measurements
WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND scope = 'profile'
  AND ($4 = '' OR coalesce(dimensions['thread'], '') = $4) AND ($5 = '' OR coalesce(dimensions['process'], '') = $5)
GROUP BY subject ORDER BY subject`}

// sampleTypes lists a profile's metrics with totals (under the filters).
func sampleTypes(ctx context.Context, s *query.Session, src *Source, thread, process string) ([]SampleType, error) {
	out := []SampleType{}
	err := s.R.Scan(ctx, qTotals, []any{src.RunID, src.ArtifactID, src.GenerationID, thread, process}, func(rows *sql.Rows) error {
		for rows.Next() {
			var st SampleType
			var unit sql.NullString
			if err := rows.Scan(&st.Type, &unit, &st.Total, &st.Samples, &st.Default); err != nil {
				return err
			}
			st.Unit = unit.String
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// pick chooses the requested sample type, or pprof's default.
func pick(types []SampleType, want string) (SampleType, error) {
	names := []string{}
	for _, t := range types {
		names = append(names, t.Type)
		if want != "" && t.Type == want {
			return t, nil
		}
	}
	if want != "" {
		return SampleType{}, fault.New(fault.InvalidArguments, "the profile has no sample type %q", want).With("sample_types", strings.Join(names, ","))
	}
	for _, t := range types {
		if t.Default {
			return t, nil
		}
	}
	if len(types) == 0 {
		return SampleType{}, fault.New(fault.NotFound, "the profile has no samples under these filters")
	}
	return types[len(types)-1], nil
}
