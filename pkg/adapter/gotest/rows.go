package gotest

import (
	"bytes"
	"strconv"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// rows writes measurements rows through the table's typed columns. The
// writer is opened on the first row, so an input without evidence leaves
// no table behind.
type rows struct {
	sink       adapter.Sink
	runID, art string
	w          *schema.Writer
	n          int64
	str        map[string]schema.StringCol
	valInt     schema.Int64Col
	valFloat   schema.Float64Col
	idx, wri   schema.Int32Col
	order      schema.Int32Col
	loops      schema.Uint64Col
	warm       schema.BoolCol
	dims       schema.StringMapCol
}

var stringCols = []string{"measurement_id", "run_id", "artifact_id", "name", "unit", "aggregation", "scope",
	"subject", "outcome", "trial_id", "worker_id", "block_id", "variant_id", "phase", "evidence_level"}

func (r *rows) open() error {
	if r.w != nil {
		return nil
	}
	w, err := r.sink.Table(schema.Measurements)
	if err != nil {
		return err
	}
	r.w, r.str = w, map[string]schema.StringCol{}
	for _, c := range stringCols {
		r.str[c] = w.StringCol(c)
	}
	r.valInt, r.valFloat = w.Int64Col("value_int"), w.Float64Col("value_float")
	r.idx, r.wri, r.order = w.Int32Col("value_index"), w.Int32Col("worker_run_index"), w.Int32Col("order_in_block")
	r.loops, r.warm, r.dims = w.Uint64Col("loop_count"), w.BoolCol("is_warmup"), w.StringMapCol("dimensions")
	return nil
}

// row is one measurement; nil-able columns use "" / -1 for null.
type row struct {
	id, name, unit, aggregation, scope, subject, outcome, worker string
	intVal                                                       *int64
	floatVal                                                     float64
	index                                                        int
	loops                                                        uint64
	dims                                                         map[string]string
}

func (r *rows) write(x row) error {
	if err := r.open(); err != nil {
		return err
	}
	for c, v := range map[string]string{"measurement_id": x.id, "run_id": r.runID, "name": x.name, "unit": x.unit,
		"aggregation": x.aggregation, "scope": x.scope, "evidence_level": "observed"} {
		r.str[c].Append(v)
	}
	for c, v := range map[string]string{"artifact_id": r.art, "subject": x.subject, "outcome": x.outcome, "worker_id": x.worker} {
		r.str[c].AppendOrNull(v)
	}
	for _, c := range []string{"trial_id", "block_id", "variant_id", "phase"} {
		r.str[c].AppendNull()
	}
	if x.intVal != nil {
		r.valInt.Append(*x.intVal)
		r.valFloat.AppendNull()
	} else {
		r.valInt.AppendNull()
		r.valFloat.Append(x.floatVal)
	}
	if x.index >= 0 {
		r.idx.Append(int32(x.index))
	} else {
		r.idx.AppendNull()
	}
	r.wri.AppendNull()
	r.order.AppendNull()
	if x.loops > 0 {
		r.loops.Append(x.loops)
	} else {
		r.loops.AppendNull()
	}
	r.warm.Append(false)
	if len(x.dims) > 0 {
		r.dims.Append(x.dims)
	} else {
		r.dims.AppendNull()
	}
	r.n++
	return r.w.EndRow()
}

// bench writes one row per value of a benchmark result: the value in
// benchfmt's tidied unit (sec/op, B/op, B/s, custom units unchanged) as a
// float, aggregation "mean" (go test reports a mean over Iters loops).
func (r *rows) bench(res result) error {
	rec := res.rec
	full := clean(rec.Name.String())
	base, parts := rec.Name.Parts()
	dims := map[string]string{}
	for _, c := range rec.Config {
		dims[clean(c.Key)] = clean(string(c.Value))
	}
	subject := clean(string(base))
	dims["name.base"] = subject
	for i, part := range parts {
		switch {
		case part[0] == '-' && i == len(parts)-1:
			dims["gomaxprocs"] = clean(string(part[1:]))
		default:
			subject += clean(string(part))
			if k, v, ok := bytes.Cut(part[1:], []byte("=")); ok {
				dims["name."+clean(string(k))] = clean(string(v))
			} else {
				dims["name."+strconv.Itoa(i+1)] = clean(string(part[1:]))
			}
		}
	}
	for _, v := range res.values {
		d := make(map[string]string, len(dims)+1)
		for k, x := range dims {
			d[k] = x
		}
		if v.OrigUnit != "" {
			d["orig_unit"] = clean(v.OrigUnit)
		}
		unit := clean(v.Unit)
		id, err := digest.Of(map[string]any{"run_id": r.runID, "artifact_id": r.art, "package": res.worker,
			"benchmark": full, "unit": unit, "value_index": res.index})
		if err != nil {
			return err
		}
		err = r.write(row{id: id, name: "gobench." + unit, unit: unit, aggregation: "mean", scope: "benchmark",
			subject: subject, worker: res.worker, floatVal: v.Value, index: res.index, loops: uint64(rec.Iters), dims: d})
		if err != nil {
			return err
		}
	}
	return nil
}

// tests writes gotest.tests.passed|failed|skipped for one package.
func (r *rows) tests(s *suite) error {
	for _, c := range []struct {
		outcome string
		n       int64
	}{{"passed", s.passed}, {"failed", s.failed}, {"skipped", s.skipped}} {
		name := "gotest.tests." + c.outcome
		id, err := digest.Of(map[string]any{"run_id": r.runID, "artifact_id": r.art, "package": clean(s.pkg), "name": name})
		if err != nil {
			return err
		}
		n := c.n
		if err := r.write(row{id: id, name: name, unit: "count", aggregation: "count", scope: "test_suite",
			subject: clean(s.pkg), outcome: c.outcome, worker: clean(s.pkg), intVal: &n, index: -1}); err != nil {
			return err
		}
	}
	return nil
}
