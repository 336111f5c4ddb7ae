package trace

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// Metric, unit and measurement names of the rows.
const (
	MetricWall = "trace.wall" // stacks, frame_measurements and nesting call_edges
	MetricFlow = "trace.flow" // flow call_edges: source slice's frame → destination's
	UnitNanos  = "nanoseconds"
	Scope      = "trace"

	NameOpCount     = "trace.op.count" // per (name, category): slices
	NameOpTotal     = "trace.op.total" // sum of durations
	NameOpSelf      = "trace.op.self"  // sum of durations less direct children's on the same track
	NameOpMax       = "trace.op.max"   // longest slice
	NameCatCount    = "trace.category.count"
	NameCatTotal    = "trace.category.total"
	NameCatSelf     = "trace.category.self"
	NameTrackSlices = "trace.track.slices"
	NameTrackBusy   = "trace.track.busy" // sum of the track's root slices
	NameSpan        = "trace.span"       // earliest timestamp to latest end
	NameSlices      = "trace.slices"
	NameEvents      = "trace.events" // per phase
	NameUnmatched   = "trace.unmatched"
	NameFlows       = "trace.flows" // bound flow edges per category
	NameCounter     = "trace.counter"
	NameInstant     = "trace.instant"
)

// hashID is "sha256:" + hex(sha256(parts joined by NUL)).
func hashID(parts ...string) string {
	h := sha256.New()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(p))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// frameID is a frame's identity: its category and name, the same in every
// trace, so diffs of two traces match operators.
func (m *model) frameID(f *frameInfo) string {
	return hashID("trace-frame/v1", m.strs[f.cat], m.strs[f.name])
}

func language(f *frameInfo) string {
	if f.device {
		return "device"
	}
	return "host"
}

// write emits every table's rows of the model.
func (m *model) write(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion, Rows: map[string]int64{}}
	ids := make([]string, len(m.frames))
	for i := range m.frames {
		ids[i] = m.frameID(&m.frames[i])
	}
	// Frames hottest first (self time, then total, then id).
	order := make([]int32, len(m.frames))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &m.frames[a], &m.frames[b]
		return cmp.Or(cmp.Compare(y.self, x.self), cmp.Compare(y.total, x.total), strings.Compare(ids[a], ids[b]))
	})
	index := make([]int32, len(m.frames))
	for pos, f := range order {
		index[f] = int32(pos)
	}
	steps := []func() error{
		func() error { return m.frameRows(sink, in, ids, order, res) },
		func() error { return m.frameMeasurementRows(sink, in, ids, order, index, res) },
		func() error { return m.edgeRows(sink, in, ids, res) },
		func() error { return m.measurementRows(ctx, sink, in, ids, order, res) },
		func() error { return m.stackRows(ctx, sink, in, ids, res) },
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := step(); err != nil {
			return nil, err
		}
	}
	res.Limitations = m.limitations()
	return res, nil
}

func (m *model) frameRows(sink adapter.Sink, in adapter.ExtractInput, ids []string, order []int32, res *adapter.Extraction) error {
	if len(order) == 0 {
		return nil
	}
	w, err := sink.Table(schema.Frames)
	if err != nil {
		return err
	}
	w.SetString("artifact_id", in.ArtifactID)
	id, lang, fn, mod, sym := w.StringCol("frame_id"), w.StringCol("language"), w.StringCol("function"), w.StringCol("module"), w.StringCol("symbolization")
	idx := w.Int32Col("frame_index")
	nulls := []interface{ AppendNull() }{w.StringCol("system_name"), w.StringCol("file"), w.Int32Col("line"), w.Int32Col("column"),
		w.Int32Col("start_line"), w.Uint64Col("address"), w.StringCol("build_id"), w.Uint64Col("module_relative_address"),
		w.BoolCol("inlined"), w.StringListCol("inline_chain"), w.StringCol("source_state_id")}
	for pos, i := range order {
		for _, c := range nulls {
			c.AppendNull()
		}
		f := &m.frames[i]
		id.Append(ids[i])
		lang.Append(language(f))
		fn.Append(m.strs[f.name])
		mod.AppendOrNull(m.strs[f.cat])
		sym.Append("full")
		idx.Append(int32(pos))
		if err := w.EndRow(); err != nil {
			return err
		}
		res.Rows["frames"]++
	}
	return w.Flush()
}

