package pyperf

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzDecode: any input decodes or fails without panicking, within small
// limits, and what decodes holds only what pyperf accepts: named
// benchmarks with runs, finite positive values, loops >= 1. (That a
// refused file writes no row is TestHostile's.)
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/pyperf__*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(good))
	f.Add(gz(good))
	f.Add([]byte(`{"version": 5, "benchmarks": [{"common_metadata": {"name": "b"}, "runs": [{"samples": [1], "warmups": [[2, 4]]}]}]}`))
	lim := config.Limits{MaxDecompressedBytes: 1 << 20, MaxSamples: 1000, MaxStrings: 1000, MaxStringBytes: 1 << 16, MaxJSONDepth: 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.NewReader(data), lim)
		if err != nil {
			return
		}
		if s.Values+s.Warmups > 1000 || len(s.Benchmarks) == 0 {
			t.Fatalf("%d values, %d warm-ups, %d benchmarks", s.Values, s.Warmups, len(s.Benchmarks))
		}
		for _, b := range s.Benchmarks {
			if b.Name == "" || units[b.Unit] == "" || len(b.Runs) == 0 {
				t.Fatalf("benchmark %q unit %q, %d runs", b.Name, b.Unit, len(b.Runs))
			}
			for _, r := range b.Runs {
				if r.Loops < 1 || r.InnerLoops < 1 || len(r.Values)+len(r.Warmups) == 0 || (len(r.Values) == 0) != (r.Calibration != "") {
					t.Fatalf("run %+v", r)
				}
				for _, v := range r.Values {
					if !(v > 0) || math.IsInf(v, 0) {
						t.Fatalf("value %v", v)
					}
				}
				for _, w := range r.Warmups {
					if !(w.Value >= 0) || math.IsInf(w.Value, 0) || w.Loops < 1 {
						t.Fatalf("warm-up %+v", w)
					}
				}
			}
		}
	})
}
