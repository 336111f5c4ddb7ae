package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile/pproftest"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
	gprof "github.com/google/pprof/profile"
)

// importProfiles imports and publishes files into a fresh workspace and
// returns the workspace and the run id of each file.
func importProfiles(t *testing.T, files ...string) (*workspace.Workspace, []string) {
	t.Helper()
	return capturetest.Published(t, "", files...)
}

// allHotspots pages through every row.
func allHotspots(t *testing.T, ws *workspace.Workspace, req HotspotsRequest) ([]HotspotRow, *HotspotsResult) {
	t.Helper()
	var rows []HotspotRow
	var first *HotspotsResult
	req.Limit = 1000
	for {
		res, err := Hotspots(context.Background(), ws, req)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		rows = append(rows, res.Rows...)
		if !res.Truncated {
			return rows, first
		}
		req.Cursor = res.Cursor
	}
}

// TestHotspotsMatchGoToolPprof compares every row of every sample type of
// every pprof fixture with the real `go tool pprof -top`, through the
// whole path: import, extraction, publication, DuckDB query.
func TestHotspotsMatchGoToolPprof(t *testing.T) {
	files, _ := filepath.Glob("../profile/testdata/*.pb.gz")
	if len(files) != 5 {
		t.Fatalf("want the 5 pprof fixtures, found %d", len(files))
	}
	ws, runs := importProfiles(t, files...)
	for i, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, first := allHotspots(t, ws, HotspotsRequest{Input: runs[i]})
			for _, st := range first.SampleTypes {
				t.Run(st.Type, func(t *testing.T) {
					got, _ := allHotspots(t, ws, HotspotsRequest{Input: runs[i], SampleType: st.Type})
					want := pproftest.Top(t, file, st.Type, st.Unit)
					if len(want) == 0 {
						t.Fatal("pprof printed no rows")
					}
					diffs := 0
					for j := 0; j < max(len(got), len(want)); j++ {
						var g, w pproftest.Row
						if j < len(got) {
							g = pproftest.Row{Name: got[j].Function, Flat: got[j].Self, Cum: got[j].Inclusive}
						}
						if j < len(want) {
							w = want[j]
						}
						if g != w {
							if diffs++; diffs <= 5 {
								t.Errorf("row %d: flameox %v, go tool pprof %v", j, g, w)
							}
						}
					}
					if diffs > 0 {
						t.Fatalf("%d of %d rows differ", diffs, len(want))
					}
				})
			}
		})
	}
}

// sharedFixture returns a file from ../shared/fixtures, skipping when the
// folder is absent (unless CI=true).
func sharedFixture(t *testing.T, rel string) string {
	p := filepath.Join("..", "..", "..", "shared", "fixtures", rel)
	if _, err := os.Stat(p); err != nil {
		testenv.Unable(t, "shared fixtures", "absent", "%v", err)
	}
	return p
}

func TestPerfEventsStayApart(t *testing.T) {
	file := sharedFixture(t, "perf-script/flamegraph__perf-cycles-instructions-01.txt")
	ws, runs := importProfiles(t, file)
	_, res := allHotspots(t, ws, HotspotsRequest{Input: runs[0]})
	counts := map[string]int64{}
	for _, st := range res.SampleTypes {
		counts[st.Type] = st.Samples
	}
	if counts["cycles"] != 111 || counts["instructions"] != 333 {
		t.Fatalf("events not kept apart: %+v", res.SampleTypes)
	}
}

func TestSpeedscopeThreadsStayApart(t *testing.T) {
	file := "../profile/testdata/self-driving-sim__py-spy-0.4.1.speedscope.json"
	ws, runs := importProfiles(t, file)
	_, all := allHotspots(t, ws, HotspotsRequest{Input: runs[0], SampleType: "samples"})
	if all.SampleType.Samples != 265 {
		t.Fatalf("total samples %d, the file has 265 (260 + 5)", all.SampleType.Samples)
	}
	if len(all.Threads) != 2 {
		t.Fatalf("threads %v, want the file's 2 thread profiles", all.Threads)
	}
	var sum int64
	for _, th := range all.Threads {
		_, one := allHotspots(t, ws, HotspotsRequest{Input: runs[0], SampleType: "samples", Thread: th})
		sum += one.SampleType.Samples
		if one.SampleType.Samples == all.SampleType.Samples {
			t.Fatalf("thread %q holds every sample: threads are not kept apart", th)
		}
	}
	if sum != all.SampleType.Samples {
		t.Fatalf("per-thread samples sum to %d, not %d", sum, all.SampleType.Samples)
	}
}

