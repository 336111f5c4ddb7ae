package pprof

import (
	"fmt"
	"sort"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/profile"
)

// write emits frames, frame_measurements, call_edges, stacks and the
// profile totals (measurements) through sink.
func (x *extraction) write(sink adapter.Sink) (*adapter.Extraction, error) {
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion, Rows: map[string]int64{}, Limitations: x.lim}
	ids := make([]string, len(x.g.Nodes))
	for i, n := range x.g.Nodes {
		ids[i] = x.frameID(n)
	}
	if err := x.frames(sink, ids, res); err != nil {
		return nil, err
	}
	if err := x.measurements(sink, ids, res); err != nil {
		return nil, err
	}
	if err := x.edgeRows(sink, ids, res); err != nil {
		return nil, err
	}
	if err := x.stackRows(sink, ids, res); err != nil {
		return nil, err
	}
	if err := x.totalRows(sink, res); err != nil {
		return nil, err
	}
	if res.Limitations == nil {
		res.Limitations = []string{}
	}
	return res, nil
}

// doneTable writes this extraction's rows of a table and releases what
// the writer buffered for them (a large profile's tables do not all stay
// in memory until the generation is finished).
func doneTable(w *schema.Writer) error { return w.Flush() }

func (x *extraction) metric(t int) (string, string) {
	st := x.p.SampleType[t]
	return st.Type, st.Unit
}

func (x *extraction) frames(sink adapter.Sink, ids []string, res *adapter.Extraction) error {
	w, err := sink.Table(schema.Frames)
	if err != nil {
		return err
	}
	used := map[int]bool{}
	for k := range x.nodes {
		used[k.a] = true
	}
	c := struct{ id, lang, fn, sys, mod, file, build, sym, src, art schema.StringCol }{
		w.StringCol("frame_id"), w.StringCol("language"), w.StringCol("function"), w.StringCol("system_name"),
		w.StringCol("module"), w.StringCol("file"), w.StringCol("build_id"), w.StringCol("symbolization"),
		w.StringCol("source_state_id"), w.StringCol("artifact_id")}
	line, col, start := w.Int32Col("line"), w.Int32Col("column"), w.Int32Col("start_line")
	addr, rel := w.Uint64Col("address"), w.Uint64Col("module_relative_address")
	inl, chain := w.BoolCol("inlined"), w.StringListCol("inline_chain")
	for i, n := range x.g.Nodes {
		if !used[i] {
			continue
		}
		c.id.Append(ids[i])
		c.lang.AppendOrNull(language(n))
		if n.Unsymbolized {
			c.fn.Append(n.Name) // "[module]" or "<unknown>", as pprof prints it
			c.sym.Append("none")
		} else {
			c.fn.Append(n.Name)
			c.sym.Append("full")
		}
		c.sys.AppendOrNull(n.SystemName)
		c.mod.AppendOrNull(n.Module)
		c.file.AppendOrNull(n.File)
		c.build.AppendOrNull(n.BuildID)
		c.src.AppendNull()
		c.art.Append(x.in.ArtifactID)
		line.AppendNull()
		col.AppendNull()
		if n.StartLine > 0 {
			start.Append(int32(n.StartLine))
		} else {
			start.AppendNull()
		}
		// Function-granularity frames merge addresses and inline sites, as
		// pprof's default report does.
		addr.AppendNull()
		rel.AppendNull()
		inl.AppendNull()
		chain.AppendNull()
		if err := w.EndRow(); err != nil {
			return err
		}
		res.Rows["frames"]++
	}
	return doneTable(w)
}

func (x *extraction) measurements(sink adapter.Sink, ids []string, res *adapter.Extraction) error {
	w, err := sink.Table(schema.FrameMeasurements)
	if err != nil {
		return err
	}
	run, art, fid, met, unit := w.StringCol("run_id"), w.StringCol("artifact_id"), w.StringCol("frame_id"), w.StringCol("metric"), w.StringCol("unit")
	self, incl, cnt := w.Int64Col("self_value"), w.Int64Col("inclusive_value"), w.Uint64Col("sample_count")
	thr, proc, phase := w.StringCol("thread"), w.StringCol("process"), w.StringCol("phase")
	for _, k := range sortedKeys(x.nodes) {
		a := x.nodes[k]
		for t := range x.p.SampleType {
			if a.incl[t] == 0 && a.self[t] == 0 {
				continue
			}
			m, u := x.metric(t)
			run.Append(x.in.RunID)
			art.Append(x.in.ArtifactID)
			fid.Append(ids[k.a])
			met.Append(m)
			unit.Append(u)
			self.Append(a.self[t])
			incl.Append(a.incl[t])
			cnt.Append(a.count[t])
			thr.AppendOrNull(x.tps[k.tp][0])
			proc.AppendOrNull(x.tps[k.tp][1])
			phase.AppendNull()
			if err := w.EndRow(); err != nil {
				return err
			}
			res.Rows["frame_measurements"]++
		}
	}
	return doneTable(w)
}