// frameMeasurementRows writes each frame's self and inclusive time over
// the whole trace (thread and process null), by rank.
func (m *model) frameMeasurementRows(sink adapter.Sink, in adapter.ExtractInput, ids []string, order, index []int32, res *adapter.Extraction) error {
	if len(order) == 0 {
		return nil
	}
	w, err := sink.Table(schema.FrameMeasurements)
	if err != nil {
		return err
	}
	w.SetString("run_id", in.RunID)
	w.SetString("artifact_id", in.ArtifactID)
	w.SetString("metric", MetricWall)
	w.SetString("unit", UnitNanos)
	fid := w.StringCol("frame_id")
	self, incl, cnt := w.Int64Col("self_value"), w.Int64Col("inclusive_value"), w.Uint64Col("sample_count")
	thr, proc, phase := w.StringCol("thread"), w.StringCol("process"), w.StringCol("phase")
	rank, fidx := w.Int32Col("rank"), w.Int32Col("frame_index")
	for pos, i := range order {
		f := &m.frames[i]
		fid.Append(ids[i])
		self.Append(f.self)
		incl.Append(f.incl)
		cnt.Append(uint64(f.count))
		thr.AppendNull()
		proc.AppendNull()
		phase.AppendNull()
		rank.Append(int32(pos + 1))
		fidx.Append(index[i])
		if err := w.EndRow(); err != nil {
			return err
		}
		res.Rows["frame_measurements"]++
	}
	return w.Flush()
}

// edgeRows writes the nesting edges (metric trace.wall: child slices under
// a parent frame and their time) and the flow edges (metric trace.flow:
// bound flow links, e.g. Kineto's ac2g from a launch to its kernel, and
// the destination slices' time).
func (m *model) edgeRows(sink adapter.Sink, in adapter.ExtractInput, ids []string, res *adapter.Extraction) error {
	if len(m.edges)+len(m.flows) == 0 {
		return nil
	}
	w, err := sink.Table(schema.CallEdges)
	if err != nil {
		return err
	}
	w.SetString("run_id", in.RunID)
	w.SetString("artifact_id", in.ArtifactID)
	parent, child := w.StringCol("parent_frame_id"), w.StringCol("child_frame_id")
	cnt, dur, val := w.Uint64Col("sample_count"), w.Int64Col("duration_ns"), w.Int64Col("value")
	met, unit, thr, proc := w.StringCol("metric"), w.StringCol("unit"), w.StringCol("thread"), w.StringCol("process")
	for _, set := range []struct {
		metric, unit string
		edges        map[[2]int32]*edge
	}{{MetricWall, UnitNanos, m.edges}, {MetricFlow, "count", m.flows}} {
		keys := make([][2]int32, 0, len(set.edges))
		for k := range set.edges {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [2]int32) int {
			return cmp.Or(strings.Compare(ids[a[0]], ids[b[0]]), strings.Compare(ids[a[1]], ids[b[1]]))
		})
		for _, k := range keys {
			e := set.edges[k]
			parent.Append(ids[k[0]])
			child.Append(ids[k[1]])
			cnt.Append(uint64(e.count))
			dur.Append(e.dur)
			if set.metric == MetricWall {
				val.Append(e.dur)
			} else {
				val.Append(e.count)
			}
			met.Append(set.metric)
			unit.Append(set.unit)
			thr.AppendNull()
			proc.AppendNull()
			if err := w.EndRow(); err != nil {
				return err
			}
			res.Rows["call_edges"]++
		}
	}
	return w.Flush()
}

// stackGroupRows is the row group size of the stacks rows.
const stackGroupRows = 8 << 10

