package flameox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
)

// golden compares got with testdata/render/NAME.golden; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "render", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (-update rewrites it):\n%s", name, path, got)
	}
}

func render(fn func(w *bytes.Buffer)) string {
	var b bytes.Buffer
	fn(&b)
	return b.String()
}

var (
	t0   = time.Date(2026, 12, 1, 11, 43, 21, 0, time.UTC)
	runA = "04449c70-2f10-4a7c-8cb4-65094c57fe48"
	runB = "1b2c3d4e-0000-4000-8000-000000000002"
	runC = "9f8e7d6c-0000-4000-8000-000000000003"
	runD = "5a5a5a5a-0000-4000-8000-000000000004"
	runE = "7e7e7e7e-0000-4000-8000-000000000005"
)

func i32(v int32) *int32     { return &v }
func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

// Each renderer's text (goldens) and the facts it must show: runs list
// tells runs apart, measurements print in their units, workload show
// prints no JSON, a plan counts the dropped variables, limitations print
// once.
func TestRenderers(t *testing.T) {
	runs := &query.RunList{Page: query.Page{Total: 5, Returned: 5}, Runs: []query.RunSummary{
		{RunID: runA, RunType: "execution", CreatedAt: t0, ExecutionStatus: "succeeded", CaptureStatus: "registered", ValidationStatus: "passed",
			WorkloadName: "bench", Parameters: map[string]string{"n": "131072", "mode": "fast"}, Adapter: "gotest", ExitCode: i32(0),
			WallTimeNs: i64(3_542_000_000), PeakRSSBytes: i64(95_700_000), BenchmarkCount: 6, Reason: "succeeded"},
		{RunID: runB, RunType: "execution", CreatedAt: t0.Add(-time.Minute), ExecutionStatus: "timed_out", CaptureStatus: "registered", ValidationStatus: "not_requested",
			WorkloadName: "markdown", Parameters: map[string]string{"doc": strings.Repeat("very-long-document-name-", 4) + "md"}, Adapter: "py-spy",
			ExitCode: i32(-1), Signal: "SIGKILL", WallTimeNs: i64(60_000_000_000), PeakRSSBytes: i64(21_600_000), Reason: "timed_out", ErrorCode: "PROCESS_TIMEOUT"},
		{RunID: runC, RunType: "execution", CreatedAt: t0.Add(-2 * time.Minute), ExecutionStatus: "failed", CaptureStatus: "registered", ValidationStatus: "not_requested",
			WorkloadName: "cprog", Adapter: "perf", ExitCode: i32(3), WallTimeNs: i64(250_000_000), PeakRSSBytes: i64(0), Reason: "failed", ErrorCode: "PROCESS_FAILED"},
		{RunID: runD, RunType: "import", CreatedAt: t0.Add(-3 * time.Minute), ExecutionStatus: "not_applicable", CaptureStatus: "quarantined", ValidationStatus: "not_requested",
			SourceName: "gobench.heap", Reason: "quarantined: ARTIFACT_PARSE_FAILED", ErrorCode: "ARTIFACT_PARSE_FAILED"},
		{RunID: runE, RunType: "execution", CreatedAt: t0.Add(-4 * time.Minute), ExecutionStatus: "cancelled", CaptureStatus: "cancelled", ValidationStatus: "not_requested",
			WorkloadName: "bench", Parameters: map[string]string{}, Adapter: "gotest", Reason: "crash_recovery", ErrorCode: "PROCESS_CANCELLED"},
	}}
	meas := &query.MeasurementList{Page: query.Page{Total: 5, Returned: 5}, Measurements: []query.Measurement{
		{RunID: runA, Name: "gobench.sec/op", ValueFloat: f64(0.00022002500000000002), Unit: "sec/op", Scope: "benchmark", Subject: "DirectSum/n=131072", WorkerID: "example.com/reversescan", ValueIndex: i32(0)},
		{RunID: runA, Name: "gobench.sec/op", ValueFloat: f64(0.0002253), Unit: "sec/op", Scope: "benchmark", Subject: "DirectSum/n=131072", WorkerID: "example.com/reversescan", ValueIndex: i32(1)},
		{RunID: runA, Name: "gobench.B/s", ValueFloat: f64(1.23e6), Unit: "B/s", Scope: "benchmark", Subject: "DirectSum/n=131072", WorkerID: "example.com/reversescan", ValueIndex: i32(0)},
		{RunID: runA, Name: "gobench.allocs/op", ValueFloat: f64(3), Unit: "allocs/op", Scope: "benchmark", Subject: "ReverseSum/n=131072", WorkerID: "example.com/reversescan", ValueIndex: i32(0)},
		{RunID: runA, Name: "gobench.B/op", ValueFloat: f64(16), Unit: "B/op", Scope: "benchmark", Subject: "ReverseSum/n=131072", WorkerID: "example.com/reversescan", ValueIndex: i32(0)},
	}}
	mixed := &query.MeasurementList{Page: query.Page{Total: 9, Returned: 3, Truncated: true, Cursor: "CURSOR"}, Measurements: []query.Measurement{
		{RunID: runA, Name: "process.peak_rss", ValueInt: i64(21 << 20), Unit: "bytes", Scope: "process"},
		{RunID: runB, Name: "process.wall_time", ValueInt: i64(1_500_000_000), Unit: "ns", Scope: "process"},
		{RunID: runB, Name: "pyperf.value", ValueFloat: f64(0.0123), Unit: "sec", Scope: "benchmark", Subject: "bm_json", WorkerID: "w1", WorkerRunIndex: i32(0), ValueIndex: i32(0), IsWarmup: true},
	}}
	detail := &query.RunDetail{Published: true, PublishedRevision: 2, CurrentRevision: 2, BenchmarkCount: 6, Run: &run.Manifest{
		RunID: runA, RunType: "execution", Revision: 2, CreatedAt: t0, ExecutionStatus: "succeeded", CaptureStatus: "registered", ValidationStatus: "not_requested",
		Reason:   "succeeded",
		Workload: &run.WorkloadInfo{Name: "md", Parameters: map[string]string{"doc": "big"}, Adapter: "py-spy", Collector: "py-spy", CollectorVersion: "0.4.3"},
		Process: &run.ProcessInfo{ExitCode: 0, WallTimeNs: 2_100_000_000, UserTimeNs: 1_900_000_000, SystemTimeNs: 120_000_000,
			PeakRSSBytes: 22_650_000, PeakRSSSource: "sampled", Processes: []string{"python3.11"},
			Collector: &run.Usage{Processes: []string{"py-spy"}, UserTimeNs: 300_000_000, SystemTimeNs: 50_000_000, PeakRSSBytes: 8_900_000, PeakRSSSource: "sampled"}},
		Artifacts:   []run.Registration{{ArtifactID: "sha256:aa", DisplayName: "profile.speedscope.json", Kind: "sample_profile", Sensitivity: "internal", ByteLength: 2294}},
		Limitations: []string{"py-spy samples at 100 Hz", "py-spy samples at 100 Hz", "native frames are off"},
	}}
	imported := &query.RunDetail{Published: true, PublishedRevision: 1, CurrentRevision: 1, Run: &run.Manifest{
		RunID: runD, RunType: "import", Revision: 1, CreatedAt: t0, ExecutionStatus: "not_applicable", CaptureStatus: "quarantined", ValidationStatus: "not_requested",
		Reason: "quarantined: ARTIFACT_PARSE_FAILED", Import: &run.ImportInfo{SourceName: "gobench.heap", RequestedBy: "cli"},
		Artifacts: []run.Registration{}, Limitations: []string{"Imported artifact: flameox did not observe how it was produced; the source state is the project's at import time."},
	}}
	dropped := []string{}
	for i := range 35 {
		dropped = append(dropped, "VAR_"+strings.Repeat("X", i%5)+string(rune('A'+i%26)))
	}
	lims := []string{"stdout is the `go test -json` (test2json) event stream", "the test binary is written to the output directory (-o) and is not registered",
		"profiles cover one package", "benchmark timings are perturbed by profiling"}
	plan := &capture.CapturePlan{Adapter: "gotest",
		Workload: capture.WorkloadPlan{Name: "bench", DefinitionID: "sha256:275f15d0a751b9589dcaf52a12d9aa8a", Parameters: map[string]string{"n": "1024"}, Approval: "approved"},
		Argv:     []string{"go", "test", "-run", "^$", "-bench", ".", "."}, Wrapped: []string{"go", "test", "-run", "^$", "-bench", ".", "."}, Cwd: ".",
		Environment: capture.EnvPlan{Passed: []string{"HOME", "PATH"}, Dropped: dropped, Overrides: []string{"GOWORK"}},
		Limitations: append(append([]string{}, lims...), lims[0]), Warnings: []string{}}
	plan.Capability.Status, plan.Capability.Version = "available", "go1.26.8"
	plan.Containment.State, plan.Containment.Network, plan.Containment.Reason = "uncontained", "shared", "policy does not ask for containment"
	plan.Limits.TimeoutNs, plan.Limits.GraceNs, plan.Limits.MaxOutputBytes = 300e9, 2e9, 16<<20
	res := &capture.Result{Plan: plan, CorpusCommitID: "165aa37b68ea0000", Limitations: lims, Run: &run.Manifest{
		RunID: runA, ExecutionStatus: "succeeded", CaptureStatus: "registered", ValidationStatus: "not_requested",
		Process:   &run.ProcessInfo{WallTimeNs: 3_542_000_000, UserTimeNs: 3_453_000_000, SystemTimeNs: 182_000_000, PeakRSSBytes: 100_352_000, PeakRSSSource: "wait4", Processes: []string{"go", "compile", "vet"}},
		Artifacts: []run.Registration{}, Limitations: lims}}
	wl := &workload.Detail{Name: "bench", DefinitionID: "sha256:275f", Approval: "changed", Changes: []string{"argv[3]: \"^$\" -> \"x\""},
		Definition: workload.Definition{Name: "bench", Argv: []string{"go", "test", "-run", "^$", "-bench", ".", "-count", "{count}", "."}, Cwd: ".", TimeoutSeconds: 300,
			Env: map[string]string{"GOWORK": "off", "GOFLAGS": "-mod=mod", "NOTE": "two\nlines"}, AllowEnv: []string{}, Options: map[string]string{"coverage": "false"},
			Parameters: []workload.Parameter{{Name: "count", Type: "integer", Min: "1", Max: "50", Default: "1"}, {Name: "mode", Type: "string", Choices: []string{"fast", "slow"}, Default: "fast"}},
			Oracle:     &workload.Oracle{Strength: "smoke", Argv: []string{"go", "vet", "./..."}}}}

	for _, tc := range []struct {
		name      string
		out       string
		want, not []string
	}{
		{"runs-list", render(func(w *bytes.Buffer) { renderRuns(w, runs, 0, false) }),
			[]string{"bench mode=fast n=131072", "gotest", "3.542s", "91.3 MiB", "timed_out SIGKILL", "failed exit 3", "import gobench.heap", "registered (PROCESS_TIMEOUT)", "cancelled; crash_recovery (PROCESS_CANCELLED)", "…"},
			nil},
		{"runs-show", render(func(w *bytes.Buffer) { renderRun(w, detail) }),
			[]string{"workload    md  doc=big  (adapter py-spy, collector py-spy 0.4.3)", "peak RSS 21.6 MiB (python3.11)", "collector   py-spy:", "benchmarks  6"},
			nil},
		{"runs-show-import", render(func(w *bytes.Buffer) { renderRun(w, imported) }),
			[]string{"imported    gobench.heap (by cli)", "reason      quarantined: ARTIFACT_PARSE_FAILED"}, []string{"process"}},
		{"measurements", render(func(w *bytes.Buffer) { renderMeasurements(w, meas) }),
			[]string{"run     " + runA, "worker  example.com/reversescan", "220.0µs/op", "225.3µs/op", "1.173 MiB/s", "3 allocs/op", "16.00 B/op", "DirectSum/n=131072", "flameox measurements summary RUN_ID"},
			[]string{"0.00022002500000000002", "WORKER", "WARMUP"}},
		{"measurements-mixed", render(func(w *bytes.Buffer) { renderMeasurements(w, mixed) }),
			[]string{"RUN", "21.00 MiB", "1.500s", "12.30ms", "warmup", "WORKER", "RUN#", "more with --cursor CURSOR"}, nil},
		{"plan", render(func(w *bytes.Buffer) { renderPlan(w, plan, false) }),
			[]string{"drops 35 inherited variable(s) (--verbose lists them)"}, []string{"VAR_A"}},
		{"plan-verbose", render(func(w *bytes.Buffer) { renderPlan(w, plan, true) }), []string{"VAR_A,"}, nil},
		{"capture", render(func(w *bytes.Buffer) { renderCapture(w, res) }), []string{"wall 3.542s", "peak RSS 95.7 MiB (go and its children)"}, []string{"vet"}},
		{"workload-show", render(func(w *bytes.Buffer) { renderWorkload(w, wl) }),
			[]string{"argv        go test -run '^$' -bench . -count '{count}' .", "count (integer) in [1, 50], default 1", "mode (string) one of fast, slow, default fast",
				"GOFLAGS=-mod=mod", "options     coverage=false", "changed:", "oracle      smoke: go vet ./..."},
			[]string{"{\n", `\n  "`, `"argv"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.out, w) {
					t.Errorf("lacks %q:\n%s", w, tc.out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(tc.out, n) {
					t.Errorf("has %q:\n%s", n, tc.out)
				}
			}
			for _, l := range lims {
				if n := strings.Count(tc.out, l); n > 1 {
					t.Errorf("limitation %q printed %d times:\n%s", l, n, tc.out)
				}
			}
			if n := strings.Count(tc.out, "py-spy samples at 100 Hz"); n > 1 {
				t.Errorf("a limitation printed %d times", n)
			}
			golden(t, tc.name, tc.out)
		})
	}
}
