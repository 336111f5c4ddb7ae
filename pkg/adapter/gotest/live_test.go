package gotest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/run"
)

const liveToml = `schema_version = 1

[workloads.bench]
argv = ["go", "test", "-run", "^$", "-bench", ".", "-benchtime", "50ms", "-count", "3", "."]
timeout_seconds = 300
env = { GOWORK = "off" }
options = { profiles = "cpu,mem", coverage = "true" }
`

// TestLiveCapture runs the bundled reverse-scan benchmarks under the real
// go test through capture.Service, with profiles and coverage asked for,
// then extracts the stored stdout.
func TestLiveCapture(t *testing.T) {
	ctx := context.Background()
	project := liveProject(t)
	l := adaptertest.Capture(t, project, liveToml, "bench", Name, process.New(), New())
	ws, m, regs := l.WS, l.Result.Run, l.Regs
	if m.ExecutionStatus != run.ExecSucceeded || m.CaptureStatus != run.CaptureRegistered {
		t.Fatalf("run %s/%s: %+v %v", m.ExecutionStatus, m.CaptureStatus, m.Error, m.Limitations)
	}
	l.CheckLimitations(t)
	if first := m.Limitations[0]; !strings.Contains(first, "perturbed") || !strings.Contains(first, "coverage") {
		t.Errorf("a profiled benchmark capture does not say first that its timings are perturbed: %q", m.Limitations)
	}
	if ents, _ := filepath.Glob(filepath.Join(project, "*.test")); len(ents) != 0 {
		t.Errorf("the test binary was left in the project: %v", ents)
	}
	for name, kind := range map[string]string{"cpu.pprof": KindSampleProfile, "mem.pprof": KindMemoryProfile,
		"cover.out": KindCoverage, "stdout.txt": KindProcessOutput} {
		if regs[name].Kind != kind {
			t.Errorf("%s registered as %q, want %s (registrations %v)", name, regs[name].Kind, kind, m.Artifacts)
		}
	}
	checkLiveCover(t, project, l, regs["cover.out"])
	stdout := regs["stdout.txt"]
	path := ws.Root + "/" + stdout.PayloadPath
	head, _ := os.ReadFile(path)
	in := adapter.ExtractInput{RunID: m.RunID, ArtifactID: stdout.ArtifactID, Kind: stdout.Kind, Producer: stdout.Producer,
		Path: path, Head: head[:min(len(head), 4096)], Started: *m.Process.StartedAt}
	e := &BenchExtractor{}
	if !e.Accepts(in) || !isStream(head) {
		t.Fatalf("stdout is not an accepted test2json stream: %.300s", head)
	}
	sink := newSink(t)
	x, err := e.Extract(ctx, in, sink)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run limitations: %q\nextraction limitations: %q", m.Limitations, x.Limitations)
	rows := sink.Rows(t, "measurements")
	// 2 benchmarks x 3 sizes x 3 counts = 18 results, 3 units each, plus
	// the 3 test counts and the build and run times of the package.
	if x.Rows["measurements"] != 18*3+5 || len(rows) != 18*3+5 {
		t.Fatalf("%v rows (%d read back), want %d", x.Rows, len(rows), 18*3+5)
	}
	perUnit := map[string]int{}
	mean := map[string]float64{}
	for _, r := range rows {
		perUnit[r["unit"].(string)]++
		if r["unit"] == "sec/op" {
			mean[r["subject"].(string)] += r["value_float"].(float64) / 3
			if r["worker_id"] != "example.com/reversescan" || r["value_index"].(int32) > 2 {
				t.Errorf("row %v", r)
			}
		}
	}
	if perUnit["sec/op"] != 18 || perUnit["B/op"] != 18 || perUnit["allocs/op"] != 18 || perUnit["count"] != 3 || perUnit["ns"] != 2 {
		t.Fatalf("rows per unit %v", perUnit)
	}
	// Which of the two is faster is a timing, which a loaded machine can
	// invert: the test asserts only that both were measured.
	for _, n := range []string{"32768", "65536", "131072"} {
		slow, fast := mean["ReverseSum/n="+n], mean["DirectSum/n="+n]
		if !(slow > 0 && fast > 0) {
			t.Errorf("n=%s: ReverseSum %.3g sec/op, DirectSum %.3g: not both measured", n, slow, fast)
		}
		t.Logf("n=%s: ReverseSum/DirectSum = %.2f", n, slow/fast)
	}
}

