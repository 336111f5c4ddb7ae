package analysis

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// OpDiffMerged is the merged profile diff's operation name.
const OpDiffMerged = "diff_merged"

// MergedDiffMethod says what a merged diff computes. go tool pprof merges
// the profiles named on its command line, but takes one -diff_base (a
// repeated flag keeps the last), so the base side is merged first:
// `go tool pprof -proto B1 B2 … > BASE`.
const MergedDiffMethod = "go tool pprof -top -diff_base=BASE C1 C2 …, BASE the base profiles merged (go tool pprof -proto B1 B2 … > BASE): per function, the candidate side's sum minus the base side's, not normalised"

// MaxMergedInputs bounds the profiles a merged diff reads per side.
const MaxMergedInputs = 64

// MergedDiffRequest asks for the frames whose values changed between two
// sides of several published profiles each, every side merged as
// go tool pprof merges the profiles of its command line.
type MergedDiffRequest struct {
	// Base and Candidate are run ids or artifact ids, at most
	// MaxMergedInputs each.
	Base      []string `json:"base"`
	Candidate []string `json:"candidate"`
	// SampleType defaults to the first readable base profile's default.
	SampleType string `json:"sample_type,omitempty"`
	// Limit is the number of rows (default 20, max 1000).
	Limit int `json:"limit,omitempty"`
}

// InputProblem is an input whose profile was not merged, and why.
type InputProblem struct {
	Input  string `json:"input"`
	Reason string `json:"reason"`
}

// MergedSide is one side of a merged diff.
type MergedSide struct {
	// Inputs counts the run or artifact ids asked for.
	Inputs int `json:"inputs"`
	// Sources are the profiles merged, in input order.
	Sources []Source `json:"sources"`
	// NoProfile lists the inputs without an extracted profile.
	NoProfile []string `json:"no_profile"`
	// Skipped lists the inputs with a profile that was not merged: it
	// lacks the sample type, counts it in another unit, or cannot be read.
	Skipped []InputProblem `json:"skipped"`
	// SampleType's total and samples are summed over Sources.
	SampleType SampleType `json:"sample_type"`
	// DurationNanos is the sum of the profiles' durations, 0 unless every
	// merged profile records one.
	DurationNanos      int64   `json:"duration_ns,omitempty"`
	SymbolizedFraction float64 `json:"symbolized_fraction"`
	// Frames counts the distinct functions with a value.
	Frames int64 `json:"frames"`
}

// MergedDiff is the result of a merged diff: DiffResult's rows for two
// sides of several profiles each. Compared is false when a side merged no
// profile; there are then no rows.
type MergedDiff struct {
	SchemaVersion    int        `json:"schema_version"`
	Operation        string     `json:"operation"`
	OperationVersion string     `json:"operation_version"`
	CorpusCommitID   string     `json:"corpus_commit_id"`
	Method           string     `json:"method"`
	Base             MergedSide `json:"base"`
	Candidate        MergedSide `json:"candidate"`
	Compared         bool       `json:"compared"`
	// TotalDelta is the candidate side's total minus the base side's;
	// ShownDelta the sum of the rows' self deltas.
	TotalDelta int64  `json:"total_delta"`
	ShownDelta int64  `json:"shown_delta"`
	OutputUnit string `json:"output_unit"`
	// Changed counts every changed function; Rows holds the first Limit.
	Changed   int64     `json:"changed"`
	Added     int       `json:"added"`
	Removed   int       `json:"removed"`
	Truncated bool      `json:"truncated"`
	Rows      []DiffRow `json:"rows"`
	// Limitations are the whole diff's; a side's say "base:" or
	// "candidate:".
	Limitations []string `json:"limitations"`
}

// Format is the value format of a merged diff's values.
func (r *MergedDiff) Format() ValueFormat { return DeltaFormat(r.Base.SampleType.Unit, r.OutputUnit) }

