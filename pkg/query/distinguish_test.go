package query

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
)

// execution writes a finished execution run of workload with params (as
// a capture would leave it) and returns its ref for publishing.
func (f *fixture) execution(t *testing.T, workload string, params map[string]string, exit int32, signal string) publish.RunRef {
	t.Helper()
	runs := &run.Store{Root: f.ws.Root}
	now := time.Now().UTC()
	m := run.Manifest{RunID: run.NewID(), RunType: run.TypeExecution, CreatedAt: now, UpdatedAt: now,
		ExecutionStatus: run.ExecPlanned, CaptureStatus: run.CapturePending, ValidationStatus: run.ValidationNotRequested,
		Artifacts: []run.Registration{}, Limitations: []string{},
		Workload: &run.WorkloadInfo{Name: workload, DefinitionID: "sha256:d", InstanceID: "sha256:i", Parameters: params, Adapter: "process"}}
	if err := runs.Create(m); err != nil {
		t.Fatal(err)
	}
	next := m.Clone()
	next.Revision++
	next.ExecutionStatus, next.CaptureStatus = run.ExecRunning, run.CaptureRunning
	if err := runs.Append(&m, next); err != nil {
		t.Fatal(err)
	}
	m = next
	final := m.Clone()
	final.Revision++
	final.ExecutionStatus, final.CaptureStatus, final.Reason = run.ExecSucceeded, run.CaptureRegistered, "succeeded"
	if exit != 0 || signal != "" {
		final.ExecutionStatus, final.Reason = run.ExecFailed, "failed"
	}
	final.Process = &run.ProcessInfo{ExitCode: int(exit), Signal: signal, WallTimeNs: 1_500_000_000, PeakRSSBytes: 21 << 20}
	if err := runs.Append(&m, final); err != nil {
		t.Fatal(err)
	}
	return publish.RunRef{RunID: final.RunID, Revision: final.Revision}
}

// importBench imports a `go test -bench` text file and returns its run.
func (f *fixture) importBench(t *testing.T, name, text string) publish.RunRef {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	os.WriteFile(p, []byte(text), 0o644)
	imp, err := f.svc.Import(context.Background(), capture.ImportRequest{Path: p, Kind: "benchmark_samples"})
	if err != nil {
		t.Fatal(err)
	}
	return publish.RunRef{RunID: imp.Run.RunID, Revision: imp.Run.Revision}
}

const benchText = `goos: linux
pkg: example.com/x
BenchmarkZed-2     100   300 ns/op   16 B/op   1 allocs/op
BenchmarkAlpha/n=2-2  100   12.5 ns/op
BenchmarkZed-2     100   310 ns/op   16 B/op   1 allocs/op
BenchmarkAlpha/n=1-2  100   11.5 ns/op
BenchmarkAlpha/n=2-2  100   13.5 ns/op
PASS
`