func TestHotspotsErrors(t *testing.T) {
	ws, runs := importProfiles(t, "../profile/testdata/google-pprof__sample.cpu.pb.gz")
	ctx := context.Background()
	if _, err := Hotspots(ctx, ws, HotspotsRequest{Input: "nonsense"}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("bad input: %v", err)
	}
	if _, err := Hotspots(ctx, ws, HotspotsRequest{Input: runs[0], SampleType: "nope"}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("bad sample type: %v", err)
	}
	if _, err := Hotspots(ctx, ws, HotspotsRequest{Input: "00000000-0000-4000-8000-000000000000"}); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown run: %v", err)
	}
	res, err := Hotspots(ctx, ws, HotspotsRequest{Input: runs[0], Limit: 3})
	if err != nil || len(res.Rows) != 3 || !res.Truncated || res.Cursor == "" {
		t.Fatalf("paging: %+v %v", res, err)
	}
	top := res.Rows[0].FrameID
	callers, err := Callers(ctx, ws, StacksRequest{Input: runs[0], FrameID: top})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, e := range callers.Edges {
		sum += e.Value
		// A caller's inclusive total covers every sample in which it calls
		// the focus (issue 14: edges showed inclusive 0 beside a value).
		if e.Value != 0 && (e.Inclusive == 0 || abs(e.Inclusive) < abs(e.Value)) {
			t.Errorf("caller %s: inclusive %d beside edge value %d", e.Function, e.Inclusive, e.Value)
		}
	}
	if len(callers.Edges) == 0 {
		t.Error("the top frame has no callers")
	}
	if len(callers.Edges) > 0 && sum < callers.Focus.Inclusive-callers.Focus.Self && !strings.Contains(strings.Join(callers.Limitations, " "), "root") {
		t.Logf("callers cover %d of %d", sum, callers.Focus.Inclusive)
	}
	ex, err := Examples(ctx, ws, StacksRequest{Input: runs[0], FrameID: top})
	if err != nil || len(ex.Examples) == 0 {
		t.Fatalf("examples: %+v %v", ex, err)
	}
	focus := false
	for _, f := range ex.Examples[0].Frames {
		focus = focus || f.Focus
	}
	if !focus {
		t.Fatal("the example stack does not pass through the frame")
	}
	if _, err := Callers(ctx, ws, StacksRequest{Input: runs[0], FrameID: "sha256:" + strings.Repeat("0", 64)}); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown frame: %v", err)
	}
}