// DeltaFormat prints values of unit in outputUnit (a diff's OutputUnit;
// "" chooses per value, as pprof's "auto").
func DeltaFormat(unit, outputUnit string) ValueFormat {
	return ValueFormat{from: unit, to: cmp.Or(outputUnit, "auto")}
}

// merging gathers one side's profiles, then folds their frames into
// per-function totals.
type merging struct {
	side   MergedSide
	gens   []string // each source's generation, beside side.Sources
	rows   []HotspotRow
	sym    int64 // total in frames with symbols
	noDur  bool
	types  string   // the first profile's sample types, "type/unit, …"
	others []string // inputs whose sample types differ from the first's
	// chosen counts the inputs whose profile was a choice among several
	// (or not a CPU profile); note is the first such choice.
	chosen int
	note   string
}

// inputProblem reports whether err is about the input alone (no profile,
// no such sample type, a bad id), which a merge skips; any other error (a
// broken workspace, a cancelled context) stops the diff.
func inputProblem(err error) bool {
	for _, c := range []fault.Code{fault.NotFound, fault.InvalidArguments, fault.EvidenceSchemaMismatch} {
		if fault.Is(err, c) {
			return true
		}
	}
	return false
}

// add finds one input's profile and checks that it has st (or, when
// st.Type is "", takes the profile's default, which it returns).
func (m *merging) add(ctx context.Context, s *query.Session, input string, st SampleType, known *bool) (SampleType, error) {
	sc, err := resolve(ctx, s, input, "", "")
	var got SampleType
	if err == nil {
		got, err = pick(sc.types, st.Type)
	}
	switch {
	case err != nil && fault.Is(err, fault.NotFound) && fault.As(err).Details["missing_entity"] == "profile":
		m.side.NoProfile = append(m.side.NoProfile, input)
		return st, nil
	case err != nil && inputProblem(err) && ctx.Err() == nil:
		m.side.Skipped = append(m.side.Skipped, InputProblem{Input: input, Reason: fault.As(err).Message})
		return st, nil
	case err != nil:
		return st, err
	}
	// The first profile merged fixes the type's unit (and its type when
	// none was asked for); the others must agree with it.
	if !*known {
		st, *known = SampleType{Type: got.Type, Unit: got.Unit}, true
	}
	if got.Unit != st.Unit {
		m.side.Skipped = append(m.side.Skipped, InputProblem{Input: input,
			Reason: fmt.Sprintf("sample type %s is in %s here and in %s in the first profile", st.Type, cmp.Or(got.Unit, "count"), cmp.Or(st.Unit, "count"))})
		return st, nil
	}
	names := typeNames(&sideFrames{types: sc.types})
	if len(m.side.Sources) == 0 {
		m.types = names
	} else if names != m.types {
		m.others = append(m.others, input)
	}
	if sc.note != "" {
		if m.chosen++; m.note == "" {
			m.note = sc.note
		}
	}
	m.side.Sources = append(m.side.Sources, *sc.src)
	m.gens = append(m.gens, sc.src.GenerationID)
	m.side.SampleType.Total += got.Total
	m.side.SampleType.Samples += got.Samples
	if sc.duration > 0 {
		m.side.DurationNanos += sc.duration
	} else {
		m.noDur = true
	}
	return st, nil
}

