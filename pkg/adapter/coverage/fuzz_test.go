package coverage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzDecode: any input decodes or fails without panicking, within small
// limits, and what decodes is a report coverage.py could have written:
// within the row limit, every file named and summarised, lines not
// negative, totals the sum of the files. (That a refused file writes no
// row is TestHostile's.)
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(report("a.py", []string{"x", "y"})))
	lim := config.Limits{MaxDecompressedBytes: 1 << 20, MaxEvents: 1000, MaxStrings: 1000, MaxStringBytes: 1 << 16, MaxJSONDepth: 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(bytes.NewReader(data), lim)
		if err != nil {
			return
		}
		if r.Rows > 1000 || r.Version == "" {
			t.Fatalf("%d rows, version %q", r.Rows, r.Version)
		}
		var stmts int64
		for _, f := range r.Files {
			if f.Name == "" || f.Summary.Raw == nil {
				t.Fatalf("file %+v", f)
			}
			for _, l := range append(append([]int32{}, f.Executed...), f.Missing...) {
				if l < 0 {
					t.Fatalf("line %d", l)
				}
			}
			for _, c := range f.Contexts {
				if len(c.Labels) > MaxContextsPerLine || c.Total < len(c.Labels) {
					t.Fatalf("contexts %+v", c)
				}
			}
			stmts += f.Summary.NumStatements
		}
		if stmts != r.Totals.NumStatements {
			t.Fatalf("statements %d, totals %d", stmts, r.Totals.NumStatements)
		}
	})
}