func (x *extraction) edgeRows(sink adapter.Sink, ids []string, res *adapter.Extraction) error {
	w, err := sink.Table(schema.CallEdges)
	if err != nil {
		return err
	}
	run, art, parent, child := w.StringCol("run_id"), w.StringCol("artifact_id"), w.StringCol("parent_frame_id"), w.StringCol("child_frame_id")
	cnt, dur, val := w.Uint64Col("sample_count"), w.Int64Col("duration_ns"), w.Int64Col("value")
	met, unit, thr, proc := w.StringCol("metric"), w.StringCol("unit"), w.StringCol("thread"), w.StringCol("process")
	for _, k := range sortedKeys(x.edges) {
		a := x.edges[k]
		for t := range x.p.SampleType {
			if a.incl[t] == 0 {
				continue
			}
			m, u := x.metric(t)
			run.Append(x.in.RunID)
			art.Append(x.in.ArtifactID)
			parent.Append(ids[k.a])
			child.Append(ids[k.b])
			cnt.Append(a.count[t])
			dur.Append(nanos(a.incl[t], u))
			met.Append(m)
			unit.Append(u)
			val.Append(a.incl[t])
			thr.AppendOrNull(x.tps[k.tp][0])
			proc.AppendOrNull(x.tps[k.tp][1])
			if err := w.EndRow(); err != nil {
				return err
			}
			res.Rows["call_edges"]++
		}
	}
	return doneTable(w)
}

func nanos(v int64, unit string) int64 {
	if unit == "nanoseconds" {
		return v
	}
	return 0
}

func (x *extraction) stackRows(sink adapter.Sink, ids []string, res *adapter.Extraction) error {
	w, err := sink.Table(schema.Stacks)
	if err != nil {
		return err
	}
	sid, run, art, leaf := w.StringCol("stack_id"), w.StringCol("run_id"), w.StringCol("artifact_id"), w.StringCol("leaf_frame_id")
	frames := w.StringListCol("frame_ids")
	start, dur, track := w.Int64Col("start_ns"), w.Int64Col("duration_ns"), w.Uint64Col("track_id")
	met, unit, val, cnt := w.StringCol("metric"), w.StringCol("unit"), w.Int64Col("value"), w.Uint64Col("sample_count")
	thr, proc := w.StringCol("thread"), w.StringCol("process")
	all := make([]string, 0, len(x.stacks))
	for k := range x.stacks {
		all = append(all, k)
	}
	sort.Strings(all)
	for t := range x.p.SampleType {
		// The heaviest stacks of this sample type, ties broken by key.
		keys := make([]string, 0, len(all))
		var total, kept int64
		for _, k := range all {
			if v := x.stacks[k].value[t]; v != 0 {
				keys = append(keys, k)
				total += abs(v)
			}
		}
		sort.SliceStable(keys, func(i, j int) bool { return abs(x.stacks[keys[i]].value[t]) > abs(x.stacks[keys[j]].value[t]) })
		if len(keys) > keptStacks {
			keys = keys[:keptStacks]
		}
		m, u := x.metric(t)
		for _, k := range keys {
			st := x.stacks[k]
			kept += abs(st.value[t])
			fs := make([]string, len(st.nodes))
			for i, n := range st.nodes {
				fs[i] = ids[n]
			}
			sid.Append(hashID(append([]string{"stack/v1", x.in.ArtifactID, m, st.thread, st.process}, fs...)...))
			run.Append(x.in.RunID)
			art.Append(x.in.ArtifactID)
			frames.Append(fs)
			leaf.Append(fs[len(fs)-1])
			start.Append(0)
			dur.Append(nanos(st.value[t], u))
			track.Append(0)
			met.Append(m)
			unit.Append(u)
			val.Append(st.value[t])
			cnt.Append(st.count[t])
			thr.AppendOrNull(st.thread)
			proc.AppendOrNull(st.process)
			if err := w.EndRow(); err != nil {
				return err
			}
			res.Rows["stacks"]++
		}
		if kept < total {
			res.Limitations = append(res.Limitations, fmt.Sprintf("Stack examples for %s: the %d heaviest distinct stacks are stored, covering %.1f%% of the %s; open the native profile for the rest.",
				m, len(keys), 100*float64(kept)/float64(total), u))
		}
	}
	return doneTable(w)
}

// totalRows records, per sample type and thread/process, the profile's
// total (pprof's denominator, including samples without a stack) and its
// sample records, as measurements named profile.total and profile.samples.
func (x *extraction) totalRows(sink adapter.Sink, res *adapter.Extraction) error {
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
		for t := range x.p.SampleType {
			m, u := x.metric(t)
			for _, row := range []struct {
				name, unit string
				v          int64
			}{{"profile.total", u, x.totals[tp][t]}, {"profile.samples", "count", x.nsamples[tp][t]}} {
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
					Aggregation: "sum", Scope: "profile", Subject: m, Dimensions: dims}); err != nil {
					return err
				}
				res.Rows["measurements"]++
			}
		}
	}
	return doneTable(w)
}

var _ = profile.Detect

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
