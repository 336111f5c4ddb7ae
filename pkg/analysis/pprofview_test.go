package analysis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile/pproftest"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

const (
	sampleCPU = "../profile/testdata/google-pprof__sample.cpu.pb.gz"
	heapProf  = "../profile/testdata/parca__alloc_objects.pb.gz"
	labelProf = "../profile/testdata/parca__profile-with-labels.pb.gz"
)

// compareRows checks every row (name, flat, cum, inline label, in order)
// against go tool pprof's.
func compareRows(t *testing.T, got []HotspotRow, want []pproftest.LabeledRow) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("pprof printed no rows: nothing was compared")
	}
	diffs := 0
	for j := 0; j < max(len(got), len(want)); j++ {
		var g, w pproftest.LabeledRow
		if j < len(got) {
			g = pproftest.LabeledRow{Row: pproftest.Row{Name: got[j].Function, Flat: got[j].Self, Cum: got[j].Inclusive}, Inline: got[j].Inline}
		}
		if j < len(want) {
			w = want[j]
		}
		if g != w {
			if diffs++; diffs <= 5 {
				t.Errorf("row %d: flameox %v %q, go tool pprof %v %q", j, g.Row, g.Inline, w.Row, w.Inline)
			}
		}
	}
	if diffs > 0 {
		t.Fatalf("%d of %d rows differ", diffs, len(want))
	}
}

// TestHotspotsInlineLabelsMatchGoToolPprof: the published rows carry
// pprof's "(inline)" and "(partial-inline)" labels, under each fixture's
// default sample type, through import, extraction and DuckDB.
func TestHotspotsInlineLabelsMatchGoToolPprof(t *testing.T) {
	files := []string{sampleCPU, heapProf, labelProf}
	ws, runs := importProfiles(t, files...)
	for i, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			got, first := allHotspots(t, ws, HotspotsRequest{Input: runs[i]})
			compareRows(t, got, pproftest.TopLabeled(t, file, first.SampleType.Type, first.SampleType.Unit))
			var sum int64
			for _, r := range got {
				sum += r.Self
				if want := frac(sum, first.SampleType.Total); r.SumFraction != want {
					t.Fatalf("rank %d: sum_fraction %v, want %v", r.Rank, r.SumFraction, want)
				}
			}
		})
	}
}

// TestFocusIgnoreMatchGoToolPprof compares every row of hotspots under
// --focus/--ignore with `go tool pprof -top -focus=… -ignore=…` on real
// profiles, and the percentages with pprof's (of the whole total).
func TestFocusIgnoreMatchGoToolPprof(t *testing.T) {
	ws, runs := importProfiles(t, sampleCPU, heapProf)
	cases := []struct {
		run, file, focus, ignore string
	}{
		{runs[0], sampleCPU, "mapassign", ""},
		{runs[0], sampleCPU, "", "mapiternext|evacuate"},
		{runs[0], sampleCPU, "main\\.", "math\\.Abs"},
		{runs[0], sampleCPU, "runtime/hashmap", ""}, // a file name, as pprof matches files too
		{runs[1], heapProf, "compress/flate", "NewWriter"},
		{runs[1], heapProf, "yaml", ""},
	}
	for _, c := range cases {
		t.Run(c.focus+"/"+c.ignore, func(t *testing.T) {
			req := HotspotsRequest{Input: c.run, Focus: c.focus, Ignore: c.ignore}
			got, first := allHotspots(t, ws, req)
			var extra []string
			if c.focus != "" {
				extra = append(extra, "-focus="+c.focus)
			}
			if c.ignore != "" {
				extra = append(extra, "-ignore="+c.ignore)
			}
			want := pproftest.TopLabeled(t, c.file, first.SampleType.Type, first.SampleType.Unit, extra...)
			compareRows(t, got, want)
			unfiltered, _ := allHotspots(t, ws, HotspotsRequest{Input: c.run})
			if len(got) >= len(unfiltered) {
				t.Fatalf("the filter kept all %d rows", len(got))
			}
			for _, r := range got {
				if r.FrameID == "" {
					t.Fatalf("row %q has no frame id", r.Function)
				}
				if r.SelfFraction != frac(r.Self, first.SampleType.Total) {
					t.Fatalf("self fraction of %q is not of the whole total", r.Function)
				}
			}
		})
	}
	if _, err := Hotspots(context.Background(), ws, HotspotsRequest{Input: runs[0], Focus: "("}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("bad focus regexp: %v", err)
	}
}