// stackRows writes one row per slice, by start: frame_ids is its
// nesting chain on its track, root first.
func (m *model) stackRows(ctx context.Context, sink adapter.Sink, in adapter.ExtractInput, ids []string, res *adapter.Extraction) error {
	if len(m.slices) == 0 {
		return nil
	}
	w, err := sink.Table(schema.Stacks)
	if err != nil {
		return err
	}
	w.SetString("run_id", in.RunID)
	w.SetString("artifact_id", in.ArtifactID)
	w.SetString("metric", MetricWall)
	w.SetString("unit", UnitNanos)
	sid, leaf, frames := w.StringCol("stack_id"), w.DictStringCol("leaf_frame_id", ids), w.DictStringListCol("frame_ids", ids)
	start, dur, track := w.Int64Col("start_ns"), w.Int64Col("duration_ns"), w.Uint64Col("track_id")
	val, cnt := w.Int64Col("value"), w.Uint64Col("sample_count")
	var thrs, procs []string
	ti, pi := map[string]int{}, map[string]int{}
	tix, pix := make([]int, len(m.tracks)), make([]int, len(m.tracks))
	for i, t := range m.tracks {
		tix[i], pix[i] = dictIndex(ti, &thrs, t.thread), dictIndex(pi, &procs, t.process)
	}
	thr, proc := w.DictStringCol("thread", thrs), w.DictStringCol("process", procs)
	h := sha256.New()
	var buf []byte
	var chain []int32
	prefix := "trace-slice/v1\x00" + in.ArtifactID + "\x00"
	// Rows go in start order across tracks, in row groups of
	// stackGroupRows: the min/max statistics of start_ns then let a time
	// window read the few row groups it overlaps (frame_ids above all).
	order := make([]int32, len(m.slices))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &m.slices[a], &m.slices[b]
		return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(m.tracks[x.track].id, m.tracks[y.track].id), cmp.Compare(a, b))
	})
	for n, i32 := range order {
		i := int(i32)
		if n%stackGroupRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if n > 0 {
				if err := w.Flush(); err != nil {
					return err
				}
			}
		}
		s := &m.slices[i]
		chain = chain[:0]
		for p := int32(i); p >= 0; p = m.slices[p].parent {
			chain = append(chain, m.slices[p].frame)
		}
		slices.Reverse(chain)
		h.Reset()
		buf = append(buf[:0], prefix...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		h.Write(buf)
		buf = append(buf[:0], "sha256:"...)
		buf = hex.AppendEncode(buf, h.Sum(nil))
		sid.Append(string(buf))
		frames.Append(chain)
		leaf.Append(int(s.frame))
		start.Append(s.start)
		dur.Append(s.dur)
		track.Append(m.tracks[s.track].id)
		val.Append(s.dur)
		cnt.Append(1)
		for _, c := range []struct {
			col schema.DictStringCol
			i   int
		}{{thr, tix[s.track]}, {proc, pix[s.track]}} {
			if c.i < 0 {
				c.col.AppendNull()
			} else {
				c.col.Append(c.i)
			}
		}
		if err := w.EndRow(); err != nil {
			return err
		}
		res.Rows["stacks"]++
	}
	return w.Flush()
}

func dictIndex(idx map[string]int, dict *[]string, s string) int {
	if s == "" {
		return -1
	}
	if i, ok := idx[s]; ok {
		return i
	}
	idx[s] = len(*dict)
	*dict = append(*dict, s)
	return idx[s]
}

