package analysis

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// OpDiff is the profile diff's operation name.
const OpDiff = "diff"

// DiffMethod says what a diff computes, in the result (method).
const DiffMethod = "go tool pprof -top -diff_base=BASE CAND: per function, candidate minus base (the base's samples negated and merged), not normalised"

// maxDiffFrames bounds the function-level frames read from each side.
const maxDiffFrames = 200_000

// DiffRequest asks for the frames whose values changed between two
// published profiles.
type DiffRequest struct {
	Base       string `json:"base" jsonschema:"run id or artifact id of the base (before) profile"`
	Candidate  string `json:"candidate" jsonschema:"run id or artifact id of the candidate (after) profile"`
	SampleType string `json:"sample_type,omitempty" jsonschema:"e.g. cpu, alloc_space (default: the base profile's)"`
	Focus      string `json:"focus,omitempty" jsonschema:"RE2: keep samples with a matching frame, both sides (pprof -focus)"`
	Ignore     string `json:"ignore,omitempty" jsonschema:"RE2: drop samples with a matching frame, both sides (pprof -ignore)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"rows to return (default 20, max 1000)"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// DiffSide is one profile of a diff.
type DiffSide struct {
	Source     Source     `json:"source"`
	SourceNote string     `json:"source_note,omitempty"`
	SampleType SampleType `json:"sample_type"`
	// DurationNanos is the profile's own duration, when it records one.
	DurationNanos      int64   `json:"duration_ns,omitempty"`
	SymbolizedFraction float64 `json:"symbolized_fraction"`
	// Frames is the count of function-level frames with a value.
	Frames int64 `json:"frames"`
}

// DiffRow is one function whose flat or cum value changed. Deltas are
// candidate minus base; fractions are signed, of the base's total (as
// go tool pprof -diff_base computes percentages).
type DiffRow struct {
	Rank int `json:"rank"`
	// FrameID is the candidate's frame id (the base's when the function
	// is only in the base); BaseFrameID is the base's when it differs.
	FrameID            string  `json:"frame_id"`
	BaseFrameID        string  `json:"base_frame_id,omitempty"`
	Function           string  `json:"function"`
	Module             string  `json:"module,omitempty"`
	Unsymbolized       bool    `json:"unsymbolized"`
	BaseSelf           int64   `json:"base_self"`
	CandidateSelf      int64   `json:"candidate_self"`
	SelfDelta          int64   `json:"self_delta"`
	SelfDeltaFraction  float64 `json:"self_delta_fraction"`
	BaseInclusive      int64   `json:"base_inclusive"`
	CandidateInclusive int64   `json:"candidate_inclusive"`
	InclusiveDelta     int64   `json:"inclusive_delta"`
	// InclusiveDeltaFraction is the cum delta over the base's total.
	InclusiveDeltaFraction float64 `json:"inclusive_delta_fraction"`
	// SumDelta is pprof's sum% numerator: the self deltas of this row and
	// every row above it (earlier pages included).
	SumDelta         int64   `json:"sum_delta"`
	SumDeltaFraction float64 `json:"sum_delta_fraction"`
	// Presence is "both", "base_only" (gone in the candidate) or
	// "candidate_only" (new in the candidate).
	Presence string `json:"presence"`
}

// DiffParameters echo what a diff was asked.
type DiffParameters struct {
	SampleType string `json:"sample_type"`
	Focus      string `json:"focus,omitempty"`
	Ignore     string `json:"ignore,omitempty"`
	Limit      int    `json:"limit"`
}

// DiffResult is the result of `flameox analyze diff` and MCP analyze_diff.
type DiffResult struct {
	SchemaVersion    int            `json:"schema_version"`
	Operation        string         `json:"operation"`
	OperationVersion string         `json:"operation_version"`
	CorpusCommitID   string         `json:"corpus_commit_id"`
	Base             DiffSide       `json:"base"`
	Candidate        DiffSide       `json:"candidate"`
	Parameters       DiffParameters `json:"parameters"`
	Method           string         `json:"method"`
	// Normalized is false: values are the profiles' own, as pprof's
	// -diff_base without -normalize shows them.
	Normalized bool `json:"normalized"`
	// TotalDelta is the candidate's total minus the base's.
	TotalDelta int64 `json:"total_delta"`
	// ShownDelta is the sum of the rows' self deltas.
	ShownDelta int64 `json:"shown_delta"`
	// OutputUnit is the unit pprof would print the deltas in.
	OutputUnit string `json:"output_unit"`
	// Added and Removed count the functions only in the candidate and only
	// in the base, over all rows (not only this page).
	Added         int       `json:"added"`
	Removed       int       `json:"removed"`
	Rows          []DiffRow `json:"rows"`
	EvidenceLevel string    `json:"evidence_level"`
	Limitations   []string  `json:"limitations"`
	query.Page
	fault.Next
}

// sideFrames is every function-level frame of one side.
type sideFrames struct {
	side  DiffSide
	types []SampleType
	rows  []HotspotRow
	lim   []string
}

// sideErr names the side a refusal is about (details.side).
func sideErr(err error, side string) error {
	if fe := fault.As(err); fe != nil {
		return fe.With("side", side)
	}
	return err
}

// readSide reads every frame of one profile (under the filters), as
// Hotspots reads a page of them.
func readSide(ctx context.Context, ws *workspace.Workspace, s *query.Session, input, sampleType string, filter *nameFilter, req DiffRequest) (*sideFrames, error) {
	sc, err := resolve(ctx, s, input, "", "")
	if err != nil {
		return nil, err
	}
	st, err := pick(sc.types, sampleType)
	if err != nil {
		return nil, err
	}
	res := &HotspotsResult{Rows: []HotspotRow{}}
	hreq := HotspotsRequest{Input: input, SampleType: st.Type, Focus: req.Focus, Ignore: req.Ignore}
	var sym float64
	if filter != nil {
		sym, err = filteredHotspots(ctx, ws, s, sc, st, hreq, filter, maxDiffFrames, 0, res)
	} else {
		sym, err = storedHotspots(ctx, s, sc, st, hreq, maxDiffFrames, 0, res)
	}
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		return nil, fault.New(fault.QueryBudgetExceeded, "profile %s has more than %d functions with a value; a diff reads them all", sc.src.ArtifactID, maxDiffFrames).
			Fix("Narrow both sides with --focus, or compare the native profiles with go tool pprof -diff_base.")
	}
	f := &sideFrames{side: DiffSide{Source: *sc.src, SourceNote: sc.sourceNote(st), SampleType: st, DurationNanos: sc.duration,
		SymbolizedFraction: sym, Frames: res.Total}, types: sc.types, rows: res.Rows, lim: append(sc.lim, res.Limitations...)}
	return f, nil
}

// diffKey is how pprof's function granularity names a node: the function
// name; a frame without symbols by its module and address (start line),
// which a second binary need not share.
func diffKey(r HotspotRow) string {
	if r.Unsymbolized {
		return "\x00" + filepath.Base(r.Module) + "\x00" + strconv.Itoa(r.StartLine) + "\x00" + r.Function
	}
	return r.Function
}

// Diff ranks the functions of two published profiles by the change of
// their flat (self) value, base to candidate, with their cum (inclusive)
// change: the rows of `go tool pprof -top -diff_base=BASE CAND`.
//
// pprof's -diff_base negates the base's samples and merges them into the
// candidate, so every node's flat and cum are the candidate's minus the
// base's, and percentages are of the base's total; -normalize would first
// scale the candidate to the base's total. Diff computes the former from
// the published per-function totals (flat and cum are sums over samples,
// so the difference of the sums is the sum over the merged profile); it
// does not normalise, and says so when the durations or totals differ.
func Diff(ctx context.Context, ws *workspace.Workspace, req DiffRequest) (*DiffResult, error) {
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Base) == "" || strings.TrimSpace(req.Candidate) == "" {
		return nil, fault.New(fault.InvalidArguments, "a diff needs a base and a candidate (run ids or artifact ids)")
	}
	filter, err := compileFilter(req.Focus, req.Ignore)
	if err != nil {
		return nil, err
	}
	s, err := query.OpenTables(ctx, ws, hotspotsTables...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	base, err := readSide(ctx, ws, s, req.Base, req.SampleType, filter, req)
	if err != nil {
		return nil, sideErr(err, "base")
	}
	st := base.side.SampleType
	cand, err := readSide(ctx, ws, s, req.Candidate, st.Type, filter, req)
	if err != nil {
		return nil, sideErr(err, "candidate")
	}
	if cand.side.SampleType.Unit != st.Unit {
		return nil, fault.New(fault.InvalidArguments, "sample type %s is in %s in the base and in %s in the candidate: the values cannot be subtracted",
			st.Type, cmp.Or(st.Unit, "count"), cmp.Or(cand.side.SampleType.Unit, "count"))
	}
	params := DiffParameters{SampleType: st.Type, Focus: req.Focus, Ignore: req.Ignore, Limit: limit}
	want := cursor.Cursor{Query: "analysis.diff", Version: Version, Order: "flat_delta", CommitID: s.Commit()}
	want.Filters, _ = cursor.FiltersDigest(map[string]any{"base": base.side.Source, "candidate": cand.side.Source, "params": params})
	offset, sum := 0, int64(0)
	if req.Cursor != "" {
		c, err := cursor.Decode(req.Cursor, want)
		if err != nil {
			return nil, err
		}
		if len(c.Key) != 2 {
			return nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
		}
		offset, _ = strconv.Atoi(c.Key[0])
		sum, _ = strconv.ParseInt(c.Key[1], 10, 64)
	}
	rows := diffRows(base.rows, cand.rows)
	res := &DiffResult{SchemaVersion: 1, Operation: OpDiff, OperationVersion: Version, CorpusCommitID: s.Commit(),
		Base: base.side, Candidate: cand.side, Parameters: params, Method: DiffMethod,
		TotalDelta: cand.side.SampleType.Total - st.Total, Rows: []DiffRow{}, EvidenceLevel: "observed",
		Next: fault.Next{NextSteps: []string{}}}
	res.Limitations = diffLimitations(base, cand)
	var minValue int64
	res.Added, res.Removed, minValue = tally(rows)
	res.OutputUnit = NewValueFormat(st.Unit, minValue, st.Total).to
	res.Total = int64(len(rows))
	for i := offset; i < len(rows); i++ {
		if len(res.Rows) == limit {
			res.Truncated = true
			break
		}
		r := rows[i]
		sum += r.SelfDelta
		r.Rank = i + 1
		r.SelfDeltaFraction, r.InclusiveDeltaFraction = signedFrac(r.SelfDelta, st.Total), signedFrac(r.InclusiveDelta, st.Total)
		r.SumDelta, r.SumDeltaFraction = sum, signedFrac(sum, st.Total)
		res.ShownDelta += r.SelfDelta
		res.Rows = append(res.Rows, r)
	}
	res.Returned = len(res.Rows)
	if res.Truncated {
		want.Key = []string{strconv.Itoa(offset + limit), strconv.FormatInt(sum, 10)}
		res.Cursor = cursor.Encode(want)
	}
	if len(res.Rows) == 0 {
		res.Limitations = append(res.Limitations, "No function's flat or cum value changed: the two profiles have the same per-function values under this sample type.")
	} else {
		top := res.Rows[0]
		res.Then(fault.Step{Command: "flameox stacks callers " + cand.side.Source.RunID + " " + top.FrameID, Tool: "get_frame_callers",
			Arguments: map[string]any{"input": cand.side.Source.RunID, "frame_id": top.FrameID}})
	}
	return res, nil
}

// diffRows joins two sides' frames by pprof's node name and ranks the
// changed ones as pprof -top sorts nodes: |flat| descending, then name,
// then |cum| descending. A node whose flat and cum are both zero after
// the merge is dropped, as pprof drops it.
func diffRows(base, cand []HotspotRow) []DiffRow {
	type pair struct{ b, c *HotspotRow }
	byKey := map[string]*pair{}
	var keys []string
	add := func(rows []HotspotRow, isBase bool) {
		for i := range rows {
			r := &rows[i]
			k := diffKey(*r)
			p := byKey[k]
			if p == nil {
				p = &pair{}
				byKey[k] = p
				keys = append(keys, k)
			}
			dst := &p.c
			if isBase {
				dst = &p.b
			}
			if *dst == nil {
				cp := *r
				*dst = &cp
				continue
			}
			// Two frames under one pprof name (a name in two modules):
			// pprof merges them into one node.
			(*dst).Self += r.Self
			(*dst).Inclusive += r.Inclusive
		}
	}
	add(base, true)
	add(cand, false)
	out := make([]DiffRow, 0, len(keys))
	for _, k := range keys {
		p := byKey[k]
		var r DiffRow
		one := p.c
		switch {
		case p.b != nil && p.c != nil:
			r.Presence = "both"
			r.FrameID = p.c.FrameID
			if p.b.FrameID != p.c.FrameID {
				r.BaseFrameID = p.b.FrameID
			}
		case p.b != nil:
			r.Presence, one, r.FrameID = "base_only", p.b, p.b.FrameID
		default:
			r.Presence, r.FrameID = "candidate_only", p.c.FrameID
		}
		r.Function, r.Module, r.Unsymbolized = one.Function, one.Module, one.Unsymbolized
		if p.b != nil {
			r.BaseSelf, r.BaseInclusive = p.b.Self, p.b.Inclusive
		}
		if p.c != nil {
			r.CandidateSelf, r.CandidateInclusive = p.c.Self, p.c.Inclusive
		}
		r.SelfDelta, r.InclusiveDelta = r.CandidateSelf-r.BaseSelf, r.CandidateInclusive-r.BaseInclusive
		if r.SelfDelta == 0 && r.InclusiveDelta == 0 {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b DiffRow) int {
		return cmp.Or(cmp.Compare(abs(b.SelfDelta), abs(a.SelfDelta)), strings.Compare(a.Function, b.Function),
			cmp.Compare(abs(b.InclusiveDelta), abs(a.InclusiveDelta)), strings.Compare(a.Module, b.Module), strings.Compare(a.FrameID, b.FrameID))
	})
	return out
}

// The limitations of every diff.
const (
	diffNesting     = "A profile diff shows where samples moved between two profiles, not why: inclusive values follow nesting, not causality, and a function that got faster can move time into its callers or callees."
	diffPerFunction = "Values are aggregated per function, as `go tool pprof -top` does by default, and matched across the profiles by function name (frames without symbols by module and address)."
)

// tally counts the rows only in the candidate and only in the base, and
// finds their smallest non-zero change (flat, else cum), by which pprof
// picks its output unit.
func tally(rows []DiffRow) (added, removed int, minValue int64) {
	for _, r := range rows {
		switch r.Presence {
		case "base_only":
			removed++
		case "candidate_only":
			added++
		}
		if v := cmp.Or(abs(r.SelfDelta), abs(r.InclusiveDelta)); v > 0 && (minValue == 0 || v < minValue) {
			minValue = v
		}
	}
	return added, removed, minValue
}

// diffLimitations says what a diff of these two sides cannot show.
func diffLimitations(base, cand *sideFrames) []string {
	b, c := base.side, cand.side
	lim := []string{diffNesting, diffPerFunction}
	for _, l := range base.lim {
		lim = append(lim, "base: "+l)
	}
	for _, l := range cand.lim {
		lim = append(lim, "candidate: "+l)
	}
	if b.Source.ArtifactID == c.Source.ArtifactID {
		lim = append(lim, "The base and the candidate are the same profile: every delta is zero.")
	}
	if b.Source.Producer != c.Source.Producer {
		lim = append(lim, fmt.Sprintf("The profiles come from different producers (%s, %s): their frames may be named and attributed differently.",
			cmp.Or(b.Source.Producer, "unknown"), cmp.Or(c.Source.Producer, "unknown")))
	}
	if bs, cs := b.SymbolizedFraction, c.SymbolizedFraction; bs < 0.999 || cs < 0.999 {
		lim = append(lim, fmt.Sprintf("Symbolization differs or is partial (base %.1f%%, candidate %.1f%% of the total in frames with symbols): frames without symbols match only by module and address, which a rebuilt binary does not keep, so their changes read as removals and additions.",
			100*bs, 100*cs))
	}
	if bt, ct := typeNames(base), typeNames(cand); bt != ct {
		lim = append(lim, fmt.Sprintf("The profiles have different sample types (base: %s; candidate: %s); this diff compares %s.", bt, ct, b.SampleType.Type))
	}
	bd, cd := b.DurationNanos, c.DurationNanos
	switch {
	case bd > 0 && cd > 0 && bd != cd:
		lim = append(lim, fmt.Sprintf("The profiles' durations differ (base %s, candidate %s) and values are not normalised: a longer profile has more samples everywhere. go tool pprof -normalize would scale the candidate to the base's total.",
			HumanDuration(bd), HumanDuration(cd)))
	case (bd > 0) != (cd > 0):
		lim = append(lim, "Only one profile records its duration; values are not normalised, so a longer capture shows more samples everywhere.")
	case b.SampleType.Total != c.SampleType.Total:
		lim = append(lim, fmt.Sprintf("Values are not normalised (as go tool pprof -diff_base without -normalize): the totals differ (base %d, candidate %d %s); -normalize would scale the candidate to the base's total.",
			b.SampleType.Total, c.SampleType.Total, cmp.Or(b.SampleType.Unit, "count")))
	}
	if b.SampleType.Total == 0 {
		lim = append(lim, "The base's total is zero under these filters: fractions are reported as 0.")
	}
	return lim
}

// typeNames lists a side's sample types ("cpu/nanoseconds, samples/count").
func typeNames(s *sideFrames) string {
	names := make([]string, len(s.types))
	for i, t := range s.types {
		names[i] = t.Type + "/" + cmp.Or(t.Unit, "count")
	}
	return strings.Join(names, ", ")
}

// signedFrac is v over total, keeping v's sign (0 when total is 0).
func signedFrac(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(v) / float64(total)
}

func (r *DiffResult) provenance() (string, string, string, any, Source, any, []string) {
	return r.Operation, r.OperationVersion, r.CorpusCommitID,
		map[string]any{"parameters": r.Parameters, "base": r.Base.Source}, r.Candidate.Source,
		map[string]any{"rows_total": r.Total, "returned": r.Returned, "truncated": r.Truncated,
			"base_symbolized_fraction": r.Base.SymbolizedFraction, "candidate_symbolized_fraction": r.Candidate.SymbolizedFraction}, r.Limitations
}

// Flags registers the flags of a diff request (`flameox analyze diff`,
// `fox-analyze diff`): --limit (default def), --sample-type, --focus,
// --ignore and --cursor. Base and candidate are the arguments.
func (r *DiffRequest) Flags(fs *pflag.FlagSet, def int) {
	limitFlag(fs, &r.Limit, def, "frames")
	fs.StringVar(&r.SampleType, "sample-type", "", "sample type (default: the base profile's default)")
	fs.StringVar(&r.Focus, "focus", "", "only samples with a frame matching this regexp, on both sides (like go tool pprof -focus)")
	fs.StringVar(&r.Ignore, "ignore", "", "drop samples with a frame matching this regexp, on both sides (like go tool pprof -ignore)")
	cursorFlag(fs, &r.Cursor)
}

// Format is the value format of a diff: its sample type's unit printed in
// the result's OutputUnit.
func (r *DiffResult) Format() ValueFormat {
	if r.OutputUnit == "" {
		return NewValueFormat(r.Base.SampleType.Unit, 0, r.Base.SampleType.Total)
	}
	return ValueFormat{from: r.Base.SampleType.Unit, to: r.OutputUnit}
}
