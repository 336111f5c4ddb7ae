package analysis

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/workspace"
)

// A fresh `flameox analyze hotspots` on a small profile spent most of its
// time starting DuckDB (its catalog of built-in functions), binding four
// views and planning two queries, to read a few hundred rows that min/max
// statistics already locate (the extractor writes each metric's top ranks
// and the hottest frames in small row groups of their own). direct reads
// those row groups itself through pkg/evidence/schema, and answers exactly
// what qProfileRows and qHotspotsRanked answer (TestDirectMatchesDuckDB
// reads every page of every fixture both ways); where a page cannot be
// read by rank (several threads summed) it aggregates as qHotspots does.
// It applies without --focus/--ignore, to files of the current schema
// minors, and to few files (past directMaxFiles DuckDB's parallel scan of
// many footers is the better reader). Anything else, and any read error,
// goes to DuckDB.
type direct struct {
	commit  string
	files   map[string][]string
	release func()
}

// directMaxFiles bounds the files (of the four hotspots tables) the
// direct reader opens one after another.
const directMaxFiles = 64

// directAnswers counts the requests the direct reader answered (tests
// check that it was used).
var directAnswers atomic.Int64

// forceDuckDB makes Hotspots read through DuckDB even where the direct
// reader applies (tests compare the two).
var forceDuckDB bool

// errDirect marks a read the direct reader could not make; Hotspots then
// answers through DuckDB.
var errDirect = errors.New("direct read failed")

// openDirect pins HEAD under the shared retention lock, as
// query.OpenTables does, and returns nil when the direct reader does not
// apply to the snapshot.
func openDirect(ctx context.Context, ws *workspace.Workspace) (*direct, error) {
	release, err := ws.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		release()
		return nil, nil // DuckDB's path reports it
	}
	files, older, err := catalog.LiveFiles(snap, hotspotsTables...)
	n := 0
	for _, fs := range files {
		n += len(fs)
	}
	if err != nil || older || n > directMaxFiles {
		release()
		return nil, nil
	}
	return &direct{commit: snap.Commit.CommitID, files: files, release: release}, nil
}

func (d *direct) close() {
	if d.release != nil {
		d.release()
		d.release = nil
	}
}

