package publish

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/identity"
	"github.com/flameox/flameox/pkg/run"
)

// runRows appends the rows one run revision contributes to the run tables:
// the run itself, its registrations, and (once per generation) the
// environment and source state it points to.
type runRows struct {
	rc   *runCols
	st   *Stage
	seen map[string]bool // environment and source-state ids met (ids are digests of distinct kinds of record)
	// published reports rows the corpus already holds (see known.go).
	published func(table, id string) bool
	// written lists the environment and source-state ids this generation
	// holds, by table.
	written map[string][]string
}

// once writes the row of a content-addressed table (environments, source
// states) the first time this generation meets its id, unless the corpus
// already holds it.
func (r *runRows) once(t *schema.Table, id string, write func() error) error {
	k := t.Name + "\x00" + id
	if r.seen[k] {
		return nil
	}
	r.seen[k] = true
	if r.published(t.Name, id) {
		return nil
	}
	if err := write(); err != nil {
		return err
	}
	r.written[t.Name] = append(r.written[t.Name], id)
	return nil
}

func newRunRows(st *Stage, published func(table, id string) bool) *runRows {
	return &runRows{st: st, seen: map[string]bool{}, published: published, written: map[string][]string{}}
}

func (r *runRows) add(m *run.Manifest) error {
	if err := r.run(m); err != nil {
		return err
	}
	if len(m.Artifacts) > 0 {
		if err := r.artifacts(m); err != nil {
			return err
		}
	}
	if e := m.Environment; e != nil {
		if err := r.once(schema.Environments, e.EnvironmentID, func() error { return r.environment(e) }); err != nil {
			return err
		}
	}
	if s := m.SourceState; s != nil {
		if err := r.once(schema.SourceStates, s.SourceStateID, func() error { return r.source(s) }); err != nil {
			return err
		}
	}
	return nil
}

// runCols holds the typed handles of the runs table, fetched once per
// generation (a name lookup per value would dominate large publications).
type runCols struct {
	w                                                          *schema.Writer
	runID, runType, exec, capture, validation, env, src, manif schema.StringCol
	revision, exitCode                                         schema.Int32Col
	createdAt, startedAt, finishedAt                           schema.TimeCol
	wall, user, sys, rss                                       schema.Int64Col
	params                                                     schema.StringMapCol
	text                                                       map[string]schema.StringCol
}

// textColumns are the runs table's optional text columns filled from the
// manifest (see runText).
var textColumns = []string{"workload_name", "workload_definition_id", "workload_instance_id", "measurement_protocol_id",
	"adapter", "collector", "collector_version", "signal", "cancellation_cause", "containment", "orchestrator", "provider",
	"lease_id", "worker_id", "orchestration_run_id", "execution_identity_id", "execution_identity_quality", "execution_identity_json",
	"reason", "error_code"}

func (r *runRows) runCols() (*runCols, error) {
	if r.rc != nil {
		return r.rc, nil
	}
	w, err := r.st.Table(schema.Runs)
	if err != nil {
		return nil, err
	}
	c := &runCols{w: w,
		runID: w.StringCol("run_id"), runType: w.StringCol("run_type"), exec: w.StringCol("execution_status"),
		capture: w.StringCol("capture_status"), validation: w.StringCol("validation_status"),
		env: w.StringCol("environment_id"), src: w.StringCol("source_state_id"), manif: w.StringCol("manifest_path"),
		revision: w.Int32Col("revision"), exitCode: w.Int32Col("exit_code"),
		createdAt: w.TimeCol("created_at"), startedAt: w.TimeCol("started_at"), finishedAt: w.TimeCol("finished_at"),
		wall: w.Int64Col("wall_time_ns"), user: w.Int64Col("user_time_ns"), sys: w.Int64Col("system_time_ns"),
		rss: w.Int64Col("peak_rss_bytes"), params: w.StringMapCol("workload_parameters"), text: map[string]schema.StringCol{},
	}
	for _, name := range textColumns {
		c.text[name] = w.StringCol(name)
	}
	r.rc = c
	return c, nil
}

// runText returns the optional text columns of a run.
func runText(m *run.Manifest) map[string]string {
	t := map[string]string{}
	if wl := m.Workload; wl != nil {
		t["workload_name"], t["workload_definition_id"], t["workload_instance_id"] = wl.Name, wl.DefinitionID, wl.InstanceID
		t["adapter"], t["collector"], t["collector_version"] = wl.Adapter, wl.Collector, wl.CollectorVersion
	}
	if p := m.Process; p != nil {
		t["signal"] = p.Signal
		switch {
		case p.TimedOut:
			t["cancellation_cause"] = "timeout"
		case p.Cancelled:
			t["cancellation_cause"] = "caller_cancelled"
		}
	}
	if m.Reason == "crash_recovery" {
		t["cancellation_cause"] = "crash_recovery"
	}
	t["reason"] = m.Reason
	if m.Error != nil {
		t["error_code"] = string(m.Error.Code)
	}
	if c := m.Containment; c != nil {
		t["containment"] = c.State
	}
	return t
}

