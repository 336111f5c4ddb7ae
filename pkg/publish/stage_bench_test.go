package publish

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flameox/flameox/pkg/evidence/schema"
)

// BenchmarkStageFinish is Stage.Finish (close, fsync and hash) of a
// generation whose one table is 64 MiB of incompressible strings, in the
// workspace directory FLAMEOX_BENCH_DIR names (a disk, not the test's
// tmpfs; default the test's temporary directory). Writing the rows is
// not timed (docs/performance.md, "Profiles with 10^6 locations").
func BenchmarkStageFinish(b *testing.B) {
	dir := os.Getenv("FLAMEOX_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	noise := make([]byte, 512)
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
		cols := w.Table().Columns[schema.NumCommon:]
		for i := range 120000 { // ~64 MiB: 1,024 hex digits a row in one column
			row := make([]any, len(cols))
			noisy := false
			for k, c := range cols {
				switch c.Type.ID() {
				case arrow.UINT64, arrow.INT64, arrow.INT32:
					row[k] = i
				case arrow.TIMESTAMP:
					row[k] = time.Unix(int64(i), 0)
				case arrow.STRING:
					row[k] = c.Name
					if !noisy {
						rand.Read(noise)
						row[k], noisy = hex.EncodeToString(noise), true
					}
				}
			}
			if err := w.AppendRow(row); err != nil {
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
