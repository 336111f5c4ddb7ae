package flameox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/status"
)

func TestBadProfilesPublishNothing(t *testing.T) {
	dir := initProject(t)
	good, _ := os.ReadFile("../../profile/testdata/google-pprof__sample.cpu.pb.gz")
	files := map[string][]byte{
		"truncated.pb.gz": good[:len(good)/2],
		"garbage.bin":     []byte("\x00\x01 not a profile \xff"),
		"empty.pb":        {},
		"half.json":       []byte(`{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": [`),
	}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
		r := flameox(t, dir, "import", "--kind", "sample_profile", name)
		if r.exit != 5 || !strings.Contains(r.stderr, "ARTIFACT_PARSE_FAILED") {
			t.Errorf("%s: exit %d\n%s", name, r.exit, r.stderr)
		}
	}
	// No evidence of a bad profile is published; each run is, quarantined
	// with the error, so that `runs list` shows it (docs/safety.md).
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	for table, n := range st.Head.Rows {
		if n != 0 && !slices.Contains([]string{"runs", "artifacts", "environments", "source_states"}, table) {
			t.Errorf("a bad profile was published: %d %s row(s)", n, table)
		}
	}
	var list query.RunList
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "runs", "list", "--json")).stdout), &list)
	if len(list.Runs) != len(files) || st.Runs.Unpublished != 0 {
		t.Fatalf("runs listed %d of %d (unpublished %d)", len(list.Runs), len(files), st.Runs.Unpublished)
	}
	for _, r := range list.Runs {
		if r.CaptureStatus != "quarantined" {
			t.Errorf("run %s is %s, want quarantined", r.RunID, r.CaptureStatus)
		}
	}
}

// TestHotspotToViewerWalk is acceptance 18: from a hotspot to its callers,
// a representative stack, the analysis provenance, the run, the artifact
// registration and the viewer command, with public commands only.
func TestHotspotToViewerWalk(t *testing.T) {
	dir := initProject(t)
	src, _ := os.ReadFile("../../profile/testdata/google-pprof__sample.cpu.pb.gz")
	os.WriteFile(filepath.Join(dir, "cpu.pb.gz"), src, 0o644)
	var imp capture.ImportResult
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "import", "cpu.pb.gz", "--json")).stdout), &imp)
	runID := imp.Run.RunID

	var hot analysis.HotspotsOutput
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--limit", "5", "--record", "--json")).stdout), &hot)
	if hot.HotspotsResult == nil || len(hot.Rows) == 0 || hot.Recorded == nil {
		t.Fatalf("hotspots: %+v", hot)
	}
	// pick a frame that has callers (the leaf of the heaviest stack usually does)
	frame := hot.Rows[0].FrameID
	var callers analysis.CallEdgeResult
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "stacks", "callers", runID, frame, "--json")).stdout), &callers)
	if callers.Focus.FrameID != frame || len(callers.Edges) == 0 {
		t.Fatalf("callers: %+v", callers)
	}
	var ex analysis.StackExamplesResult
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "stacks", "examples", runID, frame, "--json")).stdout), &ex)
	if len(ex.Examples) == 0 {
		t.Fatalf("examples: %+v", ex)
	}
	var prov query.EvidenceResult
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "evidence", "get", "analysis", hot.Recorded.AnalysisID, "--json")).stdout), &prov)
	if prov.Fields["corpus_commit_id"] != hot.CorpusCommitID || !strings.Contains(prov.Fields["input_run_ids"], runID) {
		t.Fatalf("analysis provenance: %+v", prov.Fields)
	}
	var rd query.RunDetail
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "runs", "show", runID, "--json")).stdout), &rd)
	if !rd.Published || len(rd.Run.Artifacts) != 1 || rd.Run.Artifacts[0].ArtifactID != hot.Source.ArtifactID {
		t.Fatalf("run: %+v", rd)
	}
	var ad query.ArtifactDetail
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "artifacts", "show", hot.Source.ArtifactID, "--json")).stdout), &ad)
	if len(ad.Registrations) != 1 || ad.Registrations[0].RunID != runID {
		t.Fatalf("artifact: %+v", ad)
	}
	var vp analysis.ViewerPlan
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "open", hot.Source.ArtifactID, "--json")).stdout), &vp)
	if strings.Join(vp.Argv[:3], " ") != "go tool pprof" || !strings.HasSuffix(vp.Argv[len(vp.Argv)-1], vp.Path) {
		t.Fatalf("viewer: %+v", vp)
	}
	if r := flameox(t, dir, "open", hot.Source.ArtifactID, "--launch", "--json"); r.exit != 9 {
		t.Fatalf("--launch with --json: exit %d", r.exit)
	}
}