// mergedFrames is the query that sums the function-level frames of
// several profiles (run, artifact, generation; a profile listed k times
// counted k times) under one sample type, over every thread and process,
// grouped by what a frame's pprof name is made of. Each sample is in one
// profile, so a function's cum over the merged profiles is the sum of its
// cum in each. One query a side, so DuckDB merges the profiles rather than
// the diff reading every frame of each; each profile is read with the
// equality filters a single-profile read uses, so the scans skip the row
// groups of other profiles however large the corpus.
func mergedFrames(srcs []Source, gens []string, metric string, limit int) (catalog.Query, []any) {
	args := []any{metric, limit}
	param := func(v string) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var fm, fr []string
	seen := map[[2]string]bool{}
	for i, src := range srcs {
		fm = append(fm, fmt.Sprintf("SELECT artifact_id, evidence_generation_id, frame_id, self_value, inclusive_value FROM frame_measurements "+
			"WHERE run_id = %s AND artifact_id = %s AND evidence_generation_id = %s AND metric = $1", param(src.RunID), param(src.ArtifactID), param(gens[i])))
		if k := [2]string{src.ArtifactID, gens[i]}; !seen[k] {
			seen[k] = true
			fr = append(fr, fmt.Sprintf("SELECT artifact_id, evidence_generation_id, frame_id, function, module, start_line, symbolization FROM frames "+
				"WHERE artifact_id = %s AND evidence_generation_id = %s", param(k[0]), param(k[1])))
		}
	}
	return catalog.Query{Name: "analysis.merged_frames", Version: "1", SQL: `
WITH m AS (
  SELECT artifact_id, evidence_generation_id, frame_id, sum(self_value) AS self, sum(inclusive_value) AS incl
  FROM (` + strings.Join(fm, "\n  UNION ALL ") + `)
  GROUP BY artifact_id, evidence_generation_id, frame_id),
f AS (` + strings.Join(fr, "\n  UNION ALL ") + `),
j AS (
  SELECT coalesce(f.function, '') AS function, coalesce(f.module, '') AS module, coalesce(f.start_line, 0) AS start_line,
         coalesce(f.symbolization, 'none') = 'none' AS unsym, m.frame_id, m.self, m.incl
  FROM m LEFT JOIN f USING (artifact_id, evidence_generation_id, frame_id))
SELECT function, module, start_line, unsym, min(frame_id), sum(self), sum(incl)
FROM j GROUP BY function, module, start_line, unsym
HAVING sum(self) <> 0 OR sum(incl) <> 0
ORDER BY function, module, start_line, unsym
LIMIT $2`}, args
}

// qProfiledRuns lists which of a JSON list of run ids have an extracted
// profile, so that a run set without profiles costs one query, not one
// lookup a run.
var qProfiledRuns = catalog.Query{Name: "analysis.profiled_runs", Version: "1", SQL: `
SELECT DISTINCT run_id FROM measurements
WHERE scope = 'profile' AND name = 'profile.total'
  AND run_id IN (SELECT unnest(from_json($1, '["VARCHAR"]')))`}

// runsWithProfiles is the set of the run ids among inputs that have an
// extracted profile (artifact ids are left to resolve).
func runsWithProfiles(ctx context.Context, s *query.Session, inputs []string) (map[string]bool, error) {
	var ids []string
	for _, in := range inputs {
		if run.ValidID(in) && !slices.Contains(ids, in) {
			ids = append(ids, in)
		}
	}
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	err = s.R.Scan(ctx, qProfiledRuns, []any{string(js)}, func(rows *sql.Rows) error {
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out[id] = true
		}
		return nil
	})
	return out, err
}

