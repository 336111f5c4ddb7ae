package analysis

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile/pproftest"
	"github.com/flameox/flameox/pkg/workspace"
	gprof "github.com/google/pprof/profile"
	"github.com/spf13/pflag"
)

// TestDiffFlagsNameRequestFields: every flag sets the field of its JSON
// name and every field but the two profiles has a flag, so the CLI and
// the MCP tool (whose schema comes from the same tags) take the same
// parameters.
func TestDiffFlagsNameRequestFields(t *testing.T) {
	fs := pflag.NewFlagSet("diff", pflag.ContinueOnError)
	var req DiffRequest
	req.Flags(fs, 20)
	if err := fs.Parse([]string{"--limit", "3", "--sample-type", "T", "--focus", "F", "--ignore", "I", "--cursor", "C"}); err != nil {
		t.Fatal(err)
	}
	want := DiffRequest{Limit: 3, SampleType: "T", Focus: "F", Ignore: "I", Cursor: "C"}
	if req != want {
		t.Fatalf("parsed %+v, want %+v", req, want)
	}
	n := 0
	fs.VisitAll(func(*pflag.Flag) { n++ })
	if fields := reflect.TypeOf(req).NumField() - 2; n != fields {
		t.Fatalf("%d flags for %d fields", n, fields)
	}
}

// cpuCandidate: map assignment got three times slower, math.Abs leaves
// went away, memmove was renamed (gone in the base, new in the
// candidate), and the capture ran longer.
func cpuCandidate(p *gprof.Profile) {
	var kept []*gprof.Sample
	for _, s := range p.Sample {
		if len(s.Location) > 0 && s.Location[0].Line[len(s.Location[0].Line)-1].Function.Name == "math.Abs" {
			continue
		}
		if pproftest.OnStack(s, "mapassign") {
			for i := range s.Value {
				s.Value[i] *= 3
			}
		}
		kept = append(kept, s)
	}
	p.Sample = kept
	for _, fn := range p.Function {
		if fn.Name == "runtime.memmove" {
			fn.Name, fn.SystemName = "runtime.memmoveFast", "runtime.memmoveFast"
		}
	}
	p.DurationNanos = p.DurationNanos * 3 / 2
}

// heapCandidate drops every other sample and doubles the yaml ones.
func heapCandidate(p *gprof.Profile) {
	var kept []*gprof.Sample
	for i, s := range p.Sample {
		if i%2 == 1 {
			continue
		}
		if pproftest.OnStack(s, "yaml") {
			for i := range s.Value {
				s.Value[i] *= 2
			}
		}
		kept = append(kept, s)
	}
	p.Sample = kept
}

