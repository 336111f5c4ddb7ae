package stacks

import (
	"cmp"
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// write emits frames, frame_measurements, the profile totals
// (measurements), call_edges and stacks through sink.
//
// The call edges and stacks need only the frame ids. When there are
// many (concurrentEdges), they are written on a goroutine of their own,
// encoded there (schema.Writer.EncodeInline), beside the ranking, the
// frames and the measurements: a deep 10^6-location profile's import
// otherwise spent most of its writing with one core idle. A smaller
// profile's tables are written one after another: the second table's
// row group in memory cost its import more, relative to `go tool pprof`'s
// memory, than the overlap saved (docs/performance.md, "Profiles with
// 10^6 locations"). Their writers are opened here first: a Sink need not
// be safe for concurrent use.
func (x *extraction) write(sink adapter.Sink) (*adapter.Extraction, error) {
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion, Rows: map[string]int64{}, Limitations: x.lim}
	ids := x.frameIDs()
	// The graph's last use was the ids: what the ranking and the frames
	// read of its nodes goes on without it (nodeTable).
	x.info, x.g = newNodeTable(x.g.Nodes), nil
	ew, err := sink.Table(schema.CallEdges)
	if err != nil {
		return nil, err
	}
	sw, err := sink.Table(schema.Stacks)
	if err != nil {
		return nil, err
	}
	if x.edges.len() < concurrentEdges {
		if err := x.ranked(sink, ids, res); err != nil {
			return nil, err
		}
		if err := x.sideRows(ew, sw, ids, res); err != nil {
			return nil, err
		}
	} else {
		ew.EncodeInline()
		sw.EncodeInline()
		sideRes := &adapter.Extraction{Rows: map[string]int64{}}
		var sideErr error
		var wg sync.WaitGroup
		wg.Go(func() { sideErr = x.sideRows(ew, sw, ids, sideRes) })
		err = x.ranked(sink, ids, res)
		wg.Wait()
		if err == nil {
			err = sideErr
		}
		if err != nil {
			return nil, err
		}
		for t, n := range sideRes.Rows {
			res.Rows[t] += n
		}
		res.Limitations = append(res.Limitations, sideRes.Limitations...)
	}
	if res.Limitations == nil {
		res.Limitations = []string{}
	}
	return res, nil
}

// concurrentEdges is the fewest call edges for which write writes the
// call edges and stacks beside the other tables.
var concurrentEdges = 1 << 18 // a variable for tests

// sideRows writes the call edges, then the stacks.
func (x *extraction) sideRows(ew, sw *schema.Writer, ids []string, res *adapter.Extraction) error {
	if err := x.edgeRows(ew, ids, res); err != nil {
		return err
	}
	return x.stackRows(sw, ids, res)
}

// ranked writes the tables that need the ranking: frames,
// frame_measurements and the profile totals.
func (x *extraction) ranked(sink adapter.Sink, ids []string, res *adapter.Extraction) error {
	r := x.rank(ids)
	if err := x.frames(sink, ids, r, res); err != nil {
		return err
	}
	// The frames were the nodes' last use (the call edges and stacks
	// never read them): they and their strings go before the
	// measurements are written beside the call edges.
	x.info = nodeTable{}
	if err := x.measurements(sink, ids, r, res); err != nil {
		return err
	}
	return x.totalRows(sink, r, res)
}

// frameIDs sets x.digests and returns the frame ids of x's nodes, hashed
// on two goroutines: a node's id is SHA-256 over a few fields, and a large
// profile has a million nodes.
//
// The ids' bytes are one allocation, each id a string over its part: a
// million ids allocated one by one were a million objects for the
// collector to mark in every cycle of the import.
func (x *extraction) frameIDs() []string {
	n := len(x.g.Nodes)
	ids := make([]string, n)
	x.digests = make([][sha256.Size]byte, n)
	const width = len(idPrefix) + 2*sha256.Size
	text := make([]byte, n*width)
	part := func(from, to int) {
		h := newHasher()
		for i := from; i < to; i++ {
			x.digests[i] = x.frameDigest(h, x.g.Nodes[i])
			b := text[i*width : (i+1)*width]
			copy(b, idPrefix)
			hex.Encode(b[len(idPrefix):], x.digests[i][:])
			ids[i] = unsafe.String(&b[0], width) // b is never written again
		}
	}
	if n < 4096 {
		part(0, n)
		return ids
	}
	var wg sync.WaitGroup
	wg.Go(func() { part(0, n/2) })
	part(n/2, n)
	wg.Wait()
	return ids
}