// checkLiveCover extracts the coverage profile a capture registered, as
// publication does (the registry's extractor, which finds the project's
// module through the workspace), and compares its totals with `go tool
// cover -func` on the stored file.
func checkLiveCover(t *testing.T, project string, l *adaptertest.Live, reg run.Registration) {
	t.Helper()
	in := adapter.ExtractInput{RunID: l.Result.Run.RunID, ArtifactID: reg.ArtifactID, Kind: reg.Kind, Producer: reg.Producer, Path: l.Path(reg)}
	in.Head, _ = os.ReadFile(in.Path)
	var e adapter.Extractor
	for _, x := range New().Extractors() {
		if x.Accepts(in) {
			if e != nil {
				t.Fatalf("both %s and %s accept the coverage profile", e.Name(), x.Name())
			}
			e = x
		}
	}
	if e == nil || e.Name() != CoverExtractorName {
		t.Fatalf("the coverage profile is read by %v: %.200s", e, in.Head)
	}
	sink := newCoverSink(t)
	x, err := e.Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	r := coverResult{x: x, obs: sink.Rows(t, "observations"), measurements: map[string]map[string]any{}}
	for _, m := range sink.Rows(t, "measurements") {
		r.measurements[m["name"].(string)] = m
	}
	total := funcTotal(t, project, in.Path)
	pct := r.measurements["coverage.percent_covered"]
	if pct == nil || fmt.Sprintf("%.1f%%", pct["value_float"].(float64)) != total || pct["run_id"] != in.RunID {
		t.Fatalf("percent_covered %v, go tool cover -func says %s", pct, total)
	}
	files := map[string]bool{}
	for _, o := range r.obs {
		files[o["file"].(string)] = true
	}
	if !files["scan.go"] || len(files) != 1 || x.Rows["observations"] != int64(len(r.obs)) || len(r.obs) < 5 {
		t.Fatalf("coverage rows %v: want scan.go's blocks, project-relative (%q)", files, x.Limitations)
	}
}

// liveProject copies the bundled example into a fresh git project, or
// skips (fails under CI=true) without go and git.
func liveProject(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs real benchmarks")
	}
	for _, tool := range []string{"go", "git"} {
		testenv.LookPath(t, tool)
	}
	project := t.TempDir()
	for _, f := range []string{"go.mod", "scan.go", "scan_test.go"} {
		b, err := os.ReadFile(filepath.Join("../../../contrib/examples/reverse-scan", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(project, f), b, 0o644)
	}
	if out, err := exec.Command("git", "-C", project, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return project
}

// TestLiveNothingRan: a -bench pattern that matches no benchmark, and a
// -run pattern that matches no test, exit 0 under go test; the run's
// validation fails and says why, and the exit status says it too.
func TestLiveNothingRan(t *testing.T) {
	project := liveProject(t)
	for _, tt := range []struct{ name, argv, want string }{
		{"nobench", `"-run", "^$", "-bench", "NoSuchBench", "."`, `the -bench pattern "NoSuchBench" matched none`},
		{"notest", `"-run", "NoSuchTest", "."`, "ran no test"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			toml := "schema_version = 1\n[workloads.w]\nargv = [\"go\", \"test\", " + tt.argv + "]\ntimeout_seconds = 300\nenv = { GOWORK = \"off\" }\n"
			dir := t.TempDir()
			os.CopyFS(dir, os.DirFS(project))
			l := adaptertest.Capture(t, dir, toml, "w", Name, process.New(), New())
			m := l.Result.Run
			if m.ExecutionStatus != run.ExecSucceeded {
				t.Fatalf("go test did not succeed: %s %+v", m.ExecutionStatus, m.Error)
			}
			if m.ValidationStatus != run.ValidationFailed || m.Validation == nil || !strings.Contains(m.Validation.Reason, tt.want) {
				t.Fatalf("validation %s %+v, want failed saying %q", m.ValidationStatus, m.Validation, tt.want)
			}
			if code, why := run.ExitStatus(m); code != 1 || !strings.Contains(why, tt.want) {
				t.Fatalf("exit %d %q, want 1 saying %q", code, why, tt.want)
			}
		})
	}
}

