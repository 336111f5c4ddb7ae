package publish

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flameox/flameox/pkg/evidence/schema"
)

// BenchmarkStageFinish is Stage.Finish (close, fsync and hash) of a
// generation whose one table is 67 MiB, mostly incompressible strings, in the
// workspace directory FLAMEOX_BENCH_DIR names (a disk, not the test's
// tmpfs; default the test's temporary directory). Writing the rows is
// not timed (docs/performance.md, "Profiles with 10^6 locations").
func BenchmarkStageFinish(b *testing.B) {
	dir := os.Getenv("FLAMEOX_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	for b.Loop() {
		b.StopTimer()
		root, err := os.MkdirTemp(dir, "stage-bench-")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(root, "staging"), 0o700); err != nil {
			b.Fatal(err)
		}
		st, err := NewStage(root, Name, "bench", time.Unix(1, 0))
		if err != nil {
			b.Fatal(err)
		}
		w, err := st.Table(schema.Runs)
		if err != nil {
			b.Fatal(err)
		}
		for i := range 120000 { // 67 MiB: 1,024 hex digits a row in one column
			if err := w.AppendRow(stageRow(w.Table(), i, 1)); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		files, err := st.Finish()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(files[0].ByteLength)/(1<<20), "MiB")
		st.Discard()
		os.RemoveAll(root)
		b.StartTimer()
	}
}

// stageRow is row i of table t's own columns: numbers and times from i,
// strings named after their column, except that the first noisy string
// columns hold 1,024 random hex digits (incompressible).
func stageRow(t *schema.Table, i, noisy int) []any {
	cols := t.Columns[schema.NumCommon:]
	row := make([]any, len(cols))
	for k, c := range cols {
		switch c.Type.ID() {
		case arrow.UINT64, arrow.INT64, arrow.INT32:
			row[k] = i
		case arrow.TIMESTAMP:
			row[k] = time.Unix(int64(i), 0)
		case arrow.STRING:
			row[k] = fmt.Sprintf("%s-%d", c.Name, i)
			if noisy > 0 {
				noise := make([]byte, 512)
				rand.Read(noise)
				row[k], noisy = hex.EncodeToString(noise), noisy-1
			}
		case arrow.LIST:
			row[k] = []string{c.Name}
		}
	}
	return row
}
