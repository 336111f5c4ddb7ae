package adaptertest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/evidence/schema/schematest"
)

// Sink is an adapter.Sink for extractor tests: each table goes through the
// real schema writer into a Parquet file of a temporary directory, so a
// test checks what a publication would contain.
type Sink struct {
	dir    string
	common schema.Common
	ws     map[string]*schema.Writer
	files  map[string]*os.File
}

// NewSink returns a Sink whose rows name extractor as their producer.
func NewSink(t testing.TB, extractor, version string) *Sink {
	return &Sink{dir: t.TempDir(), ws: map[string]*schema.Writer{}, files: map[string]*os.File{},
		common: schema.Common{GenerationID: "g", PublishedAt: time.Unix(1, 0), ExtractorName: extractor, ExtractorVersion: version}}
}

// Table returns the writer of t, creating its file on first use.
func (s *Sink) Table(t *schema.Table) (*schema.Writer, error) {
	if w := s.ws[t.Name]; w != nil {
		return w, nil
	}
	f, err := os.Create(filepath.Join(s.dir, t.Name+".parquet"))
	if err != nil {
		return nil, err
	}
	w, err := schema.NewWriter(t, f, schema.Options{Common: s.common})
	if err != nil {
		f.Close()
		return nil, err
	}
	s.ws[t.Name], s.files[t.Name] = w, f
	return w, nil
}

// Opened reports how many tables have been opened.
func (s *Sink) Opened() int { return len(s.ws) }

// Path is the file table's rows go to (complete once Rows has read it).
func (s *Sink) Path(table string) string { return filepath.Join(s.dir, table+".parquet") }

// Rows closes table's file and reads it back, one map per row; nil when
// nothing was written to the table.
func (s *Sink) Rows(t testing.TB, table string) []map[string]any {
	t.Helper()
	w, ok := s.ws[table]
	if !ok {
		return nil
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s.files[table].Close()
	return schematest.Read(t, s.Path(table)).Maps()
}
