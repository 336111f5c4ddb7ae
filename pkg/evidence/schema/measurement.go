package schema

// Measurement is one row of the measurements table, for the extractors
// that write them (process facts, profile totals, benchmarks, ...). Empty
// strings and nil pointers are nulls.
type Measurement struct {
	ID, RunID, ArtifactID, Name string
	Int                         *int64
	Float                       *float64
	Unit, Aggregation, Scope    string
	Subject, Outcome            string
	TrialID, WorkerID           string
	WorkerRunIndex, ValueIndex  *int32
	LoopCount                   *uint64
	IsWarmup                    bool
	BlockID, VariantID, Phase   string
	OrderInBlock                *int32
	Dimensions                  map[string]string
	EvidenceLevel               string // default "observed"
}

// MeasurementWriter appends Measurements through the table's typed
// columns, fetched once.
type MeasurementWriter struct {
	w                                           *Writer
	id, run, art, name, unit, agg, scope, subj  StringCol
	outcome, trial, worker, block, variant, phs StringCol
	level                                       StringCol
	vi                                          Int64Col
	vf                                          Float64Col
	wri, vix, order                             Int32Col
	loops                                       Uint64Col
	warm                                        BoolCol
	dims                                        StringMapCol
}

// NewMeasurementWriter wraps a writer of the measurements table.
func NewMeasurementWriter(w *Writer) *MeasurementWriter {
	return &MeasurementWriter{w: w,
		id: w.StringCol("measurement_id"), run: w.StringCol("run_id"), art: w.StringCol("artifact_id"),
		name: w.StringCol("name"), unit: w.StringCol("unit"), agg: w.StringCol("aggregation"), scope: w.StringCol("scope"),
		subj: w.StringCol("subject"), outcome: w.StringCol("outcome"), trial: w.StringCol("trial_id"),
		worker: w.StringCol("worker_id"), block: w.StringCol("block_id"), variant: w.StringCol("variant_id"),
		phs: w.StringCol("phase"), level: w.StringCol("evidence_level"),
		vi: w.Int64Col("value_int"), vf: w.Float64Col("value_float"),
		wri: w.Int32Col("worker_run_index"), vix: w.Int32Col("value_index"), order: w.Int32Col("order_in_block"),
		loops: w.Uint64Col("loop_count"), warm: w.BoolCol("is_warmup"), dims: w.StringMapCol("dimensions"),
	}
}

// Trial is the experiment placement publication gives every measurement
// of one run (Writer.SetTrial); nil outside experiments.
type Trial struct {
	TrialID, VariantID, BlockID string
	OrderInBlock                int32
}

// SetTrial makes every measurement written through w until the next call
// carry trial t (nil: none), unless the row names its own. Publication
// sets it around each run's extraction, so extractors need not know
// which experiment a run belonged to.
func (w *Writer) SetTrial(t *Trial) { w.trial = t }

// Write appends one row.
func (m *MeasurementWriter) Write(x Measurement) error {
	if t := m.w.trial; t != nil && x.TrialID == "" {
		x.TrialID, x.VariantID, x.BlockID = t.TrialID, t.VariantID, t.BlockID
		order := t.OrderInBlock
		x.OrderInBlock = &order
	}
	m.id.Append(x.ID)
	m.run.Append(x.RunID)
	m.art.AppendOrNull(x.ArtifactID)
	m.name.Append(x.Name)
	appendPtr(m.vi, x.Int)
	appendPtr(m.vf, x.Float)
	m.unit.Append(x.Unit)
	m.agg.Append(x.Aggregation)
	m.scope.Append(x.Scope)
	m.subj.AppendOrNull(x.Subject)
	m.outcome.AppendOrNull(x.Outcome)
	m.trial.AppendOrNull(x.TrialID)
	m.worker.AppendOrNull(x.WorkerID)
	appendPtr(m.wri, x.WorkerRunIndex)
	appendPtr(m.vix, x.ValueIndex)
	appendPtr(m.loops, x.LoopCount)
	m.warm.Append(x.IsWarmup)
	m.block.AppendOrNull(x.BlockID)
	m.variant.AppendOrNull(x.VariantID)
	appendPtr(m.order, x.OrderInBlock)
	m.phs.AppendOrNull(x.Phase)
	if len(x.Dimensions) > 0 {
		m.dims.Append(x.Dimensions)
	} else {
		m.dims.AppendNull()
	}
	level := x.EvidenceLevel
	if level == "" {
		level = "observed"
	}
	m.level.Append(level)
	return m.w.EndRow()
}

// appendPtr appends *v, or null for a nil pointer.
func appendPtr[T any](c interface {
	Append(T)
	AppendNull()
}, v *T) {
	if v != nil {
		c.Append(*v)
	} else {
		c.AppendNull()
	}
}
