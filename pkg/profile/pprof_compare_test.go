package profile

// Side-by-side comparison with the real tool.
//
// Method: for every sample type of every profile, run
//
//	go tool pprof -top -nodefraction=0 -symbolize=none \
//	    -sample_index=<type> -unit=<the type's own unit> <file>
//
// and compare every row (name, flat, cum, in order) with Top. Asking pprof
// for the sample type's own unit makes its scale factor 1, so its "%.2f"
// formatting prints exact integers ("1690000000ns", "524312B", "17"); a row
// with a fractional part fails the test as inexact instead of being rounded.
// -symbolize=none keeps pprof from looking for local binaries, so the run is
// hermetic. pprof's " (inline)"/" (partial-inline)" decorations are stripped
// from names. Converted profiles (perf script, speedscope, collapsed) are
// written with (*profile.Profile).Write and checked the same way, which also
// proves that pprof reads them.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/profile/pproftest"
)

type topRow = pproftest.Row

func goToolPprofTop(t *testing.T, file, sampleType, unit string) []topRow {
	return pproftest.Top(t, file, sampleType, unit)
}

// compareWithPprof checks Top against go tool pprof for every sample type.
func compareWithPprof(t *testing.T, file string, p *Profile) {
	for idx, st := range p.P.SampleType {
		t.Run(st.Type, func(t *testing.T) {
			want := goToolPprofTop(t, file, st.Type, st.Unit)
			var got []topRow
			for _, r := range Top(p.P, idx, nil) {
				got = append(got, topRow{Name: r.Function, Flat: r.Flat, Cum: r.Cum})
			}
			diffs := 0
			for i := 0; i < max(len(got), len(want)); i++ {
				var g, w topRow
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					if diffs++; diffs <= 10 {
						t.Errorf("row %d: Top %v, go tool pprof %v", i, g, w)
					}
				}
			}
			if diffs > 0 || len(got) != len(want) {
				t.Fatalf("%d of %d rows differ (Top %d rows, pprof %d rows)", diffs, len(want), len(got), len(want))
			}
			if len(want) == 0 {
				t.Fatal("pprof printed no rows: nothing was compared")
			}
			t.Logf("%d rows identical", len(want))
		})
	}
}

func TestTopMatchesGoToolPprof(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pb.gz")
	if len(files) != 5 {
		t.Fatalf("want the 5 pprof fixtures in testdata, found %d", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			p := parseFile(t, file)
			if p.Format != FormatPprof {
				t.Fatalf("format %s, want pprof", p.Format)
			}
			compareWithPprof(t, file, p)
		})
	}
}

// TestConvertedMatchGoToolPprof writes every converted fixture as pprof and
// compares Top with the real tool on that file.
func TestConvertedMatchGoToolPprof(t *testing.T) {
	files := []string{
		"testdata/speedscope__rust-mangled.linux-perf.txt",
		"testdata/cs336-basics__py-spy-0.4.2.speedscope.json",
		"testdata/self-driving-sim__py-spy-0.4.1.speedscope.json",
		"perf-script/flamegraph__example-perf-stacks.txt.gz",
		"perf-script/flamegraph__perf-cycles-instructions-01.txt",
		"perf-script/flamegraph__perf-java-stacks-01.txt",
		"perf-script/flamegraph__perf-js-stacks-01.txt",
		"collapsed/flamegraph__perf-vertx-stacks-01-collapsed-all.txt",
		"collapsed/flamegraph__perf-java-stacks-01-collapsed-jit.txt",
		"collapsed/flamegraph__perf-numa-stacks-01-collapsed-pid.txt",
		"collapsed/flamegraph__perf-cycles-instructions-01-collapsed-addrs.txt",
		"speedscope/voronoi-pp__py-spy-0.4.1.speedscope.json",
		"speedscope/calmcode__pyinstrument.speedscope.json",
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			path := file
			if !strings.HasPrefix(file, "testdata/") {
				path = shared(t, file)
			}
			p := parseFile(t, path)
			out := filepath.Join(t.TempDir(), "converted.pb.gz")
			pproftest.Write(t, out, p.P)
			compareWithPprof(t, out, p)
		})
	}
}

func TestPprofProducerAndLabels(t *testing.T) {
	for file, want := range map[string]string{
		"google-pprof__large.cpu.pb.gz":    "go",
		"google-pprof__sample.cpu.pb.gz":   "go",
		"parca__alloc_objects.pb.gz":       "go",
		"parca__fgprof.pb.gz":              "fgprof",
		"parca__profile-with-labels.pb.gz": "pprof",
	} {
		if got := parseFile(t, filepath.Join("testdata", file)).Producer; got != want {
			t.Errorf("%s: producer %q, want %q", file, got, want)
		}
	}
	p := parseFile(t, "testdata/parca__profile-with-labels.pb.gz")
	if s := p.P.Sample[0]; len(s.Label["thread_id"]) != 1 || len(s.Label["thread_name"]) != 1 {
		t.Errorf("pprof labels not kept verbatim: %v", s.Label)
	}
	if !strings.Contains(strings.Join(p.Limitations, "\n"), "1 locations are unsymbolized") {
		t.Errorf("limitations %v", p.Limitations)
	}
}
