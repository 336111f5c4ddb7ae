package gotest

import (
	"bytes"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// rows writes measurements rows through schema.MeasurementWriter. The
// writer is opened on the first row, so an input without evidence leaves
// no table behind.
type rows struct{ adapter.Measurements }

func (r *rows) write(x schema.Measurement) error { return r.Write(x) }

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
		id, err := digest.Of(map[string]any{"run_id": r.RunID, "artifact_id": r.ArtifactID, "package": res.worker,
			"benchmark": full, "config": res.config, "unit": unit, "value_index": res.index})
		if err != nil {
			return err
		}
		val, idx, loops := v.Value, int32(res.index), uint64(rec.Iters)
		m := schema.Measurement{ID: id, Name: "gobench." + unit, Unit: unit, Aggregation: "mean", Scope: "benchmark",
			Subject: subject, WorkerID: res.worker, Float: &val, ValueIndex: &idx, Dimensions: d}
		if loops > 0 {
			m.LoopCount = &loops
		}
		err = r.write(m)
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
		id, err := digest.Of(map[string]any{"run_id": r.RunID, "artifact_id": r.ArtifactID, "package": clean(s.pkg), "name": name})
		if err != nil {
			return err
		}
		n := c.n
		if err := r.write(schema.Measurement{ID: id, Name: name, Unit: "count", Aggregation: "count", Scope: "test_suite",
			Subject: clean(s.pkg), Outcome: c.outcome, WorkerID: clean(s.pkg), Int: &n}); err != nil {
			return err
		}
	}
	return nil
}

// phases writes, for one package of a test2json stream, gotest.run_time:
// its test binary's run, from the package's "start" event to its own pass,
// fail or skip (both stamped by the go command); and, when the command's
// start is known, gotest.build_time: from that start to the "start" event
// (building, vetting and linking the test binary or finding it in the
// cache, and, with several packages, waiting for others). It reports which
// it wrote.
func (r *rows) phases(s *suite, started time.Time) (run, build bool, err error) {
	if s.start.IsZero() {
		return false, false, nil
	}
	write := func(name string, d time.Duration) error {
		id, err := digest.Of(map[string]any{"run_id": r.RunID, "artifact_id": r.ArtifactID, "package": clean(s.pkg), "name": name})
		if err != nil {
			return err
		}
		n := int64(d)
		return r.write(schema.Measurement{ID: id, Name: name, Unit: "ns", Aggregation: "value", Scope: "test_suite",
			Subject: clean(s.pkg), Outcome: s.outcome, WorkerID: clean(s.pkg), Int: &n})
	}
	if !s.end.IsZero() && !s.end.Before(s.start) {
		if err := write("gotest.run_time", s.end.Sub(s.start)); err != nil {
			return false, false, err
		}
		run = true
	}
	if !started.IsZero() && !s.start.Before(started) {
		if err := write("gotest.build_time", s.start.Sub(started)); err != nil {
			return run, false, err
		}
		build = true
	}
	return run, build, nil
}