// scan reads cols of the row groups keep accepts in every live file of
// table, in file order.
func (d *direct) scan(ctx context.Context, t *schema.Table, cols []string, keep func(schema.Group) bool, fn func([]any)) error {
	for _, path := range d.files[t.Name] {
		if err := schema.ScanGroups(ctx, t, path, cols, keep, func(r []any) error { fn(r); return nil }); err != nil {
			return errors.Join(errDirect, err)
		}
	}
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func i64(v any) int64 {
	n, _ := v.(int64)
	return n
}

// mayHold prunes a row group by run or artifact id, as qProfileRows'
// filter does.
func mayHold(runID, artID string) func(schema.Group) bool {
	return func(g schema.Group) bool {
		return (runID != "" && g.MayHoldString("run_id", runID)) || (artID != "" && g.MayHoldString("artifact_id", artID))
	}
}

// profileRows is qProfileRows without DuckDB.
func (d *direct) profileRows(ctx context.Context, runID, artID string) ([]profileRow, error) {
	match := func(r, a string) bool { return (runID != "" && r == runID) || (artID != "" && a == artID) }
	type reg struct{ display, kind, producer, role string }
	regs := map[[2]string]*reg{}
	first := func(dst *string, v any) { // any_value: the first non-null
		if s, ok := v.(string); ok && *dst == "" {
			*dst = s
		}
	}
	err := d.scan(ctx, schema.Artifacts, []string{"run_id", "artifact_id", "display_name", "kind", "producer", "role"}, mayHold(runID, artID), func(r []any) {
		k := [2]string{str(r[0]), str(r[1])}
		if !match(k[0], k[1]) {
			return
		}
		g := regs[k]
		if g == nil {
			g = &reg{}
			regs[k] = g
		}
		first(&g.display, r[2])
		first(&g.kind, r[3])
		first(&g.producer, r[4])
		first(&g.role, r[5])
	})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{"profile.total": true, "profile.samples": true, "profile.frames": true, "profile.symbolized": true, "profile.duration": true, "profile.min_value": true}
	var rows []profileRow
	keep := mayHold(runID, artID)
	cols := []string{"run_id", "artifact_id", "evidence_generation_id", "published_at", "name", "subject", "unit", "value_int", "dimensions", "scope"}
	err = d.scan(ctx, schema.Measurements, cols, func(g schema.Group) bool { return keep(g) && g.MayHoldString("scope", "profile") }, func(r []any) {
		art, isArt := r[1].(string)
		if str(r[9]) != "profile" || !names[str(r[4])] || !((runID != "" && str(r[0]) == runID) || (artID != "" && isArt && art == artID)) {
			return
		}
		p := profileRow{name: str(r[4]), subject: str(r[5]), unit: str(r[6]), value: i64(r[7])}
		p.src.RunID, p.src.ArtifactID, p.src.GenerationID = str(r[0]), art, str(r[2])
		if at, ok := r[3].(time.Time); ok {
			p.at = at.UnixMicro()
		}
		if dims, ok := r[8].(map[string]string); ok {
			p.thread, p.process, p.isDefault = dims["thread"], dims["process"], dims["default"] == "true"
		}
		if g := regs[[2]string{p.src.RunID, art}]; g != nil && isArt {
			p.src.DisplayName, p.src.Kind, p.src.Producer, p.role = g.display, g.kind, g.producer, g.role
		}
		rows = append(rows, p)
	})
	return rows, err
}

// rankedPage is qHotspotsRanked without DuckDB: the rows ranked in
// (offset, offset+n] of one metric, thread and process of src, with their
// frames, in rank order.
func (d *direct) rankedPage(ctx context.Context, src *Source, metric, thread, process string, offset, n int) ([]HotspotRow, error) {
	type top struct {
		id         string
		index      int32
		hasIndex   bool
		self, incl int64
		rank       int32
	}
	lo, hi := int32(offset+1), int32(offset+n)
	var tops []top
	cols := []string{"run_id", "artifact_id", "evidence_generation_id", "metric", "thread", "process", "rank", "frame_id", "frame_index", "self_value", "inclusive_value"}
	err := d.scan(ctx, schema.FrameMeasurements, cols, func(g schema.Group) bool {
		return g.MayHoldInt32("rank", lo, hi) && g.MayHoldString("run_id", src.RunID) && g.MayHoldString("artifact_id", src.ArtifactID) &&
			g.MayHoldString("evidence_generation_id", src.GenerationID) && g.MayHoldString("metric", metric)
	}, func(r []any) {
		rank, ok := r[6].(int32)
		if !ok || rank < lo || rank > hi || str(r[0]) != src.RunID || str(r[1]) != src.ArtifactID || str(r[2]) != src.GenerationID ||
			str(r[3]) != metric || str(r[4]) != thread || str(r[5]) != process {
			return
		}
		t := top{id: str(r[7]), self: i64(r[9]), incl: i64(r[10]), rank: rank}
		t.index, t.hasIndex = r[8].(int32)
		tops = append(tops, t)
	})
	if err != nil || len(tops) == 0 {
		return nil, err
	}
	sort.SliceStable(tops, func(i, j int) bool { return tops[i].rank < tops[j].rank })
	want := map[int32]bool{}
	minIdx, maxIdx := int32(0), int32(-1)
	for _, t := range tops {
		if !t.hasIndex {
			continue
		}
		if maxIdx < minIdx || t.index < minIdx {
			minIdx = t.index
		}
		if t.index > maxIdx {
			maxIdx = t.index
		}
		want[t.index] = true
	}
	ids := map[string]bool{}
	for _, t := range tops {
		ids[t.id] = true
	}
	frames := map[string][]Frame{}
	inline := map[string][]string{}
	if len(want) > 0 {
		cols := []string{"artifact_id", "evidence_generation_id", "frame_index", "frame_id", "function", "file", "start_line", "module", "symbolization", "inlined", "inline_chain"}
		err = d.scan(ctx, schema.Frames, cols, func(g schema.Group) bool {
			return g.MayHoldInt32("frame_index", minIdx, maxIdx) && g.MayHoldString("artifact_id", src.ArtifactID) && g.MayHoldString("evidence_generation_id", src.GenerationID)
		}, func(r []any) {
			idx, ok := r[2].(int32)
			id := str(r[3])
			if !ok || !want[idx] || !ids[id] || str(r[0]) != src.ArtifactID || str(r[1]) != src.GenerationID {
				return
			}
			f := Frame{FrameID: id, Function: str(r[4]), File: str(r[5]), Module: str(r[7])}
			if sl, ok := r[6].(int32); ok {
				f.StartLine = int(sl)
			}
			sym, ok := r[8].(string)
			f.Unsymbolized = !ok || sym == "none"
			label := ""
			if b, _ := r[9].(bool); b {
				label = "inline"
			} else if l, _ := r[10].([]string); len(l) > 0 {
				label = "partial-inline"
			}
			frames[id] = append(frames[id], f)
			inline[id] = append(inline[id], label)
		})
		if err != nil {
			return nil, err
		}
	}
	var out []HotspotRow
	for _, t := range tops {
		fs := frames[t.id]
		if len(fs) == 0 { // LEFT JOIN: no frame row
			out = append(out, HotspotRow{Frame: Frame{FrameID: t.id, Unsymbolized: true, Self: t.self, Inclusive: t.incl}})
			continue
		}
		for i, f := range fs {
			f.Self, f.Inclusive = t.self, t.incl
			out = append(out, HotspotRow{Frame: f, Inline: inline[t.id][i]})
		}
	}
	return out, nil
}

// resolve is resolve (scope.go) through the direct reader.
func (d *direct) resolve(ctx context.Context, input, thread, process string) (*scope, error) {
	input, runID, artID, err := parseInput(input)
	if err != nil {
		return nil, err
	}
	rows, err := d.profileRows(ctx, runID, artID)
	if err != nil {
		return nil, err
	}
	return scopeOf(input, runID, artID, rows, thread, process)
}

// storedHotspots is storedHotspots (hotspots.go) through the direct
// reader: by rank where it can, else aggregated.
func (d *direct) storedHotspots(ctx context.Context, sc *scope, st SampleType, req HotspotsRequest, limit, offset int, res *HotspotsResult) (float64, error) {
	rk := sc.ranks[st.Type]
	if !rk.usable() {
		rows, t, err := d.aggregatePage(ctx, sc.src, st.Type, req.Thread, req.Process, limit, offset)
		if err != nil {
			return 0, err
		}
		res.Total = t[0]
		for _, r := range rows {
			if len(res.Rows) == limit {
				res.Truncated = true
				break
			}
			r.SelfFraction, r.InclusiveFraction = frac(r.Self, st.Total), frac(r.Inclusive, st.Total)
			r.Rank = offset + len(res.Rows) + 1
			res.Rows = append(res.Rows, r)
		}
		res.OutputUnit = NewValueFormat(st.Unit, t[2], st.Total).to
		return frac(t[1], st.Total), nil
	}
	res.Total = rk.frames
	rows, err := d.rankedPage(ctx, sc.src, st.Type, rk.thread, rk.process, offset, limit+1)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		if len(res.Rows) == limit {
			res.Truncated = true
			break
		}
		r.SelfFraction, r.InclusiveFraction = frac(r.Self, st.Total), frac(r.Inclusive, st.Total)
		r.Rank = offset + len(res.Rows) + 1
		res.Rows = append(res.Rows, r)
	}
	minValue := rk.minValue
	if !rk.hasMin {
		minValue = pageMin(res.Rows)
	}
	res.OutputUnit = NewValueFormat(st.Unit, minValue, st.Total).to
	return frac(rk.symbolized, st.Total), nil
}