// TestGoBenchmarkCaptureHotspots: a Go benchmark captured through the
// gotest adapter shows the known-slow function at the top.
func TestGoBenchmarkCaptureHotspots(t *testing.T) {
	dir := t.TempDir()
	example := "../../../contrib/examples/reverse-scan"
	for _, f := range []string{"go.mod", "scan.go", "scan_test.go"} {
		b, err := os.ReadFile(filepath.Join(example, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	mustOK(t, flameox(t, dir, "init"))
	toml := `schema_version = 1
[workloads.bench]
argv = ["go", "test", "-run", "^$", "-bench", "ReverseSum/n=131072", "-benchtime", "300ms", "."]
timeout_seconds = 120
env = { GOWORK = "off", GOFLAGS = "-mod=mod" }
options = { profiles = "cpu,mem" }
`
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(toml), 0o644)
	mustOK(t, flameox(t, dir, "workload", "approve", "bench"))
	res := runOf(t, mustOK(t, flameox(t, dir, "capture", "run", "gotest", "--workload", "bench", "--json")).stdout)
	var hot analysis.HotspotsOutput
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "analyze", "hotspots", res.Run.RunID, "--limit", "3", "--json")).stdout), &hot)
	if hot.HotspotsResult == nil || len(hot.Rows) == 0 {
		t.Fatalf("no hotspots: %+v", hot)
	}
	// The run holds a CPU and a memory profile: the CPU one (the primary
	// sample profile) is read, and the result says which others exist.
	if hot.Source.Kind != "sample_profile" || hot.SampleType.Type != "cpu" {
		t.Fatalf("read %s (%s), sample type %s; want the CPU profile", hot.Source.DisplayName, hot.Source.Kind, hot.SampleType.Type)
	}
	if !slices.ContainsFunc(hot.Limitations, func(l string) bool {
		return strings.Contains(l, "several profiles") && strings.Contains(l, "mem.pprof")
	}) {
		t.Fatalf("the other profile is not named: %q", hot.Limitations)
	}
	found := false
	for _, r := range hot.Rows {
		found = found || strings.Contains(r.Function, "ReverseSum") || strings.Contains(r.Function, "slice).At")
	}
	if !found {
		t.Fatalf("the slow path is not at the top: %+v", hot.Rows)
	}
	var ms query.MeasurementList
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "measurements", "query", "--run", res.Run.RunID, "--name-prefix", "gobench.", "--json")).stdout), &ms)
	if ms.Total == 0 {
		t.Fatal("benchmark lines were not extracted into measurements")
	}
}

// need skips (or fails under CI=true) when a collector is missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testenv.LookPath(t, tool)
	}
}

func hotspotsOf(t *testing.T, dir, runID string) []analysis.HotspotRow {
	var hot analysis.HotspotsOutput
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--limit", "3", "--json")).stdout), &hot)
	if hot.HotspotsResult == nil || len(hot.Rows) == 0 {
		t.Fatalf("no hotspots for run %s", runID)
	}
	return hot.Rows
}

func TestPerfCaptureHotspots(t *testing.T) {
	need(t, "perf", "gcc")
	dir := initProject(t)
	src := `volatile unsigned long sink;
__attribute__((noinline)) void hot_loop(void) { for (unsigned long i = 0; i < 300000000UL; i++) sink += i * 3; }
__attribute__((noinline)) void cold(void) { for (unsigned long i = 0; i < 10000000UL; i++) sink += i; }
int main(void) { cold(); hot_loop(); return 0; }
`
	os.WriteFile(filepath.Join(dir, "hot.c"), []byte(src), 0o644)
	if out, err := exec.Command("gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", filepath.Join(dir, "hot"), filepath.Join(dir, "hot.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte("schema_version = 1\n[workloads.hot]\nargv = [\"./hot\"]\ntimeout_seconds = 60\n"), 0o644)
	mustOK(t, flameox(t, dir, "workload", "approve", "hot"))
	var caps struct {
		Adapters []struct{ Adapter, Status string } `json:"adapters"`
	}
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "capabilities", "--json")).stdout), &caps)
	for _, c := range caps.Adapters {
		if c.Adapter == "perf" && c.Status != "available" {
			testenv.Unable(t, "perf", c.Status)
		}
	}
	res := runOf(t, mustOK(t, flameox(t, dir, "capture", "run", "perf", "--workload", "hot", "--json")).stdout)
	if rows := hotspotsOf(t, dir, res.Run.RunID); rows[0].Function != "hot_loop" {
		t.Fatalf("top frame %q, want hot_loop: %+v", rows[0].Function, rows)
	}
}

func TestPySpyCaptureHotspots(t *testing.T) {
	need(t, "py-spy", "python3")
	dir := initProject(t)
	// burn does a fixed amount of work, not a fixed stretch of wall time: on
	// a loaded machine start-up (imports, site) takes longer, and so must
	// burn, or its share of the samples would depend on the load.
	script := "def burn():\n    x = 0\n    for i in range(10000000):\n        x += i\n    return x\ndef idle():\n    return sum(range(1000))\nidle()\nburn()\n"
	os.WriteFile(filepath.Join(dir, "burn.py"), []byte(script), 0o644)
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte("schema_version = 1\n[workloads.burn]\nargv = [\"python3\", \"burn.py\"]\ntimeout_seconds = 60\n"), 0o644)
	mustOK(t, flameox(t, dir, "workload", "approve", "burn"))
	res := runOf(t, mustOK(t, flameox(t, dir, "capture", "run", "py-spy", "--workload", "burn", "--json")).stdout)
	rows := hotspotsOf(t, dir, res.Run.RunID)
	if !strings.HasPrefix(rows[0].Function, "burn") {
		t.Fatalf("top frame %q, want burn: %+v", rows[0].Function, rows)
	}
}