// read folds the side's profiles into per-function rows, keyed as Diff
// keys them.
func (m *merging) read(ctx context.Context, s *query.Session, st SampleType) error {
	if len(m.side.Sources) == 0 {
		return nil
	}
	q, args := mergedFrames(m.side.Sources, m.gens, st.Type, maxDiffFrames+1)
	byKey := map[string]int{}
	var groups int
	err := s.R.Scan(ctx, q, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var r HotspotRow
			var start int32
			if err := rows.Scan(&r.Function, &r.Module, &start, &r.Unsymbolized, &r.FrameID, &r.Self, &r.Inclusive); err != nil {
				return err
			}
			groups++
			r.StartLine = int(start)
			if !r.Unsymbolized {
				m.sym += abs(r.Self)
			}
			k := diffKey(r)
			if i, ok := byKey[k]; ok {
				// One pprof name in two modules: one node.
				m.rows[i].Self += r.Self
				m.rows[i].Inclusive += r.Inclusive
				continue
			}
			byKey[k] = len(m.rows)
			m.rows = append(m.rows, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if groups > maxDiffFrames {
		return fault.New(fault.QueryBudgetExceeded, "the merged profiles have more than %d functions with a value; a diff reads them all", maxDiffFrames).
			Fix("Compare fewer profiles, or the native profiles with go tool pprof -diff_base.")
	}
	return nil
}

// DiffMerged ranks the functions of two sides of published profiles by
// the change of their flat value, each side's profiles merged: the rows
// of `go tool pprof -top -diff_base=BASE C1 C2 …` where BASE is the base
// profiles merged. Inputs without a profile, and profiles without the
// sample type (or in another unit), are counted and skipped, not refused:
// a side that merges none leaves Compared false. Only a bad request or a
// workspace that cannot be read is an error.
func DiffMerged(ctx context.Context, ws *workspace.Workspace, req MergedDiffRequest) (*MergedDiff, error) {
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	if len(req.Base) == 0 || len(req.Candidate) == 0 {
		return nil, fault.New(fault.InvalidArguments, "a merged diff needs base and candidate profiles (run ids or artifact ids)")
	}
	if n := max(len(req.Base), len(req.Candidate)); n > MaxMergedInputs {
		return nil, fault.New(fault.QueryBudgetExceeded, "%d profiles on one side; a merged diff reads at most %d a side", n, MaxMergedInputs)
	}
	s, err := query.OpenTables(ctx, ws, hotspotsTables...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	profiled, err := runsWithProfiles(ctx, s, append(append([]string{}, req.Base...), req.Candidate...))
	if err != nil {
		return nil, err
	}
	st := SampleType{Type: req.SampleType}
	known := false
	sides := [2]*merging{}
	for i, inputs := range [][]string{req.Base, req.Candidate} {
		m := &merging{side: MergedSide{Inputs: len(inputs), Sources: []Source{}, NoProfile: []string{}, Skipped: []InputProblem{}}}
		sides[i] = m
		for _, in := range inputs {
			if run.ValidID(in) && !profiled[in] {
				m.side.NoProfile = append(m.side.NoProfile, in)
				continue
			}
			if st, err = m.add(ctx, s, in, st, &known); err != nil {
				return nil, sideErr(err, []string{"base", "candidate"}[i])
			}
		}
	}
	compared := len(sides[0].side.Sources) > 0 && len(sides[1].side.Sources) > 0
	for i, m := range sides {
		if compared {
			if err := m.read(ctx, s, st); err != nil {
				return nil, sideErr(err, []string{"base", "candidate"}[i])
			}
		}
		m.side.SampleType.Type, m.side.SampleType.Unit = st.Type, st.Unit
		m.side.SymbolizedFraction = frac(m.sym, m.side.SampleType.Total)
		m.side.Frames = int64(len(m.rows))
		if m.noDur {
			m.side.DurationNanos = 0
		}
	}
	base, cand := sides[0], sides[1]
	res := &MergedDiff{SchemaVersion: 1, Operation: OpDiffMerged, OperationVersion: Version, CorpusCommitID: s.Commit(),
		Method: MergedDiffMethod, Base: base.side, Candidate: cand.side, Rows: []DiffRow{}}
	res.Compared = compared
	res.Limitations = mergedLimitations(base, cand, compared)
	if !compared {
		return res, nil
	}
	bt := base.side.SampleType.Total
	res.TotalDelta = cand.side.SampleType.Total - bt
	rows := diffRows(base.rows, cand.rows)
	var minValue, sum int64
	res.Added, res.Removed, minValue = tally(rows)
	res.OutputUnit = NewValueFormat(st.Unit, minValue, bt).to
	res.Changed = int64(len(rows))
	for i, r := range rows {
		if i == limit {
			res.Truncated = true
			break
		}
		sum += r.SelfDelta
		r.Rank = i + 1
		r.SelfDeltaFraction, r.InclusiveDeltaFraction = signedFrac(r.SelfDelta, bt), signedFrac(r.InclusiveDelta, bt)
		r.SumDelta, r.SumDeltaFraction = sum, signedFrac(sum, bt)
		res.ShownDelta += r.SelfDelta
		res.Rows = append(res.Rows, r)
	}
	if len(rows) == 0 {
		res.Limitations = append(res.Limitations, "No function's flat or cum value changed between the merged profiles under this sample type.")
	}
	return res, nil
}

// mergedLimitations says what a merged diff cannot show: the limitations
// of every diff, and what each side skipped or could not match.
func mergedLimitations(base, cand *merging, compared bool) []string {
	var lim []string
	if compared {
		lim = append(lim, diffNesting, diffPerFunction)
	}
	for _, s := range []struct {
		name string
		m    *merging
	}{{"base", base}, {"candidate", cand}} {
		side := s.m.side
		if n := len(side.NoProfile); n > 0 {
			lim = append(lim, fmt.Sprintf("%s: %d of %d inputs have no extracted profile", s.name, n, side.Inputs))
		}
		for _, p := range side.Skipped {
			lim = append(lim, fmt.Sprintf("%s: %s not merged: %s", s.name, p.Input, p.Reason))
		}
		if len(s.m.others) > 0 {
			lim = append(lim, fmt.Sprintf("%s: %d profiles have other sample types than the first (%s); they are merged under %s",
				s.name, len(s.m.others), s.m.types, side.SampleType.Type))
		}
		if s.m.chosen > 0 {
			lim = append(lim, fmt.Sprintf("%s: for %d of the %d runs the profile merged was a choice among several, e.g. %s",
				s.name, s.m.chosen, len(side.Sources), s.m.note))
		}
	}
	if !compared {
		return lim
	}
	b, c := base.side, cand.side
	if bs, cs := b.SymbolizedFraction, c.SymbolizedFraction; bs < 0.999 || cs < 0.999 {
		lim = append(lim, fmt.Sprintf("Symbolization differs or is partial (base %.1f%%, candidate %.1f%% of the total in frames with symbols): frames without symbols match only by module and address, which a rebuilt binary does not keep, so their changes read as removals and additions.",
			100*bs, 100*cs))
	}
	if bn, cn := len(b.Sources), len(c.Sources); bn != cn {
		lim = append(lim, fmt.Sprintf("The sides merge different numbers of profiles (base %d, candidate %d) and values are not normalised: the side with more profiles has more samples everywhere.", bn, cn))
	}
	bd, cd := b.DurationNanos, c.DurationNanos
	switch {
	case bd > 0 && cd > 0 && bd != cd:
		lim = append(lim, fmt.Sprintf("The merged profiles' durations differ (base %s, candidate %s) and values are not normalised: longer captures have more samples everywhere.",
			HumanDuration(bd), HumanDuration(cd)))
	case b.SampleType.Total != c.SampleType.Total:
		lim = append(lim, fmt.Sprintf("Values are not normalised (as go tool pprof -diff_base without -normalize): the totals differ (base %d, candidate %d %s).",
			b.SampleType.Total, c.SampleType.Total, cmp.Or(b.SampleType.Unit, "count")))
	}
	if b.SampleType.Total == 0 {
		lim = append(lim, "The base's total is zero: fractions are reported as 0.")
	}
	if p := producers(b, c); p != "" {
		lim = append(lim, "The profiles come from different producers ("+p+"): their frames may be named and attributed differently.")
	}
	return lim
}

// producers lists the distinct producers of two sides' profiles, "" when
// they are all one.
func producers(sides ...MergedSide) string {
	var out []string
	for _, s := range sides {
		for _, src := range s.Sources {
			if p := cmp.Or(src.Producer, "unknown"); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	if len(out) < 2 {
		return ""
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