// TestLiveDefaultCapture: a default capture of benchmarks runs plain go
// test (no profile, no coverage, nothing but stdout registered), passes
// the adapter's check, and its stream splits the command into the build
// of the test binary and its run.
func TestLiveDefaultCapture(t *testing.T) {
	project := liveProject(t)
	toml := strings.Replace(liveToml, "options = { profiles = \"cpu,mem\", coverage = \"true\" }\n", "", 1)
	l := adaptertest.Capture(t, project, toml, "bench", Name, process.New(), New())
	m := l.Result.Run
	if m.ExecutionStatus != run.ExecSucceeded || m.ValidationStatus != run.ValidationPassed {
		t.Fatalf("run %s, validation %s %+v: %v", m.ExecutionStatus, m.ValidationStatus, m.Validation, m.Error)
	}
	for _, a := range m.Command.Argv {
		if strings.Contains(a, "profile") || strings.HasPrefix(a, "-cover") || strings.HasPrefix(a, "-o=") {
			t.Errorf("the default capture ran %q", m.Command.Argv)
		}
	}
	for name := range l.Regs {
		if name != "stdout.txt" && name != "stderr.txt" {
			t.Errorf("the default capture registered %s", name)
		}
	}
	if strings.Contains(strings.Join(m.Limitations, " "), "perturbed") {
		t.Errorf("an uninstrumented capture says it is perturbed: %q", m.Limitations)
	}
	stdout := l.Regs["stdout.txt"]
	in := adapter.ExtractInput{RunID: m.RunID, ArtifactID: stdout.ArtifactID, Path: l.Path(stdout), Started: *m.Process.StartedAt}
	in.Head, _ = os.ReadFile(in.Path)
	sink := newSink(t)
	x, err := (&BenchExtractor{}).Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	phase := map[string]int64{}
	for _, r := range sink.Rows(t, "measurements") {
		if n := r["name"].(string); strings.HasPrefix(n, "gotest.") && strings.HasSuffix(n, "_time") {
			if r["unit"] != "ns" || r["subject"] != "example.com/reversescan" || r["scope"] != "test_suite" {
				t.Errorf("phase row %v", r)
			}
			phase[n] = r["value_int"].(int64)
		}
	}
	build, ok1 := phase["gotest.build_time"]
	runT, ok2 := phase["gotest.run_time"]
	if !ok1 || !ok2 || build <= 0 || runT <= 0 || runT >= m.Process.WallTimeNs {
		t.Fatalf("phases %v (wall %d ns): want a build and a run, the run inside the command; limitations %q", phase, m.Process.WallTimeNs, x.Limitations)
	}
	if !strings.Contains(strings.Join(x.Limitations, " "), "compilation included") {
		t.Errorf("the extraction does not say what process.wall_time includes: %q", x.Limitations)
	}
}

// TestLiveProgress: while a capture runs, the workload's stdout reaches
// the service's Output hook as one line per benchmark result and one for
// the package, in order, and the stored stdout is the whole stream.
func TestLiveProgress(t *testing.T) {
	project := liveProject(t)
	toml := "schema_version = 1\n[workloads.w]\nargv = [\"go\", \"test\", \"-run\", \"^$\", \"-bench\", \"DirectSum/n=32768\", \"-benchtime\", \"20x\", \"-count\", \"2\", \".\"]\ntimeout_seconds = 300\nenv = { GOWORK = \"off\" }\n"
	var mu sync.Mutex
	var lines []string
	l := adaptertest.CaptureWith(t, project, toml, "w", Name, func(s *capture.Service) {
		s.Output = func(line string) { mu.Lock(); lines = append(lines, line); mu.Unlock() }
	}, process.New(), New())
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "BenchmarkDirectSum/n=32768") || !strings.HasPrefix(lines[1], "BenchmarkDirectSum/n=32768") ||
		!strings.Contains(lines[0], "ns/op") || !strings.HasPrefix(lines[2], "ok   example.com/reversescan") {
		t.Fatalf("progress lines %q", lines)
	}
	if m := l.Result.Run; m.ValidationStatus != run.ValidationPassed {
		t.Fatalf("validation %s %+v", m.ValidationStatus, m.Validation)
	}
	if b, _ := os.ReadFile(l.Path(l.Regs["stdout.txt"])); strings.Count(string(b), "ns/op") != 2 || !isStream(b) {
		t.Fatalf("the stored stream lost what the hook saw: %.400s", b)
	}
}