// TestRunsDistinguish: runs list carries what tells runs apart (the
// workload's parameters and adapter, the imported file's name, the exit
// code or signal, wall time, peak RSS, the benchmark count).
func TestRunsDistinguish(t *testing.T) {
	f := newFixture(t)
	refs := []publish.RunRef{
		f.execution(t, "bench", map[string]string{"n": "1"}, 0, ""),
		f.execution(t, "bench", map[string]string{"n": "2"}, 0, "SIGKILL"),
		f.importBench(t, "old.bench.txt", benchText),
	}
	pub := &publish.Publisher{WS: f.ws, Extractors: all.Registry().Extractors()}
	if _, err := pub.PublishRuns(context.Background(), refs); err != nil {
		t.Fatal(err)
	}
	res, err := ListRuns(context.Background(), f.ws, ListRunsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ListRuns(context.Background(), f.ws, ListRunsRequest{Parameters: map[string]string{"n": "2"}}); err != nil || n.Total != 1 || n.Runs[0].RunID != refs[1].RunID {
		t.Fatalf("runs with n=2: %+v %v", n, err)
	}
	byID := map[string]RunSummary{}
	for _, r := range res.Runs {
		byID[r.RunID] = r
	}
	for _, tc := range []struct {
		ref                  publish.RunRef
		param, adapter, file string
		exit                 *int32
		signal               string
		benchmarks           int
		process              bool
	}{
		{ref: refs[0], param: "1", adapter: "process", exit: ptr(int32(0)), process: true},
		{ref: refs[1], param: "2", adapter: "process", exit: ptr(int32(0)), signal: "SIGKILL", process: true},
		{ref: refs[2], file: "old.bench.txt", benchmarks: 3},
	} {
		r, ok := byID[tc.ref.RunID]
		if !ok {
			t.Fatalf("run %s not listed", tc.ref.RunID)
		}
		if r.Parameters["n"] != tc.param || r.Adapter != tc.adapter || r.SourceName != tc.file || r.Signal != tc.signal || r.BenchmarkCount != tc.benchmarks {
			t.Errorf("run %s: %+v, want param %q adapter %q file %q signal %q benchmarks %d", r.RunID, r, tc.param, tc.adapter, tc.file, tc.signal, tc.benchmarks)
		}
		if (r.ExitCode == nil) != (tc.exit == nil) || (tc.exit != nil && *r.ExitCode != *tc.exit) {
			t.Errorf("run %s: exit code %v, want %v", r.RunID, r.ExitCode, tc.exit)
		}
		if tc.process && (r.WallTimeNs == nil || *r.WallTimeNs != 1_500_000_000 || r.PeakRSSBytes == nil || *r.PeakRSSBytes != 21<<20) {
			t.Errorf("run %s: wall %v rss %v", r.RunID, r.WallTimeNs, r.PeakRSSBytes)
		}
		if !tc.process && (r.WallTimeNs != nil || r.PeakRSSBytes != nil || r.ExitCode != nil) {
			t.Errorf("import run %s has process facts: %+v", r.RunID, r)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// runs show counts the benchmarks too.
func TestShowRunBenchmarkCount(t *testing.T) {
	f := newFixture(t)
	ref := f.importBench(t, "b.txt", benchText)
	pub := &publish.Publisher{WS: f.ws, Extractors: all.Registry().Extractors()}
	if _, err := pub.PublishRuns(context.Background(), []publish.RunRef{ref}); err != nil {
		t.Fatal(err)
	}
	d, err := ShowRun(context.Background(), f.ws, ref.RunID)
	if err != nil || d.BenchmarkCount != 3 {
		t.Fatalf("ShowRun = %+v, %v; want 3 benchmarks", d, err)
	}
}

// TestMeasurementsOrderAndFilters: measurements come sorted by subject,
// metric and value index (file order would interleave them), and filter by
// subject, workload and parameter values; paging by cursor returns every
// row once.
func TestMeasurementsOrderAndFilters(t *testing.T) {
	f := newFixture(t)
	refs := []publish.RunRef{
		f.execution(t, "bench", map[string]string{"n": "1", "mode": "fast"}, 0, ""),
		f.execution(t, "bench", map[string]string{"n": "2", "mode": "fast"}, 0, ""),
		f.execution(t, "other", map[string]string{"n": "1"}, 0, ""),
		f.importBench(t, "b.txt", benchText),
	}
	pub := &publish.Publisher{WS: f.ws, Extractors: all.Registry().Extractors()}
	if _, err := pub.PublishRuns(context.Background(), refs); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ms, err := QueryMeasurements(ctx, f.ws, MeasurementsRequest{RunID: refs[3].RunID, NamePrefix: "gobench.sec/op"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms.Measurements {
		got = append(got, m.Subject+"#"+itoa(m.ValueIndex))
	}
	want := []string{"Alpha/n=1#0", "Alpha/n=2#0", "Alpha/n=2#1", "Zed#0", "Zed#1"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// Within a benchmark, units come in go test's order.
	zedUnits, err := QueryMeasurements(context.Background(), f.ws, MeasurementsRequest{RunID: refs[3].RunID, Subject: "Zed"})
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, m := range zedUnits.Measurements {
		units = append(units, m.Unit)
	}
	if want := []string{"sec/op", "sec/op", "B/op", "B/op", "allocs/op", "allocs/op"}; !slices.Equal(units, want) {
		t.Fatalf("units %v, want %v", units, want)
	}
	runsOf := func(req MeasurementsRequest) []string {
		t.Helper()
		res, err := QueryMeasurements(ctx, f.ws, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		var ids []string
		for _, m := range res.Measurements {
			if !slices.Contains(ids, m.RunID) {
				ids = append(ids, m.RunID)
			}
		}
		slices.Sort(ids)
		if int64(len(res.Measurements)) != res.Total {
			t.Fatalf("%+v: %d rows, total %d", req, len(res.Measurements), res.Total)
		}
		return ids
	}
	sorted := func(refs ...publish.RunRef) []string {
		var ids []string
		for _, r := range refs {
			ids = append(ids, r.RunID)
		}
		slices.Sort(ids)
		return ids
	}
	for name, tc := range map[string]struct {
		req  MeasurementsRequest
		want []string
	}{
		"workload":           {MeasurementsRequest{Workload: "bench", Limit: 1000}, sorted(refs[0], refs[1])},
		"parameter":          {MeasurementsRequest{Parameters: map[string]string{"n": "1"}, Limit: 1000}, sorted(refs[0], refs[2])},
		"workload+parameter": {MeasurementsRequest{Workload: "bench", Parameters: map[string]string{"n": "2"}, Limit: 1000}, sorted(refs[1])},
		"two parameters":     {MeasurementsRequest{Parameters: map[string]string{"n": "1", "mode": "fast"}, Limit: 1000}, sorted(refs[0])},
		"unknown value":      {MeasurementsRequest{Parameters: map[string]string{"n": "3"}, Limit: 1000}, nil},
		"subject":            {MeasurementsRequest{Subject: "Zed", Limit: 1000}, sorted(refs[3])},
		"none":               {MeasurementsRequest{Limit: 1000}, sorted(refs...)},
	} {
		t.Run(name, func(t *testing.T) {
			if got := runsOf(tc.req); !slices.Equal(got, tc.want) {
				t.Errorf("runs %v, want %v", got, tc.want)
			}
		})
	}
	zed, err := QueryMeasurements(ctx, f.ws, MeasurementsRequest{Subject: "Zed"})
	if err != nil || zed.Total != 6 { // sec/op, B/op, allocs/op twice
		t.Fatalf("subject Zed: %+v %v", zed, err)
	}
	// Paging returns every row once, in the same order as one page.
	all, _ := QueryMeasurements(ctx, f.ws, MeasurementsRequest{Limit: 1000})
	var paged []string
	req := MeasurementsRequest{Limit: 4}
	for {
		res, err := QueryMeasurements(ctx, f.ws, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Measurements {
			paged = append(paged, m.MeasurementID)
		}
		if !res.Truncated {
			break
		}
		req.Cursor = res.Cursor
	}
	var whole []string
	for _, m := range all.Measurements {
		whole = append(whole, m.MeasurementID)
	}
	if !slices.Equal(paged, whole) {
		t.Fatalf("paged %d rows differ from one page of %d", len(paged), len(whole))
	}
	if _, err := QueryMeasurements(ctx, f.ws, MeasurementsRequest{Parameters: map[string]string{"a=b": "c"}}); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("a parameter name with '=': %v", err)
	}
}

func itoa(p *int32) string {
	if p == nil {
		return "-"
	}
	return string(rune('0' + *p))
}
