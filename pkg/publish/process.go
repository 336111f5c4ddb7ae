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
	mw := schema.NewMeasurementWriter(w)
	subject := ""
	if m.Workload != nil {
		subject = m.Workload.Name
	}
	for _, row := range []struct {
		name, unit string
		v          int64
	}{
		{"process.wall_time", "ns", p.WallTimeNs},
		{"process.user_time", "ns", p.UserTimeNs},
		{"process.system_time", "ns", p.SystemTimeNs},
		{"process.peak_rss", "bytes", p.PeakRSSBytes},
		{"process.exit_code", "code", int64(p.ExitCode)},
	} {
		id, err := digest.Of(map[string]any{"run_id": m.RunID, "revision": m.Revision, "name": row.name})
		if err != nil {
			return err
		}
		v := row.v
		if err := mw.Write(schema.Measurement{ID: id, RunID: m.RunID, Name: row.name, Int: &v, Unit: row.unit,
			Aggregation: "value", Scope: "process", Subject: subject, Outcome: m.ExecutionStatus}); err != nil {
			return err
		}
	}
	return nil
}