// TestRankedMatchesAggregated reads every page of every sample type and
// thread (and, for the synthetic profile, process) of profiles in several
// formats twice: by the extractor's rank
// (one row group of each table) and by aggregating the whole profile.
// Rows, order, totals and the symbolized share must be the same.
func TestRankedMatchesAggregated(t *testing.T) {
	files, _ := filepath.Glob("../profile/testdata/*.pb.gz")
	files = append(files, "../profile/testdata/self-driving-sim__py-spy-0.4.1.speedscope.json",
		"../profile/testdata/speedscope__rust-mangled.linux-perf.txt", synthProfile(t))
	ws, runs := importProfiles(t, files...)
	ctx := context.Background()
	rankedReads := 0
	for i, file := range files {
		_, first := allHotspots(t, ws, HotspotsRequest{Input: runs[i]})
		filters := [][2]string{{"", ""}}
		for _, th := range first.Threads {
			filters = append(filters, [2]string{th, ""})
		}
		if strings.Contains(file, "synth") {
			filters = append(filters, [2]string{"", "helper"}, [2]string{"main", "synth"}, [2]string{"main", "helper"})
		}
		for _, st := range first.SampleTypes {
			for _, fl := range filters {
				th := fl[0]
				req := HotspotsRequest{Input: runs[i], SampleType: st.Type, Thread: th, Process: fl[1]}
				s, err := query.OpenTables(ctx, ws, hotspotsTables...)
				if err != nil {
					t.Fatal(err)
				}
				sc, err := resolve(ctx, s, runs[i], th, fl[1])
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := pick(sc.types, st.Type); err != nil {
					continue // nothing under this filter (main in helper)
				}
				if sc.ranks[st.Type].usable() {
					rankedReads++
				} else if fl == [2]string{"", ""} && len(first.Threads) < 2 {
					t.Errorf("%s %s: a one-thread profile is not read by rank", filepath.Base(file), st.Type)
				}
				byRank, a := allHotspots(t, ws, req)
				forceAggregate = true
				agg, b := allHotspots(t, ws, req)
				forceAggregate = false
				if len(byRank) != len(agg) || a.Total != b.Total || a.SymbolizedFraction != b.SymbolizedFraction || a.OutputUnit != b.OutputUnit {
					t.Fatalf("%s %s thread %q: by rank %d rows (total %d, symbolized %v, unit %q), aggregated %d (total %d, symbolized %v, unit %q)",
						filepath.Base(file), st.Type, th, len(byRank), a.Total, a.SymbolizedFraction, a.OutputUnit, len(agg), b.Total, b.SymbolizedFraction, b.OutputUnit)
				}
				for j := range byRank {
					if byRank[j] != agg[j] {
						t.Fatalf("%s %s thread %q row %d: by rank %+v, aggregated %+v", filepath.Base(file), st.Type, th, j, byRank[j], agg[j])
					}
				}
			}
		}
	}
	if rankedReads == 0 {
		t.Fatal("no profile was read by rank")
	}
}

// synthProfile writes a pprof profile built to stress the rank: 1,400
// function names (pages cross the 1,024-rank row group; 200 names are in
// two files, which pprof and the frame id merge into one function), many
// ties in value (ordered by name), unsymbolized frames of two mappings of
// one library (which share a frame id), negative values (a diff profile),
// two sample types and two threads in two processes.
func synthProfile(t *testing.T) string {
	t.Helper()
	mm := &gprof.Mapping{ID: 1, Start: 0x100000, Limit: 0x900000, File: "/bin/synth", HasFunctions: true}
	ma := &gprof.Mapping{ID: 2, Start: 0x1000000, Limit: 0x1100000, File: "/a/libdup.so"}
	mb := &gprof.Mapping{ID: 3, Start: 0x2000000, Limit: 0x2100000, File: "/b/libdup.so"}
	p := &gprof.Profile{
		Mapping:    []*gprof.Mapping{mm, ma, mb},
		SampleType: []*gprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Period:     1, PeriodType: &gprof.ValueType{Type: "cpu", Unit: "nanoseconds"},
	}
	var locs []*gprof.Location
	for i := range 1600 {
		name := fmt.Sprintf("pkg.f%04d", i%1400) // 200 names appear twice, in another file
		fn := &gprof.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: fmt.Sprintf("src/%d.go", i/1400)}
		p.Function = append(p.Function, fn)
		l := &gprof.Location{ID: uint64(i + 1), Mapping: mm, Address: mm.Start + uint64(i)*16, Line: []gprof.Line{{Function: fn, Line: int64(i)}}}
		locs = append(locs, l)
	}
	for i, m := range []*gprof.Mapping{ma, mb} {
		locs = append(locs, &gprof.Location{ID: uint64(1601 + i), Mapping: m, Address: m.Start + 0x10})
	}
	p.Location = locs
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 6000 {
		depth := 1 + rng.IntN(8)
		var stack []*gprof.Location
		for range depth {
			stack = append(stack, locs[rng.IntN(len(locs))])
		}
		v := int64(1 + rng.IntN(3)) // few distinct values: many ties
		if i%7 == 0 {
			v = -v
		}
		thread, proc := "main", "synth"
		if i%3 == 0 {
			thread, proc = "worker", "helper"
		}
		p.Sample = append(p.Sample, &gprof.Sample{Location: stack, Value: []int64{v, v * 10_000_000},
			Label: map[string][]string{"thread": {thread}, "process": {proc}}})
	}
	path := filepath.Join(t.TempDir(), "synth.pb.gz")
	pproftest.Write(t, path, p)
	return path
}