func (r *runRows) run(m *run.Manifest) error {
	c, err := r.runCols()
	if err != nil {
		return err
	}
	c.runID.Append(m.RunID)
	c.revision.Append(int32(m.Revision))
	c.runType.Append(m.RunType)
	c.createdAt.Append(m.CreatedAt)
	timeOrNull(c.startedAt, m.StartedAt)
	timeOrNull(c.finishedAt, m.FinishedAt)
	c.exec.Append(m.ExecutionStatus)
	c.capture.Append(m.CaptureStatus)
	c.validation.Append(m.ValidationStatus)
	envID, srcID := "", ""
	if m.Environment != nil {
		envID = m.Environment.EnvironmentID
	}
	if m.SourceState != nil {
		srcID = m.SourceState.SourceStateID
	}
	c.env.Append(envID)
	c.src.AppendOrNull(srcID)
	if p := m.Process; p != nil {
		c.exitCode.Append(int32(p.ExitCode))
		c.wall.Append(p.WallTimeNs)
		c.user.Append(p.UserTimeNs)
		c.sys.Append(p.SystemTimeNs)
		c.rss.Append(p.PeakRSSBytes)
	} else {
		c.exitCode.AppendNull()
		c.wall.AppendNull()
		c.user.AppendNull()
		c.sys.AppendNull()
		c.rss.AppendNull()
	}
	if m.Workload != nil && m.Workload.Parameters != nil {
		c.params.Append(m.Workload.Parameters)
	} else {
		c.params.AppendNull()
	}
	text := runText(m)
	for _, name := range textColumns {
		c.text[name].AppendOrNull(text[name])
	}
	c.manif.Append(run.ManifestRel(m.RunID))
	if err := c.w.EndRow(); err != nil {
		return err
	}
	return r.processMeasurements(m)
}

func (r *runRows) artifacts(m *run.Manifest) error {
	w, err := r.st.Table(schema.Artifacts)
	if err != nil {
		return err
	}
	for _, a := range m.Artifacts {
		w.StringCol("registration_id").Append(a.RegistrationID)
		w.StringCol("run_id").Append(a.RunID)
		w.StringCol("artifact_id").Append(a.ArtifactID)
		w.StringCol("display_name").Append(a.DisplayName)
		w.StringCol("kind").Append(a.Kind)
		w.StringCol("media_type").Append(a.MediaType)
		w.StringCol("role").Append(a.Role)
		w.StringCol("producer").AppendOrNull(a.Producer)
		w.StringCol("producer_version").AppendOrNull(a.ProducerVersion)
		w.StringCol("sensitivity").Append(a.Sensitivity)
		w.Uint64Col("byte_length").Append(uint64(a.ByteLength))
		w.TimeCol("registered_at").Append(a.RegisteredAt)
		w.StringCol("payload_path").Append(a.PayloadPath)
		if err := w.EndRow(); err != nil {
			return err
		}
	}
	return nil
}

func (r *runRows) environment(e *identity.Environment) error {
	w, err := r.st.Table(schema.Environments)
	if err != nil {
		return err
	}
	w.StringCol("environment_id").Append(e.EnvironmentID)
	w.TimeCol("observed_at").Append(e.ObservedAt)
	w.StringCol("identity_quality").Append(string(e.IdentityQuality))
	w.StringCol("os").AppendOrNull(e.Fields["os"])
	w.StringCol("kernel_release").AppendOrNull(e.Fields["kernel"])
	w.StringCol("arch").AppendOrNull(e.Fields["arch"])
	w.StringCol("cpu_model").AppendOrNull(e.Fields["cpu_model"])
	if n, err := strconv.Atoi(e.Fields["cpu_logical"]); err == nil {
		w.Int32Col("cpu_count").Append(int32(n))
	} else {
		w.Int32Col("cpu_count").AppendNull()
	}
	if n, err := strconv.ParseInt(e.Fields["memory_total_bytes"], 10, 64); err == nil {
		w.Int64Col("memory_total_bytes").Append(n)
	} else {
		w.Int64Col("memory_total_bytes").AppendNull()
	}
	fields, err := json.Marshal(e.Fields)
	if err != nil {
		return err
	}
	w.StringCol("fields_json").Append(string(fields))
	w.StringListCol("missing_fields").Append(nonNil(e.MissingFields))
	return w.EndRow()
}

func (r *runRows) source(s *identity.SourceState) error {
	w, err := r.st.Table(schema.SourceStates)
	if err != nil {
		return err
	}
	w.StringCol("source_state_id").Append(s.SourceStateID)
	w.StringCol("identity_quality").Append(string(s.IdentityQuality))
	w.StringCol("repository_root").AppendOrNull(s.RepositoryRoot)
	w.StringCol("head_commit").AppendOrNull(s.HeadCommit)
	w.StringCol("diff_digest").AppendOrNull(s.DiffDigest)
	w.StringCol("untracked_digest").AppendOrNull(s.UntrackedDigest)
	w.StringCol("executable_path").AppendOrNull(s.ExecutablePath)
	w.StringCol("executable_digest").AppendOrNull(s.ExecutableDigest)
	w.StringCol("build_id").AppendOrNull(s.BuildID)
	fields, err := json.Marshal(s.Fields)
	if err != nil {
		return err
	}
	w.StringCol("fields_json").Append(string(fields))
	w.StringListCol("missing_fields").Append(nonNil(s.MissingFields))
	return w.EndRow()
}

func timeOrNull(c schema.TimeCol, t *time.Time) {
	if t == nil || t.IsZero() {
		c.AppendNull()
		return
	}
	c.Append(*t)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
