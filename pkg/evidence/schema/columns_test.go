package schema

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// measurementCols are the typed handles a measurements extractor would hold.
type measurementCols struct {
	id, run, artifact, name, unit, agg, scope, subject, outcome, trial, worker StringCol
	valueInt                                                                   Int64Col
	valueFloat                                                                 Float64Col
	workerRun, valueIndex, order                                               Int32Col
	loops                                                                      Uint64Col
	warmup                                                                     BoolCol
	block, variant, phase, level                                               StringCol
	dims                                                                       StringMapCol
}

func measurementHandles(w *Writer) measurementCols {
	return measurementCols{
		id: w.StringCol("measurement_id"), run: w.StringCol("run_id"), artifact: w.StringCol("artifact_id"),
		name: w.StringCol("name"), unit: w.StringCol("unit"), agg: w.StringCol("aggregation"),
		scope: w.StringCol("scope"), subject: w.StringCol("subject"), outcome: w.StringCol("outcome"),
		trial: w.StringCol("trial_id"), worker: w.StringCol("worker_id"),
		valueInt: w.Int64Col("value_int"), valueFloat: w.Float64Col("value_float"),
		workerRun: w.Int32Col("worker_run_index"), valueIndex: w.Int32Col("value_index"),
		order: w.Int32Col("order_in_block"), loops: w.Uint64Col("loop_count"), warmup: w.BoolCol("is_warmup"),
		block: w.StringCol("block_id"), variant: w.StringCol("variant_id"), phase: w.StringCol("phase"),
		level: w.StringCol("evidence_level"), dims: w.StringMapCol("dimensions"),
	}
}

// appendMeasurement appends one pyperf-like value through the typed handles.
func (c *measurementCols) append(id, run string, i int) {
	c.id.Append(id)
	c.run.Append(run)
	c.artifact.Append("sha256:00ff")
	c.name.Append("pyperf.value")
	c.unit.Append("ns")
	c.agg.Append("value")
	c.scope.Append("benchmark")
	c.subject.Append("bm_json_loads")
	c.outcome.AppendNull()
	c.trial.AppendNull()
	c.worker.Append("w3")
	c.valueInt.Append(int64(1000 + i%977))
	c.valueFloat.AppendNull()
	c.workerRun.Append(int32(i % 20))
	c.valueIndex.Append(int32(i % 3))
	c.order.AppendNull()
	c.loops.Append(1 << 10)
	c.warmup.Append(i%20 == 0)
	c.block.AppendNull()
	c.variant.AppendOrNull("")
	c.phase.Append("steady")
	c.level.Append("observed")
	c.dims.AppendNull()
}

func TestTypedHandles(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(Measurements, &buf, Options{Common: testCommon, RowGroupRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	c := measurementHandles(w)
	for i := range 2500 {
		c.append("m", "r", i)
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); n != 2500 || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	if err := w.EndRow(); err != errClosed {
		t.Errorf("EndRow after Close = %v", err)
	}
}

func TestWriterMisuse(t *testing.T) {
	if _, err := NewWriter(Runs, io.Discard, Options{}); err == nil {
		t.Error("NewWriter without Common succeeded")
	}
	newW := func() *Writer {
		w, err := NewWriter(EvidenceRefs, io.Discard, Options{Common: testCommon})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	w := newW()
	if err := w.AppendRow([]any{"finding", "f1", "run", 42, "supports"}); err == nil ||
		!strings.Contains(err.Error(), "evidence_refs.ref_id: cannot store int in a string column") {
		t.Errorf("AppendRow(bad type) = %v", err)
	}
	if err := w.AppendRow([]any{"finding", "f1", "run", "r1", "supports"}); err != nil {
		t.Errorf("AppendRow after a rejected row: %v", err)
	}
	if err := w.AppendRow([]any{"finding", nil, "run", "r1", "supports"}); err == nil {
		t.Error("AppendRow(null in non-null column) succeeded")
	}
	if n, err := w.Close(); n != 1 || err != nil {
		t.Errorf("Close() = %d, %v", n, err)
	}

	w = newW()
	w.StringCol("owner_type").Append("finding")
	if err := w.EndRow(); err == nil || !strings.Contains(err.Error(), "column owner_id has 0 values, want 1") {
		t.Errorf("EndRow(missing values) = %v", err)
	}
	if _, err := w.Close(); err == nil {
		t.Error("Close after a failed row succeeded")
	}

	w = newW()
	for _, name := range []string{"owner_type", "ref_type", "ref_id", "relation"} {
		w.StringCol(name).Append("x")
	}
	w.StringCol("owner_id").AppendNull()
	if err := w.EndRow(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err == nil || !strings.Contains(err.Error(), "non-nullable column owner_id") {
		t.Errorf("Close with a null owner_id = %v", err)
	}

	for _, bad := range []func(w *Writer){
		func(w *Writer) { w.StringCol("nope") },
		func(w *Writer) { w.Int64Col("owner_id") },
		func(w *Writer) { w.StringCol("evidence_generation_id") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("handle getter did not panic")
				}
			}()
			bad(newW())
		}()
	}
}

func BenchmarkWriteMeasurements(b *testing.B) {
	const rows = 100_000
	ids := make([]string, rows)
	runs := make([]string, rows/10)
	for i := range ids {
		ids[i] = strings.Repeat("0", 48) + time.Duration(i).String()
	}
	for i := range runs {
		runs[i] = "0190c7e2-7a1b-7c3d-8e4f-" + time.Duration(100000+i).String()
	}
	cw := &countingWriter{}
	b.ReportAllocs()
	for b.Loop() {
		w, err := NewWriter(Measurements, cw, Options{Common: testCommon})
		if err != nil {
			b.Fatal(err)
		}
		c := measurementHandles(w)
		for i := range rows {
			c.append(ids[i], runs[i/10], i)
			if err := w.EndRow(); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cw.n)/float64(b.N), "file-bytes")
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