// measurementRows writes the per-name, per-category and per-track totals,
// the trace's own counts, its counters and its instants.
func (m *model) measurementRows(ctx context.Context, sink adapter.Sink, in adapter.ExtractInput, ids []string, order []int32, res *adapter.Extraction) error {
	mw := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	put := func(name, unit, agg, subject string, v int64, dims map[string]string, key ...string) error {
		x := v
		return mw.Write(schema.Measurement{ID: hashID(append([]string{"trace-measurement/v1", in.RunID, in.ArtifactID, name, subject}, key...)...),
			Name: name, Unit: unit, Aggregation: agg, Scope: Scope, Subject: subject, Int: &x, Dimensions: dims})
	}
	for _, i := range order {
		f := &m.frames[i]
		dims := map[string]string{"category": m.strs[f.cat], "class": f.class, "device": strconv.FormatBool(f.device), "frame_id": ids[i]}
		name := m.strs[f.name]
		for _, r := range []struct {
			n, unit, agg string
			v            int64
		}{{NameOpCount, "count", "count", f.count}, {NameOpTotal, UnitNanos, "sum", f.total}, {NameOpSelf, UnitNanos, "sum", f.self}, {NameOpMax, UnitNanos, "max", f.maxD}} {
			if err := put(r.n, r.unit, r.agg, name, r.v, dims, m.strs[f.cat]); err != nil {
				return err
			}
		}
	}
	type catTotal struct {
		count, total, self int64
		class              string
		device             bool
	}
	cats := map[int32]*catTotal{}
	for i := range m.frames {
		f := &m.frames[i]
		c := cats[f.cat]
		if c == nil {
			c = &catTotal{class: f.class}
			cats[f.cat] = c
		}
		c.count, c.total, c.self = c.count+f.count, c.total+f.total, c.self+f.self
		c.device = c.device || f.device
	}
	catKeys := make([]int32, 0, len(cats))
	for k := range cats {
		catKeys = append(catKeys, k)
	}
	slices.SortFunc(catKeys, func(a, b int32) int { return strings.Compare(m.strs[a], m.strs[b]) })
	for _, k := range catKeys {
		c := cats[k]
		dims := map[string]string{"class": c.class, "device": strconv.FormatBool(c.device)}
		for _, r := range []struct {
			n, unit, agg string
			v            int64
		}{{NameCatCount, "count", "count", c.count}, {NameCatTotal, UnitNanos, "sum", c.total}, {NameCatSelf, UnitNanos, "sum", c.self}} {
			if err := put(r.n, r.unit, r.agg, m.strs[k], r.v, dims); err != nil {
				return err
			}
		}
	}
	for i := range m.tracks {
		t := &m.tracks[i]
		n := 0
		if t.first >= 0 {
			n = t.last - t.first + 1
		}
		dims := map[string]string{"track_id": strconv.FormatUint(t.id, 10), "pid": clip(t.key.pid), "device": strconv.FormatBool(t.device)}
		if t.key.async != "" {
			dims["kind"] = "async"
		} else {
			dims["kind"], dims["tid"] = "thread", clip(t.key.tid)
		}
		for k, v := range map[string]string{"thread": t.thread, "process": t.process, "labels": t.labels, "process_sort_index": t.procSort, "thread_sort_index": t.thrSort} {
			if v != "" {
				dims[k] = v
			}
		}
		subject := t.process + " / " + t.thread
		id := strconv.FormatUint(t.id, 10)
		if err := put(NameTrackSlices, "count", "count", subject, int64(n), dims, id); err != nil {
			return err
		}
		if err := put(NameTrackBusy, UnitNanos, "sum", subject, t.busy, dims, id); err != nil {
			return err
		}
	}
	traceDims := map[string]string{"format": m.h.format, "gzip": strconv.FormatBool(m.gzip), "origin_ns": strconv.FormatInt(m.origin, 10)}
	for k, v := range map[string]string{"display_time_unit": m.h.displayTimeUnit, "schema_version": m.h.schemaVersion,
		"base_time_ns": m.h.baseTimeNanos, "trace_name": clip(m.h.traceName), "devices": strings.Join(m.h.devices, ", ")} {
		if v != "" {
			traceDims[k] = v
		}
	}
	for k, v := range m.h.distributed {
		traceDims["distributed."+k] = v
	}
	if err := put(NameSpan, UnitNanos, "value", "", m.span, traceDims); err != nil {
		return err
	}
	if err := put(NameSlices, "count", "count", "", m.total, map[string]string{"complete": strconv.FormatInt(m.total-m.beSlices-m.asyncSlices, 10),
		"begin_end": strconv.FormatInt(m.beSlices, 10), "async": strconv.FormatInt(m.asyncSlices, 10)}); err != nil {
		return err
	}
	for _, ph := range sortedKeys(m.phases) {
		if err := put(NameEvents, "count", "count", ph, m.phases[ph], nil); err != nil {
			return err
		}
	}
	for _, u := range []struct {
		kind string
		n    int64
	}{{"begin", m.unmatchedB}, {"end", m.unmatchedE}, {"async_begin", m.unmatchedAB}, {"async_end", m.unmatchedAE}, {"flow", m.unboundFlow}} {
		if u.n > 0 {
			if err := put(NameUnmatched, "count", "count", u.kind, u.n, nil); err != nil {
				return err
			}
		}
	}
	fc := make([]int32, 0, len(m.flowCats))
	for k := range m.flowCats {
		fc = append(fc, k)
	}
	slices.SortFunc(fc, func(a, b int32) int { return strings.Compare(m.strs[a], m.strs[b]) })
	for _, k := range fc {
		if err := put(NameFlows, "count", "count", m.strs[k], m.flowCats[k], nil); err != nil {
			return err
		}
	}
	if err := m.kinetoRows(put, ids, order); err != nil {
		return err
	}
	// Counters: value_index numbers each series' samples in time order.
	seq := map[[3]int32]int32{}
	for i, c := range m.counters {
		if i%(64<<10) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := [3]int32{c.track, c.name, c.series}
		n := seq[k]
		seq[k] = n + 1
		v := c.value
		t := &m.tracks[c.track]
		dims := map[string]string{"series": m.strs[c.series], "time_ns": strconv.FormatInt(c.ts, 10), "track_id": strconv.FormatUint(t.id, 10)}
		if t.process != "" {
			dims["process"] = t.process
		}
		if err := mw.Write(schema.Measurement{ID: hashID("trace-counter/v1", in.RunID, in.ArtifactID, strconv.Itoa(i)),
			Name: NameCounter, Unit: "value", Aggregation: "value", Scope: Scope, Subject: m.strs[c.name], Float: &v, ValueIndex: &n, Dimensions: dims}); err != nil {
			return err
		}
	}
	for i, p := range m.instants {
		n := int32(i)
		t := &m.tracks[p.track]
		dims := map[string]string{"category": m.strs[p.cat], "track_id": strconv.FormatUint(t.id, 10), "phase": string(p.ph)}
		if p.scope != "" {
			dims["scope"] = p.scope
		}
		ts := p.ts
		if err := mw.Write(schema.Measurement{ID: hashID("trace-instant/v1", in.RunID, in.ArtifactID, strconv.Itoa(i)),
			Name: NameInstant, Unit: UnitNanos, Aggregation: "value", Scope: Scope, Subject: m.strs[p.name], Int: &ts, ValueIndex: &n, Dimensions: dims}); err != nil {
			return err
		}
	}
	res.Rows["measurements"] = mw.N
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// limitations say what the rows are and what the file held that they do
// not.
func (m *model) limitations() []string {
	lim := []string{
		"Times are the file's microseconds (int or float, read digit by digit) as nanoseconds from the earliest timestamp (dimensions.origin_ns of trace.span); displayTimeUnit only changes how viewers print them.",
		"Each slice is a stacks row (metric trace.wall): frame_ids is its nesting chain on its track, root first; frames are one per name and category (function = name, module = category, language = device for accelerator work).",
		"trace.op.self is a slice's duration less its direct children's on the same track; device work (kernels, copies) on streams has its own tracks and is never a child of the host operator that launched it (the ac2g flows link them: call_edges metric trace.flow).",
	}
	add := func(ok bool, format string, a ...any) {
		if ok {
			lim = append(lim, fmt.Sprintf(format, a...))
		}
	}
	add(m.h.displayTimeUnit != "" && m.h.displayTimeUnit != "ms", "displayTimeUnit is %q: ignored for the values, which the format keeps in microseconds.", m.h.displayTimeUnit)
	add(m.unmatchedB > 0, "%d begin (B) events have no end on their thread: not stored as slices.", m.unmatchedB)
	add(m.unmatchedE > 0, "%d end (E) events have no open begin on their thread: ignored.", m.unmatchedE)
	add(m.unmatchedAB+m.unmatchedAE > 0, "%d async begin and %d async end events are unmatched: not stored as slices.", m.unmatchedAB, m.unmatchedAE)
	add(m.negDur > 0, "%d complete events have a negative dur: stored with duration 0.", m.negDur)
	add(m.noDur > 0, "%d complete events have no dur: stored with duration 0.", m.noDur)
	add(m.noTime > 0, "%d events have no ts: not read.", m.noTime)
	add(m.misnested > 0, "%d slices overlap the end of a slice they start in on their track (not properly nested): each is nested in the innermost slice that holds it whole, or is a root.", m.misnested)
	add(m.unboundFlow > 0, "%d flow events bind to no slice on their track: not counted as flow edges.", m.unboundFlow)
	add(m.badCounter > 0, "%d counter values are not numbers: not stored.", m.badCounter)
	add(m.badMeta > 0, "%d metadata events have unreadable args: ignored.", m.badMeta)
	add(m.badArgs > 0, "%d operator, device or [memory] events have args this reader cannot read (External id, Input Dims, Bytes): their links, shapes or bytes are not counted.", m.badArgs)
	add(m.kin.shapesDropped > 0, "%d operator slices have Input Dims beyond the %d distinct ones kept per operator (%d in all): not in trace.op.shapes.", m.kin.shapesDropped, maxShapesPerOp, maxShapeRows)
	add(m.kin.unlinked > 0 && m.kin.linked > 0, "%d ns of device work carry no External id of a host operator in this file: in no operator's device time.", m.kin.unlinked)
	add(m.kin.memUnbound > 0, "%d allocations ([memory] events) happen outside any host operator on their thread: counted in trace.memory.allocated only.", m.kin.memUnbound)
	if len(m.unknown) > 0 {
		var ps []string
		for _, k := range sortedKeys(m.unknown) {
			ps = append(ps, strconv.Quote(k)+" ×"+strconv.FormatInt(m.unknown[k], 10))
		}
		if len(ps) > 20 {
			ps = append(ps[:20], "…")
		}
		lim = append(lim, "Events of phases this reader does not store (kept in the native file): "+strings.Join(ps, ", ")+".")
	}
	add(len(m.h.skipped) > 0, "Top-level keys not read: %s.", strings.Join(m.h.skipped, ", "))
	add(m.h.unclosed, "The event array is not closed (the array format allows it, for a process that died while writing).")
	return lim
}