// doneTable writes this extraction's rows of a table and releases what
// the writer buffered for them (a large profile's tables do not all stay
// in memory until the generation is finished); a small profile's few
// rows stay buffered until the file is closed (schema.Writer.Shed).
func doneTable(w *schema.Writer) error { return w.Shed() }

func (x *extraction) metric(t int) (string, string) {
	st := x.p.SampleType[t]
	return st.Type, st.Unit
}

func (x *extraction) frames(sink adapter.Sink, ids []string, r *ranking, res *adapter.Extraction) error {
	w, err := sink.Table(schema.Frames)
	if err != nil {
		return err
	}
	c := struct{ id, fn, sys, src schema.StringCol }{
		w.StringCol("frame_id"), w.StringCol("function"), w.StringCol("system_name"), w.StringCol("source_state_id")}
	// The low-cardinality columns go by index into dictionaries made here,
	// one map lookup per frame, rather than as strings that the Parquet
	// writer would hash into its dictionary row by row on the goroutine
	// that encodes the table, which a 10^6-frame profile's frames wait on.
	nodes := &x.info
	lang, mod, file, build := interned(r.frames, func(i int32) string { return languageOf(nodes.fileOf(i)) }),
		interned(r.frames, nodes.module),
		interned(r.frames, nodes.fileOf),
		interned(r.frames, nodes.buildID)
	langCol, modCol, fileCol, buildCol := w.DictStringCol("language", lang.dict), w.DictStringCol("module", mod.dict),
		w.DictStringCol("file", file.dict), w.DictStringCol("build_id", build.dict)
	sym := w.DictStringCol("symbolization", []string{"full", "none"})
	w.SetString("artifact_id", x.in.ArtifactID)
	line, col, start := w.Int32Col("line"), w.Int32Col("column"), w.Int32Col("start_line")
	addr, rel := w.Uint64Col("address"), w.Uint64Col("module_relative_address")
	inl, chain := w.BoolCol("inlined"), w.StringListCol("inline_chain")
	index := w.Int32Col("frame_index")
	full, into := x.inlineLabels()
	// One row per frame id, hottest first: nodes that pprof keeps apart
	// but that share an id (same language and name) are one frame here,
	// and the analyses rely on frames holding each id once per artifact
	// and generation.
	for pos, i := range r.frames {
		if pos == firstRows || pos == topRows {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		c.id.Append(ids[i])
		lang.append(langCol, pos)
		c.fn.Append(nodes.nameOf(i)) // unsymbolized: "[module]" or "<unknown>", as pprof prints it
		if nodes.unsymbolized(i) {
			sym.Append(1)
		} else {
			sym.Append(0)
		}
		c.sys.AppendOrNull(nodes.systemName(i))
		mod.append(modCol, pos)
		file.append(fileCol, pos)
		build.append(buildCol, pos)
		c.src.AppendNull()
		line.AppendNull()
		col.AppendNull()
		if sl := nodes.startLine(i); sl > 0 {
			start.Append(int32(sl))
		} else {
			start.AppendNull()
		}
		// Function-granularity frames merge addresses and inline sites, as
		// pprof's default report does: inlined says whether every call into
		// the function was inlined (pprof's "(inline)"), inline_chain the
		// callers it was inlined into at every call; false with a chain is
		// "(partial-inline)" (inlineLabels, under the default sample type).
		addr.AppendNull()
		rel.AppendNull()
		inl.Append(full[i])
		if callers := into.of(int(i)); len(callers) == 0 {
			chain.AppendNull()
		} else {
			names := make([]string, len(callers))
			for k, c := range callers {
				names[k] = ids[c]
			}
			chain.Append(names)
		}
		index.Append(int32(pos))
		if err := w.EndRow(); err != nil {
			return err
		}
		res.Rows["frames"]++
	}
	return doneTable(w)
}

// measurements writes one row per frame, metric and thread/process.
func (x *extraction) measurements(sink adapter.Sink, ids []string, r *ranking, res *adapter.Extraction) error {
	w, err := sink.Table(schema.FrameMeasurements)
	if err != nil {
		return err
	}
	w.SetString("run_id", x.in.RunID)
	w.SetString("artifact_id", x.in.ArtifactID)
	d := x.dicts(w)
	fid := w.DictStringCol("frame_id", ids)
	self, incl, cnt := w.Int64Col("self_value"), w.Int64Col("inclusive_value"), w.Uint64Col("sample_count")
	phase, rank, index := w.StringCol("phase"), w.Int32Col("rank"), w.Int32Col("frame_index")
	row := func(e int32, t int) error {
		a := r.merged.keys[e].a
		fid.Append(int(a))
		d.row(t, int(r.merged.keys[e].tp))
		self.Append(r.merged.self(e)[t])
		incl.Append(r.merged.incl(e)[t])
		cnt.Append(uint64(r.merged.count(e)[t]))
		phase.AppendNull()
		rank.Append(r.rank[t][e])
		index.Append(r.index[a])
		res.Rows["frame_measurements"]++
		return w.EndRow()
	}
	// Every metric's first ranks, by rank, in row groups of their own (the
	// first firstRows, then the rest of the topRows); then the rest by
	// frame, so that each frame id appears once in that row group's
	// dictionary. A group ends only when other ranks follow it: a metric,
	// thread and process ranks as many frames as it has values (nframes).
	beyond := func(n int) bool {
		return slices.ContainsFunc(r.nframes, func(byType []int64) bool {
			return slices.ContainsFunc(byType, func(v int64) bool { return v > int64(n) })
		})
	}
	for _, tier := range [][2]int{{0, firstRows}, {firstRows, topRows}} {
		for t, byTP := range r.top {
			for _, es := range byTP {
				for _, e := range es[min(tier[0], len(es)):min(tier[1], len(es))] {
					if err := row(e, t); err != nil {
						return err
					}
				}
			}
		}
		if beyond(tier[1]) {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	for e := range int32(r.merged.len()) {
		for t := range r.rank {
			if r.rank[t][e] > topRows {
				if err := row(e, t); err != nil {
					return err
				}
			}
		}
	}
	return doneTable(w)
}

func (x *extraction) edgeRows(w *schema.Writer, ids []string, res *adapter.Extraction) error {
	w.SetString("run_id", x.in.RunID)
	w.SetString("artifact_id", x.in.ArtifactID)
	d := x.dicts(w)
	parent, child := w.DictStringCol("parent_frame_id", ids), w.DictStringCol("child_frame_id", ids)
	cnt, dur, val := w.Uint64Col("sample_count"), w.Int64Col("duration_ns"), w.Int64Col("value")
	for _, e := range x.edges.sorted() {
		k, in, n := x.edges.keys[e], x.edges.incl(e), x.edges.count(e)
		for t := range x.p.SampleType {
			if in[t] == 0 {
				continue
			}
			_, u := x.metric(t)
			parent.Append(int(k.a))
			child.Append(int(k.b))
			d.row(t, int(k.tp))
			cnt.Append(uint64(n[t]))
			dur.Append(nanos(in[t], u))
			val.Append(in[t])
			if err := w.EndRow(); err != nil {
				return err
			}
			res.Rows["call_edges"]++
		}
	}
	return doneTable(w)
}

// dictCols writes a row's metric, unit, thread and process by index into
// the profile's sample types and thread/process pairs.
type dictCols struct {
	met, unit, thr, proc schema.DictStringCol
	tps                  [][2]int // per tp: thread and process index, -1 for none
}

// dicts returns the metric, unit, thread and process handles of w.
func (x *extraction) dicts(w *schema.Writer) dictCols {
	var mets, units, thrs, procs []string
	for _, st := range x.p.SampleType {
		mets, units = append(mets, st.Type), append(units, st.Unit)
	}
	d := dictCols{tps: make([][2]int, len(x.tps))}
	seen := [2]map[string]int{{}, {}}
	for i, tp := range x.tps {
		for j, name := range tp {
			d.tps[i][j] = -1
			if name == "" {
				continue
			}
			k, ok := seen[j][name]
			if !ok {
				k = len(seen[j])
				seen[j][name] = k
				if j == 0 {
					thrs = append(thrs, name)
				} else {
					procs = append(procs, name)
				}
			}
			d.tps[i][j] = k
		}
	}
	d.met, d.unit = w.DictStringCol("metric", mets), w.DictStringCol("unit", units)
	d.thr, d.proc = w.DictStringCol("thread", thrs), w.DictStringCol("process", procs)
	return d
}

func (d dictCols) row(t, tp int) {
	d.met.Append(t)
	d.unit.Append(t)
	for i, c := range [2]schema.DictStringCol{d.thr, d.proc} {
		if j := d.tps[tp][i]; j >= 0 {
			c.Append(j)
		} else {
			c.AppendNull()
		}
	}
}

func nanos(v int64, unit string) int64 {
	if unit == "nanoseconds" {
		return v
	}
	return 0
}

func (x *extraction) stackRows(w *schema.Writer, ids []string, res *adapter.Extraction) error {
	w.SetString("run_id", x.in.RunID)
	w.SetString("artifact_id", x.in.ArtifactID)
	d := x.dicts(w)
	sid, leaf, frames := w.StringCol("stack_id"), w.DictStringCol("leaf_frame_id", ids), w.DictStringListCol("frame_ids", ids)
	start, dur, track := w.Int64Col("start_ns"), w.Int64Col("duration_ns"), w.Uint64Col("track_id")
	val, cnt := w.Int64Col("value"), w.Uint64Col("sample_count")
	h := newHasher()
	st := &x.stacks
	nt := len(x.p.SampleType)
	// The heaviest stacks of each sample type; ties keep the order the
	// stacks were met in, which is the profile's.
	kept := make([][]int32, nt)
	words := (st.len() + 63) / 64
	keep := make([]uint64, nt*words) // per type, one bit per stack: kept
	isKept := func(t int, i int32) bool { return keep[t*words+int(i)/64]&(1<<(i%64)) != 0 }
	for t := range nt {
		var keys []int32
		var total, sum int64
		for i := range int32(st.len()) {
			if v := st.value(i)[t]; v != 0 {
				keys = append(keys, i)
				total += abs(v)
			}
		}
		kept[t] = heaviest(keys, keptStacks, func(i int32) int64 { return abs(st.value(i)[t]) })
		for _, i := range kept[t] {
			sum += abs(st.value(i)[t])
			keep[t*words+int(i)/64] |= 1 << (i % 64)
		}
		if sum < total {
			m, u := x.metric(t)
			res.Limitations = append(res.Limitations, fmt.Sprintf("Stack examples for %s: the %d heaviest distinct stacks are stored, covering %.1f%% of the %s; open the native profile for the rest.",
				m, len(kept[t]), 100*float64(sum)/float64(total), u))
		}
	}
	// A stack's rows, one per sample type that keeps it, are adjacent:
	// its frame ids repeat on neighbouring rows, in one row group and one
	// page, where the dictionary or zstd finds them, rather than once per
	// type tens of MB apart. Stacks come in the order the first type
	// ranks them, then those only later types keep, in theirs.
	done := make([]bool, st.len())
	for _, ks := range kept {
		for _, i := range ks {
			if done[i] {
				continue
			}
			done[i] = true
			nodes, tp := st.stack(i), int(st.tp[i])
			for t := range nt {
				if !isKept(t, i) {
					continue
				}
				m, u := x.metric(t)
				v := st.value(i)[t]
				h.reset("stack/v2", x.in.ArtifactID, m, x.tps[tp][0], x.tps[tp][1])
				for _, n := range nodes {
					h.addDigest(&x.digests[n])
				}
				sid.Append(h.id())
				frames.Append(nodes)
				leaf.Append(int(nodes[len(nodes)-1]))
				start.Append(0)
				dur.Append(nanos(v, u))
				track.Append(0)
				d.row(t, tp)
				val.Append(v)
				cnt.Append(uint64(st.count(i)[t]))
				if err := w.EndRow(); err != nil {
					return err
				}
				res.Rows["stacks"]++
			}
		}
	}
	return doneTable(w)
}

// totalRows records, per sample type and thread/process, the profile's
// total (pprof's denominator, including samples without a stack), its
// sample records, its frames with a value, the |self| total of those
// with symbols and the smallest value of a frame (pprof's unit choice), as
// measurements named profile.total, profile.samples, profile.frames,
// profile.symbolized and profile.min_value.
func (x *extraction) totalRows(sink adapter.Sink, r *ranking, res *adapter.Extraction) error {
	w, err := sink.Table(schema.Measurements)
	if err != nil {
		return err
	}
	mw := schema.NewMeasurementWriter(w)
	tps := make([][2]string, 0, len(x.totals))
	for tp := range x.totals {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i][0]+"\x00"+tps[i][1] < tps[j][0]+"\x00"+tps[j][1] })
	for _, tp := range tps {
		tpi := x.tpIndex[tp]
		for t := range x.p.SampleType {
			m, u := x.metric(t)
			for _, row := range []struct {
				name, unit, agg string
				v               int64
			}{{"profile.total", u, "sum", x.totals[tp][t]}, {"profile.samples", "count", "sum", x.nsamples[tp][t]},
				{"profile.frames", "count", "count", r.nframes[tpi][t]}, {"profile.symbolized", u, "sum", r.symbolized[tpi][t]},
				{"profile.min_value", u, "min", r.minValue[tpi][t]}} {
				dims := map[string]string{"format": string(x.prof.Format)}
				if t == x.defaultType() {
					dims["default"] = "true"
				}
				if tp[0] != "" {
					dims["thread"] = tp[0]
				}
				if tp[1] != "" {
					dims["process"] = tp[1]
				}
				v := row.v
				if err := mw.Write(schema.Measurement{ID: hashID("measurement/v1", x.in.RunID, x.in.ArtifactID, row.name, m, tp[0], tp[1]),
					RunID: x.in.RunID, ArtifactID: x.in.ArtifactID, Name: row.name, Int: &v, Unit: row.unit,
					Aggregation: row.agg, Scope: "profile", Subject: m, Dimensions: dims}); err != nil {
					return err
				}
				res.Rows["measurements"]++
			}
		}
	}
	// The profile's duration, when it records one (pprof's "Duration:"
	// header line), once per profile.
	if d := x.p.DurationNanos; d > 0 {
		if err := mw.Write(schema.Measurement{ID: hashID("measurement/v1", x.in.RunID, x.in.ArtifactID, "profile.duration"),
			RunID: x.in.RunID, ArtifactID: x.in.ArtifactID, Name: "profile.duration", Int: &d, Unit: "nanoseconds",
			Aggregation: "value", Scope: "profile", Dimensions: map[string]string{"format": string(x.prof.Format)}}); err != nil {
			return err
		}
		res.Rows["measurements"]++
	}
	return doneTable(w)
}

// defaultType is pprof's default sample type: the profile's
// DefaultSampleType, else the last type.
func (x *extraction) defaultType() int {
	if d := x.p.DefaultSampleType; d != "" {
		for i, st := range x.p.SampleType {
			if st.Type == d {
				return i
			}
		}
	}
	return len(x.p.SampleType) - 1
}

// interning is one string column of the frames in frames order, as
// indices into its distinct values.
type interning struct {
	dict []string
	at   []int32 // per position in frames order: index into dict, -1 for ""
}

// interned interns value(node) of each of frames.
func interned(frames []int32, value func(int32) string) interning {
	in := interning{at: make([]int32, len(frames))}
	index := map[string]int32{}
	for pos, i := range frames {
		v := value(i)
		if v == "" {
			in.at[pos] = -1
			continue
		}
		k, ok := index[v]
		if !ok {
			k = int32(len(in.dict))
			index[v] = k
			in.dict = append(in.dict, v)
		}
		in.at[pos] = k
	}
	return in
}

// append appends the value at pos to col: null for an empty string, as
// StringCol.AppendOrNull does.
func (in interning) append(col schema.DictStringCol, pos int) {
	if k := in.at[pos]; k < 0 {
		col.AppendNull()
	} else {
		col.Append(int(k))
	}
}

// heaviest returns the k entries of keys (ascending) with the largest
// weight, heaviest first, ties in the order of keys: what a stable sort
// by weight, descending, then the first k give. It keeps a heap of the k
// best seen rather than sorting them all: a flat profile has a million
// stacks and keeps 5,000 (sorting them all took 0.2 s per sample type).
func heaviest(keys []int32, k int, weight func(int32) int64) []int32 {
	// better orders by weight, descending, then by key: a total order,
	// since keys are distinct.
	better := func(a, b int32) int {
		if c := cmp.Compare(weight(b), weight(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	if len(keys) <= k {
		slices.SortFunc(keys, better)
		return keys
	}
	h := &worstFirst{better: better}
	for _, key := range keys {
		switch {
		case h.Len() < k:
			heap.Push(h, key)
		case better(key, h.keys[0]) < 0:
			h.keys[0] = key
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.keys, better)
	return h.keys
}

// worstFirst is a heap of keys, the worst by better at its root.
type worstFirst struct {
	keys   []int32
	better func(a, b int32) int
}

func (h *worstFirst) Len() int           { return len(h.keys) }
func (h *worstFirst) Less(i, j int) bool { return h.better(h.keys[i], h.keys[j]) > 0 }
func (h *worstFirst) Swap(i, j int)      { h.keys[i], h.keys[j] = h.keys[j], h.keys[i] }
func (h *worstFirst) Push(x any)         { h.keys = append(h.keys, x.(int32)) }
func (h *worstFirst) Pop() any {
	x := h.keys[len(h.keys)-1]
	h.keys = h.keys[:len(h.keys)-1]
	return x
}