// TestCallersByRegexp names the focal frame by a regexp of function names,
// as go tool pprof -peek does: the heaviest match is shown, the others
// listed, and the result is the frame id's.
func TestCallersByRegexp(t *testing.T) {
	ws, runs := importProfiles(t, sampleCPU)
	ctx := context.Background()
	byName, err := Callers(ctx, ws, StacksRequest{Input: runs[0], FrameID: "runtime\\.map"})
	if err != nil {
		t.Fatal(err)
	}
	if byName.Focus.Function != "runtime.mapiternext" || len(byName.Matches) < 2 {
		t.Fatalf("focus %q, matches %+v", byName.Focus.Function, byName.Matches)
	}
	for _, m := range byName.Matches {
		if !strings.HasPrefix(m.Function, "runtime.map") {
			t.Fatalf("match %q does not match", m.Function)
		}
	}
	byID, err := Callers(ctx, ws, StacksRequest{Input: runs[0], FrameID: byName.Focus.FrameID})
	if err != nil {
		t.Fatal(err)
	}
	if len(byID.Edges) == 0 || len(byID.Edges) != len(byName.Edges) || byID.Edges[0] != byName.Edges[0] || byID.Matches != nil {
		t.Fatalf("by id %+v, by regexp %+v", byID.Edges, byName.Edges)
	}
	exact, err := Callees(ctx, ws, StacksRequest{Input: runs[0], FrameID: "^main\\.busyLoop$"})
	if err != nil || exact.Focus.Function != "main.busyLoop" || len(exact.Matches) != 1 {
		t.Fatalf("anchored regexp: %+v %v", exact, err)
	}
	if _, err := Examples(ctx, ws, StacksRequest{Input: runs[0], FrameID: "busyLoop"}); err != nil {
		t.Fatalf("examples by regexp: %v", err)
	}
	if _, err := Callers(ctx, ws, StacksRequest{Input: runs[0], FrameID: "no_such_function_here"}); !fault.Is(err, fault.NotFound) {
		t.Fatalf("no match: %v", err)
	}
	if _, err := Callers(ctx, ws, StacksRequest{Input: runs[0], FrameID: "(unclosed"}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("bad regexp: %v", err)
	}
}

// importKinds imports each file as a new run with the given artifact kind
// (as a capture registers it) and publishes them.
func importKinds(t *testing.T, files map[string]string) (*workspace.Workspace, map[string]string) {
	t.Helper()
	res, err := workspace.Init(context.Background(), t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	var refs []publish.RunRef
	ids := map[string]string{}
	for f, kind := range files {
		abs, _ := filepath.Abs(f)
		imp, err := svc.Import(context.Background(), capture.ImportRequest{Path: abs, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, publish.RunRef{RunID: imp.Run.RunID, Revision: imp.Run.Revision})
		ids[f] = imp.Run.RunID
	}
	pub := &publish.Publisher{WS: ws, Extractors: all.Registry().Extractors()}
	if _, err := pub.PublishRuns(context.Background(), refs); err != nil {
		t.Fatal(err)
	}
	return ws, ids
}

// TestHotspotsSaySourceChoice: a run whose only profile is a memory
// profile (a gotest capture that did not ask for a CPU profile) is shown
// with a note saying so; a run without a profile is refused with the
// remedy; a sample profile given alone needs no note.
func TestHotspotsSaySourceChoice(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "bench.txt")
	os.WriteFile(notes, []byte("BenchmarkX 10 100 ns/op\n"), 0o644)
	ws, runs := importKinds(t, map[string]string{heapProf: "memory_profile", sampleCPU: "", notes: "collector_metadata"})
	ctx := context.Background()
	res, err := Hotspots(ctx, ws, HotspotsRequest{Input: runs[heapProf]})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.SourceNote, "no CPU (sample) profile in this run; showing parca__alloc_objects.pb.gz") ||
		!strings.Contains(res.SourceNote, "sample type "+res.SampleType.Type) {
		t.Fatalf("source note %q", res.SourceNote)
	}
	byArtifact, err := Hotspots(ctx, ws, HotspotsRequest{Input: res.Source.ArtifactID})
	if err != nil || byArtifact.SourceNote != "" {
		t.Fatalf("an artifact id is no choice: %q %v", byArtifact.SourceNote, err)
	}
	cpu, err := Hotspots(ctx, ws, HotspotsRequest{Input: runs[sampleCPU]})
	if err != nil || cpu.SourceNote != "" || cpu.DurationNanos != 2002012950 {
		t.Fatalf("a run's only CPU profile: note %q, duration %d, %v", cpu.SourceNote, cpu.DurationNanos, err)
	}
	_, err = Hotspots(ctx, ws, HotspotsRequest{Input: runs[notes]})
	if fe := fault.As(err); !fault.Is(err, fault.NotFound) || !strings.Contains(strings.Join(fe.Remediation, " "), `options.profiles = "cpu"`) {
		t.Fatalf("a run without a profile: %v", err)
	}
}

// TestViewerPicksAFreePort: the plan for go tool pprof names a real port
// (not port 0) and its URL, for an artifact id and for a run id.
func TestViewerPicksAFreePort(t *testing.T) {
	ws, runs := importProfiles(t, sampleCPU)
	for _, input := range []string{runs[0]} {
		plan, err := Viewer(context.Background(), ws, all.Registry(), input)
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(plan.Argv, " ")
		if strings.Contains(joined, ":0 ") || !strings.Contains(joined, "-http=localhost:") || plan.URL == "" ||
			!strings.Contains(joined, strings.TrimSuffix(strings.TrimPrefix(plan.URL, "http://"), "/")) {
			t.Fatalf("argv %q, url %q", joined, plan.URL)
		}
		again, err := Viewer(context.Background(), ws, all.Registry(), plan.ArtifactID)
		if err != nil || again.ArtifactID != plan.ArtifactID || again.URL == "" {
			t.Fatalf("by artifact id: %+v %v", again, err)
		}
	}
}