// joined is one row of qHotspots' materialized join j.
type joined struct {
	f                Frame
	function, module *string // null when the frame row is missing
	inline           string
	absSelf, absIncl int64
}

// aggregatePage is qHotspots without DuckDB, for the profiles a page
// cannot be read by rank from (several thread/process pairs summed): it
// sums frame_measurements by frame id under the filters, joins the frames
// and orders them as the query does (NULL function or module last), and
// returns the page with the join's count, symbolized total and smallest
// value (all 0 when the page is empty, as the query's rows carry them).
func (d *direct) aggregatePage(ctx context.Context, src *Source, metric, thread, process string, limit, offset int) ([]HotspotRow, [3]int64, error) {
	var totals [3]int64
	type sums struct{ self, incl int64 }
	agg := map[string]*sums{}
	var order []string
	cols := []string{"run_id", "artifact_id", "evidence_generation_id", "metric", "thread", "process", "frame_id", "self_value", "inclusive_value"}
	err := d.scan(ctx, schema.FrameMeasurements, cols, func(g schema.Group) bool {
		return g.MayHoldString("run_id", src.RunID) && g.MayHoldString("artifact_id", src.ArtifactID) &&
			g.MayHoldString("evidence_generation_id", src.GenerationID) && g.MayHoldString("metric", metric)
	}, func(r []any) {
		if str(r[0]) != src.RunID || str(r[1]) != src.ArtifactID || str(r[2]) != src.GenerationID || str(r[3]) != metric ||
			(thread != "" && str(r[4]) != thread) || (process != "" && str(r[5]) != process) {
			return
		}
		id := str(r[6])
		s := agg[id]
		if s == nil {
			s = &sums{}
			agg[id] = s
			order = append(order, id)
		}
		s.self += i64(r[7])
		s.incl += i64(r[8])
	})
	if err != nil {
		return nil, totals, err
	}
	type frameRow struct {
		f                Frame
		function, module *string
		inline           string
	}
	frames := map[string][]frameRow{}
	fcols := []string{"artifact_id", "evidence_generation_id", "frame_id", "function", "file", "start_line", "module", "symbolization", "inlined", "inline_chain"}
	err = d.scan(ctx, schema.Frames, fcols, func(g schema.Group) bool {
		return g.MayHoldString("artifact_id", src.ArtifactID) && g.MayHoldString("evidence_generation_id", src.GenerationID)
	}, func(r []any) {
		id := str(r[2])
		if s := agg[id]; s == nil || str(r[0]) != src.ArtifactID || str(r[1]) != src.GenerationID {
			return
		}
		fr := frameRow{f: Frame{FrameID: id, Function: str(r[3]), File: str(r[4]), Module: str(r[6])}}
		if v, ok := r[3].(string); ok {
			fr.function = &v
		}
		if v, ok := r[6].(string); ok {
			fr.module = &v
		}
		if sl, ok := r[5].(int32); ok {
			fr.f.StartLine = int(sl)
		}
		sym, ok := r[7].(string)
		fr.f.Unsymbolized = !ok || sym == "none"
		if b, _ := r[8].(bool); b {
			fr.inline = "inline"
		} else if l, _ := r[9].([]string); len(l) > 0 {
			fr.inline = "partial-inline"
		}
		frames[id] = append(frames[id], fr)
	})
	if err != nil {
		return nil, totals, err
	}
	var j []joined
	for _, id := range order {
		s := agg[id]
		if s.self == 0 && s.incl == 0 {
			continue
		}
		fs := frames[id]
		if len(fs) == 0 {
			fs = []frameRow{{f: Frame{FrameID: id, Unsymbolized: true}}}
		}
		for _, fr := range fs {
			row := joined{f: fr.f, function: fr.function, module: fr.module, inline: fr.inline, absSelf: abs(s.self), absIncl: abs(s.incl)}
			row.f.Self, row.f.Inclusive = s.self, s.incl
			j = append(j, row)
		}
	}
	var n, sym, mn int64
	for i, r := range j {
		n++
		if !r.f.Unsymbolized {
			sym += r.absSelf
		}
		v := r.absIncl
		if r.f.Self != 0 {
			v = r.absSelf
		}
		if i == 0 || v < mn {
			mn = v
		}
	}
	nullsLast := func(a, b *string) int { // ASC, NULLS LAST; 0 when equal
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return 1
		case b == nil:
			return -1
		case *a < *b:
			return -1
		case *a > *b:
			return 1
		}
		return 0
	}
	sort.SliceStable(j, func(x, y int) bool {
		a, b := &j[x], &j[y]
		if a.absSelf != b.absSelf {
			return a.absSelf > b.absSelf
		}
		if c := nullsLast(a.function, b.function); c != 0 {
			return c < 0
		}
		if a.absIncl != b.absIncl {
			return a.absIncl > b.absIncl
		}
		if c := nullsLast(a.module, b.module); c != 0 {
			return c < 0
		}
		return a.f.FrameID < b.f.FrameID
	})
	var out []HotspotRow
	for i := offset; i < len(j) && i < offset+limit+1; i++ {
		out = append(out, HotspotRow{Frame: j[i].f, Inline: j[i].inline})
	}
	if len(out) > 0 {
		totals = [3]int64{n, sym, mn}
	}
	return out, totals, nil
}
