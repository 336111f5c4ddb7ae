package adapter

import "github.com/flameox/flameox/pkg/evidence/schema"

// Measurements writes one artifact's measurements rows through a Sink,
// for the extractors that produce them (gobench, pyperf, hyperfine): the
// table is opened on the first row, so an input without evidence leaves
// no table behind; every row gets RunID and ArtifactID; N counts them.
type Measurements struct {
	Sink              Sink
	RunID, ArtifactID string
	N                 int64
	w                 *schema.MeasurementWriter
}

// Write appends one row.
func (m *Measurements) Write(x schema.Measurement) error {
	if m.w == nil {
		w, err := m.Sink.Table(schema.Measurements)
		if err != nil {
			return err
		}
		m.w = schema.NewMeasurementWriter(w)
	}
	x.RunID, x.ArtifactID = m.RunID, m.ArtifactID
	m.N++
	return m.w.Write(x)
}