// allDiff pages through every row of a diff.
func allDiff(t *testing.T, ws *workspace.Workspace, req DiffRequest) ([]DiffRow, *DiffResult) {
	t.Helper()
	var rows []DiffRow
	var first *DiffResult
	if req.Limit == 0 {
		req.Limit = 1000
	}
	for {
		res, err := Diff(context.Background(), ws, req)
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

// TestDiffMatchesGoToolPprofDiffBase compares every row (function, flat,
// cum, in order) of every sample type of a diff with the real
// `go tool pprof -top -diff_base=BASE CAND`, through import, extraction,
// publication and DuckDB, with and without --focus/--ignore.
func TestDiffMatchesGoToolPprofDiffBase(t *testing.T) {
	cases := []struct {
		name, base    string
		edit          func(*gprof.Profile)
		focus, ignore string
		limit         int // small: several pages, the cursor carries sum%
	}{
		{"cpu", sampleCPU, cpuCandidate, "", "", 7},
		{"cpu-focus", sampleCPU, cpuCandidate, "runtime\\.", "evacuate", 3},
		{"heap", heapProf, heapCandidate, "", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cand := pproftest.Edit(t, c.base, c.edit)
			ws, runs := importProfiles(t, c.base, cand)
			_, first := allDiff(t, ws, DiffRequest{Base: runs[0], Candidate: runs[1]})
			var types []SampleType
			_, hot := allHotspots(t, ws, HotspotsRequest{Input: runs[0]})
			types = hot.SampleTypes
			if first.Parameters.SampleType != hot.SampleType.Type {
				t.Fatalf("default sample type %q, the base's is %q", first.Parameters.SampleType, hot.SampleType.Type)
			}
			for _, st := range types {
				t.Run(st.Type, func(t *testing.T) {
					req := DiffRequest{Base: runs[0], Candidate: runs[1], SampleType: st.Type, Focus: c.focus, Ignore: c.ignore, Limit: c.limit}
					got, res := allDiff(t, ws, req)
					extra := []string{"-diff_base=" + c.base}
					if c.focus != "" {
						extra = append(extra, "-focus="+c.focus, "-ignore="+c.ignore)
					}
					want := pproftest.TopLabeled(t, cand, st.Type, st.Unit, extra...)
					compareDiffRows(t, got, want)
					var sum int64
					for i, r := range got {
						sum += r.SelfDelta
						if r.Rank != i+1 || r.SumDelta != sum || r.SelfDelta != r.CandidateSelf-r.BaseSelf ||
							r.SelfDeltaFraction != signedFrac(r.SelfDelta, res.Base.SampleType.Total) {
							t.Fatalf("row %d: %+v (running sum %d)", i, r, sum)
						}
					}
					if res.TotalDelta != res.Candidate.SampleType.Total-res.Base.SampleType.Total || res.Total != int64(len(got)) {
						t.Fatalf("total delta %d, rows total %d of %d", res.TotalDelta, res.Total, len(got))
					}
				})
			}
		})
	}
}

// compareDiffRows checks every row (name, flat delta, cum delta, in
// order) against go tool pprof's.
func compareDiffRows(t *testing.T, got []DiffRow, want []pproftest.LabeledRow) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("pprof printed no rows: nothing was compared")
	}
	diffs := 0
	for j := 0; j < max(len(got), len(want)); j++ {
		var g, w pproftest.Row
		if j < len(got) {
			g = pproftest.Row{Name: got[j].Function, Flat: got[j].SelfDelta, Cum: got[j].InclusiveDelta}
		}
		if j < len(want) {
			w = want[j].Row
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
}

// TestDiffSaysWhatItCannotShow: the limitations are in the result (not
// only logs): nesting not causality, durations not normalised, the same
// profile on both sides; new and removed functions are counted; bad
// input is a structured error naming the side.
func TestDiffSaysWhatItCannotShow(t *testing.T) {
	cand := pproftest.Edit(t, sampleCPU, cpuCandidate)
	ws, runs := importProfiles(t, sampleCPU, cand, heapProf)
	ctx := context.Background()
	res, err := Diff(ctx, ws, DiffRequest{Base: runs[0], Candidate: runs[1], Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(res.Limitations, "\n")
	for _, want := range []string{"not causality", "durations differ", "not normalised", "-normalize"} {
		if !strings.Contains(joined, want) {
			t.Errorf("limitations lack %q:\n%s", want, joined)
		}
	}
	if res.Added != 1 || res.Removed < 1 || res.Normalized || res.Method != DiffMethod {
		t.Fatalf("added %d, removed %d, normalized %v", res.Added, res.Removed, res.Normalized)
	}
	presence := map[string]string{}
	for _, r := range res.Rows {
		presence[r.Function] = r.Presence
	}
	if presence["runtime.memmoveFast"] != "candidate_only" || presence["runtime.memmove"] != "base_only" || presence["runtime.mapassign_fast64"] != "both" {
		t.Fatalf("presence %v", presence)
	}
	if res.Rows[0].Function != "runtime.mapassign_fast64" && res.Rows[0].SelfDelta <= 0 {
		t.Fatalf("top row %+v", res.Rows[0])
	}

	same, err := Diff(ctx, ws, DiffRequest{Base: runs[0], Candidate: runs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Rows) != 0 || same.Total != 0 || !strings.Contains(strings.Join(same.Limitations, " "), "same profile") {
		t.Fatalf("a profile against itself: %+v", same)
	}

	mixed, err := Diff(ctx, ws, DiffRequest{Base: runs[2], Candidate: runs[2], SampleType: "alloc_space"})
	if err != nil || mixed.Parameters.SampleType != "alloc_space" {
		t.Fatalf("explicit sample type: %+v %v", mixed, err)
	}
	for _, tc := range []struct {
		name string
		req  DiffRequest
		code fault.Code
		side string
	}{
		{"no such sample type in the candidate", DiffRequest{Base: runs[2], Candidate: runs[0], SampleType: "alloc_space"}, fault.InvalidArguments, "candidate"},
		{"bad base id", DiffRequest{Base: "nope", Candidate: runs[0]}, fault.InvalidArguments, "base"},
		{"missing candidate", DiffRequest{Base: runs[0]}, fault.InvalidArguments, ""},
		{"bad focus", DiffRequest{Base: runs[0], Candidate: runs[1], Focus: "("}, fault.InvalidArguments, ""},
		{"limit", DiffRequest{Base: runs[0], Candidate: runs[1], Limit: 5000}, fault.QueryBudgetExceeded, ""},
		{"cursor of another diff", DiffRequest{Base: runs[0], Candidate: runs[1], Cursor: pageOne(t, ws, runs[1], runs[0])}, fault.StaleCursor, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Diff(ctx, ws, tc.req)
			if !fault.Is(err, tc.code) {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if tc.side != "" && fault.As(err).Details["side"] != tc.side {
				t.Fatalf("details %v, want side %s", fault.As(err).Details, tc.side)
			}
		})
	}
}

// pageOne is the cursor of the first page of a diff.
func pageOne(t *testing.T, ws *workspace.Workspace, base, cand string) string {
	t.Helper()
	res, err := Diff(context.Background(), ws, DiffRequest{Base: base, Candidate: cand, Limit: 1})
	if err != nil || res.Cursor == "" {
		t.Fatalf("no cursor: %v", err)
	}
	return res.Cursor
}

// TestDiffMergedMatchesGoToolPprof: each side's profiles merged, every
// row (function, flat, cum, in order) is that of the real
// `go tool pprof -top -diff_base=BASE C1 C2`, BASE the base profiles
// merged by `go tool pprof -proto` (pprof keeps only the last of several
// -diff_base flags); the default sample type is the first base
// profile's; one profile a side gives Diff's rows.
func TestDiffMergedMatchesGoToolPprof(t *testing.T) {
	for _, c := range []struct {
		name       string
		base, cand []string
		sampleType string
	}{
		{"cpu", []string{sampleCPU, pproftest.Edit(t, sampleCPU, heapCandidate)}, []string{pproftest.Edit(t, sampleCPU, cpuCandidate), sampleCPU}, ""},
		{"heap", []string{heapProf}, []string{pproftest.Edit(t, heapProf, heapCandidate), pproftest.Edit(t, heapProf, func(*gprof.Profile) {})}, ""},
		// A sample type asked for by name takes its unit from the first
		// profile (compare's memory metrics ask so).
		{"heap, inuse_objects asked", []string{heapProf}, []string{pproftest.Edit(t, heapProf, heapCandidate), pproftest.Edit(t, heapProf, func(*gprof.Profile) {})}, "inuse_objects"},
		{"one a side", []string{sampleCPU}, []string{pproftest.Edit(t, sampleCPU, cpuCandidate)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, runs := importProfiles(t, append(append([]string{}, c.base...), c.cand...)...)
			req := MergedDiffRequest{Base: runs[:len(c.base)], Candidate: runs[len(c.base):], Limit: 1000, SampleType: c.sampleType}
			res, err := DiffMerged(context.Background(), ws, req)
			if err != nil {
				t.Fatal(err)
			}
			_, hot := allHotspots(t, ws, HotspotsRequest{Input: runs[0], SampleType: c.sampleType})
			st := res.Base.SampleType
			if !res.Compared || st.Type != hot.SampleType.Type || len(res.Base.Sources) != len(c.base) || len(res.Candidate.Sources) != len(c.cand) {
				t.Fatalf("compared %v, sample type %s (the base's default %s), sides %+v %+v", res.Compared, st.Type, hot.SampleType.Type, res.Base, res.Candidate)
			}
			merged := c.base[0]
			if len(c.base) > 1 {
				merged = filepath.Join(t.TempDir(), "base.pb.gz")
				if err := os.WriteFile(merged, []byte(pproftest.Output(t, append([]string{"-proto"}, c.base...)...)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			extra := append([]string{"-diff_base=" + merged}, c.cand[:len(c.cand)-1]...)
			compareDiffRows(t, res.Rows, pproftest.TopLabeled(t, c.cand[len(c.cand)-1], st.Type, st.Unit, extra...))
			if res.Changed != int64(len(res.Rows)) || res.TotalDelta != res.Candidate.SampleType.Total-st.Total {
				t.Fatalf("changed %d of %d rows, total delta %d", res.Changed, len(res.Rows), res.TotalDelta)
			}
			if len(c.base) == 1 && len(c.cand) == 1 {
				rows, _ := allDiff(t, ws, DiffRequest{Base: runs[0], Candidate: runs[1]})
				if !reflect.DeepEqual(rows, res.Rows) {
					t.Fatalf("merged rows differ from Diff's")
				}
			}
		})
	}
}

// BenchmarkDiffMergedLarge is a merged diff of n runs a side: each a
// run of the largest pprof fixture on the base side and of an edited copy
// on the candidate's (docs/performance.md). Setting up imports 64 runs a
// side.
func BenchmarkDiffMergedLarge(b *testing.B) {
	t := &testing.T{}
	large := "../profile/testdata/google-pprof__large.cpu.pb.gz"
	edited := pproftest.Edit(t, large, heapCandidate)
	files := append(slices.Repeat([]string{large}, MaxMergedInputs), slices.Repeat([]string{edited}, MaxMergedInputs)...)
	ws, ids := importProfiles(t, files...)
	if t.Failed() {
		b.Fatal("import failed")
	}
	for _, n := range []int{1, 8, MaxMergedInputs} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			req := MergedDiffRequest{Base: ids[:n], Candidate: ids[MaxMergedInputs : MaxMergedInputs+n], Limit: 10}
			for b.Loop() {
				if _, err := DiffMerged(context.Background(), ws, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
