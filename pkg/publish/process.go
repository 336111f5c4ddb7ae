package publish

import (
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/run"
)

// ProcessExtractor names the process adapter's evidence in rows.
const ProcessExtractor = "process"

// processMeasurements publishes the process adapter's evidence for an
// execution run: wall time, user and system CPU time, peak RSS and the exit
// code, as measured by the broker (wait4 rusage), scope "process".
func (r *runRows) processMeasurements(m *run.Manifest) error {
	p := m.Process
	if p == nil {
		return nil
	}
	w, err := r.st.Table(schema.Measurements)
	if err != nil {
		return err
	}
	rows := []struct {
		name, unit string
		v          int64
	}{
		{"process.wall_time", "ns", p.WallTimeNs},
		{"process.user_time", "ns", p.UserTimeNs},
		{"process.system_time", "ns", p.SystemTimeNs},
		{"process.peak_rss", "bytes", p.PeakRSSBytes},
		{"process.exit_code", "code", int64(p.ExitCode)},
	}
	for _, row := range rows {
		id, err := digest.Of(map[string]any{"run_id": m.RunID, "revision": m.Revision, "name": row.name})
		if err != nil {
			return err
		}
		w.StringCol("measurement_id").Append(id)
		w.StringCol("run_id").Append(m.RunID)
		w.StringCol("artifact_id").AppendNull()
		w.StringCol("name").Append(row.name)
		w.Int64Col("value_int").Append(row.v)
		w.Float64Col("value_float").AppendNull()
		w.StringCol("unit").Append(row.unit)
		w.StringCol("aggregation").Append("value")
		w.StringCol("scope").Append("process")
		subject := ""
		if m.Workload != nil {
			subject = m.Workload.Name
		}
		w.StringCol("subject").AppendOrNull(subject)
		w.StringCol("outcome").Append(m.ExecutionStatus)
		for _, c := range []string{"trial_id", "worker_id", "block_id", "variant_id", "phase"} {
			w.StringCol(c).AppendNull()
		}
		for _, c := range []string{"worker_run_index", "value_index", "order_in_block"} {
			w.Int32Col(c).AppendNull()
		}
		w.Uint64Col("loop_count").AppendNull()
		w.BoolCol("is_warmup").Append(false)
		w.StringMapCol("dimensions").AppendNull()
		w.StringCol("evidence_level").Append("observed")
		if err := w.EndRow(); err != nil {
			return err
		}
	}
	return nil
}
