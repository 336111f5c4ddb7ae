package publish

import (
	"strings"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/run"
)

// ProcessExtractor names the process adapter's evidence in rows.
const ProcessExtractor = "process"

// processMeasurements publishes the process adapter's evidence for an
// execution run (processRows), scope "process".
func (r *runRows) processMeasurements(m *run.Manifest) error {
	rows, err := processRows(m)
	if err != nil || len(rows) == 0 {
		return err
	}
	w, err := r.st.Table(schema.Measurements)
	if err != nil {
		return err
	}
	mw := schema.NewMeasurementWriter(w)
	for _, row := range rows {
		if err := mw.Write(row); err != nil {
			return err
		}
	}
	return nil
}

// processRows are the process facts as measured by the broker, each
// labelled with the processes it covers (dimension "process"):
//
//   - process.wall_time: the command flameox started ("started": the
//     collector when an adapter's collector launches the workload,
//     Bubblewrap when contained);
//   - process.exit_code: the workload's own ("workload") when the broker
//     read it below a collector that hides it (py-spy), else the started
//     command's;
//   - process.user_time, process.system_time and process.peak_rss: the
//     workload's own processes ("workload");
//   - collector.user_time, collector.system_time and collector.peak_rss:
//     the processes above the workload ("collector": the collector, and
//     Bubblewrap when contained), only when there are any, with
//     collector.exit_code, how the started command ended.
//
// Dimension "processes" names the command names covered, "source" how
// the figure was obtained (wait4, proc_stat, sampled, unknown).
func processRows(m *run.Manifest) ([]schema.Measurement, error) {
	p := m.Process
	if p == nil {
		return nil, nil
	}
	subject := ""
	if m.Workload != nil {
		subject = m.Workload.Name
	}
	cpuSource := p.CPUSource
	if cpuSource == "" {
		cpuSource = broker.CPUWait4 // runs recorded before the source was kept
	}
	started := map[string]string{"process": "started"}
	workload := map[string]string{"process": "workload"}
	if len(p.Processes) > 0 {
		workload["processes"] = strings.Join(p.Processes, ",")
	}
	type fig struct {
		name, unit string
		v          int64
		dims       map[string]string
	}
	with := func(d map[string]string, src string) map[string]string {
		out := map[string]string{"source": src}
		for k, v := range d {
			out[k] = v
		}
		return out
	}
	figs := []fig{
		{"process.wall_time", "ns", p.WallTimeNs, started},
		{"process.user_time", "ns", p.UserTimeNs, with(workload, cpuSource)},
		{"process.system_time", "ns", p.SystemTimeNs, with(workload, cpuSource)},
		{"process.peak_rss", "bytes", p.PeakRSSBytes, with(workload, p.PeakRSSSource)},
		{"process.exit_code", "code", int64(p.ExitCode), started},
	}
	if p.ExitSource == broker.ExitPidfd || p.ExitSource == broker.ExitProcStat {
		figs[len(figs)-1].dims = with(workload, p.ExitSource)
	}
	if c := p.Collector; c != nil {
		coll := map[string]string{"process": "collector", "processes": strings.Join(c.Processes, ",")}
		figs = append(figs,
			fig{"collector.user_time", "ns", c.UserTimeNs, with(coll, c.CPUSource)},
			fig{"collector.system_time", "ns", c.SystemTimeNs, with(coll, c.CPUSource)},
			fig{"collector.peak_rss", "bytes", c.PeakRSSBytes, with(coll, c.PeakRSSSource)},
			fig{"collector.exit_code", "code", int64(c.ExitCode), started})
	}
	rows := make([]schema.Measurement, 0, len(figs))
	for _, f := range figs {
		id, err := digest.Of(map[string]any{"run_id": m.RunID, "revision": m.Revision, "name": f.name})
		if err != nil {
			return nil, err
		}
		v := f.v
		rows = append(rows, schema.Measurement{ID: id, RunID: m.RunID, Name: f.name, Int: &v, Unit: f.unit,
			Aggregation: "value", Scope: "process", Subject: subject, Outcome: m.ExecutionStatus, Dimensions: f.dims})
	}
	return rows, nil
}
