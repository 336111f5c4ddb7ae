package torch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/observe"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/adapter/trace"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/evidence/schema/schematest"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
)

// LiveEnv turns the live test on: `make test-torch` sets it after
// installing torch (scripts/install-collectors.sh does not: the wheel
// and its CUDA libraries are too large for CI, docs/torch.md).
const LiveEnv = "FLAMEOX_TORCH_LIVE"

// TestLiveCapture runs testdata/matmul.py under the real torch.profiler
// through capture.Service (record_shapes, profile_memory, and 3 steps
// marked with flameox_torch.step()), publishes the
// run with the trace and observations extractors, and checks that the
// published trace has the trace's cpu_op slices (counted independently
// in its JSON), that the sidecar says what was recorded, and that the
// observations say it too.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	if os.Getenv(LiveEnv) != "1" {
		testenv.Skip(t, "torch", "runs under `make test-torch`",
			"torch is not installed by scripts/install-collectors.sh (the PyPI wheel is about 3 GB of downloads); `make test-torch` installs it and runs this test with %s=1", LiveEnv)
	}
	a := New()
	c := a.Probe(context.Background())
	if c.Status != adapter.Available && c.Status != adapter.Degraded {
		t.Fatalf("%s=1 but torch is %s: %q; %q", LiveEnv, c.Status, c.Limitations, c.Remediation)
	}
	project := t.TempDir()
	src, err := os.ReadFile("testdata/matmul.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "matmul.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, _ := json.Marshal(c.Executable)
	toml := `schema_version = 1

[workloads.matmul]
argv = [` + string(exe) + `, "matmul.py"]
timeout_seconds = 300
options = { record_shapes = "true", profile_memory = "true" }
`
	// The capture asks the interpreter the workload names
	// (ProbeWorkload), not FLAMEOX_TORCH_PYTHON's.
	t.Setenv(PythonEnv, "")
	l := adaptertest.Capture(t, project, toml, "matmul", Name, process.New(), a)
	m := l.Result.Run
	if m.ExecutionStatus != run.ExecSucceeded || m.CaptureStatus != run.CaptureRegistered {
		t.Fatalf("run %s/%s: %+v\nstderr:\n%s", m.ExecutionStatus, m.CaptureStatus, m.Error, l.Stderr())
	}
	l.CheckLimitations(t)
	if p := l.Result.Plan.Capability; p.Executable != c.Executable || p.Version != c.Version {
		t.Errorf("the plan's capability %+v, want the workload's interpreter %s", p, c.Executable)
	}
	tr, ok := l.Regs[TraceFile]
	if !ok || tr.Kind != Kind || tr.Role != "primary" || tr.Producer != Name || tr.ProducerVersion != c.Version || !strings.HasPrefix(c.Version, Version) {
		t.Fatalf("trace registration %+v (probe version %q, pinned %s)", tr, c.Version, Version)
	}
	sc, ok := l.Regs[SidecarFile]
	if !ok || sc.Kind != SidecarKind {
		t.Fatalf("sidecar registration %+v", m.Artifacts)
	}
	s := readSidecar(t, l.Path(sc))
	if !slices.Equal(s.ActivitiesUsed, []string{"cpu"}) || !slices.Equal(s.ActivitiesRequested, []string{"cpu"}) || !s.RecordShapes || !s.ProfileMemory || s.WithStack ||
		s.TorchVersion != c.Version || !s.TraceExported || s.ExitStatus != 0 || s.Exception != nil || !slices.Equal(s.Program, []string{"matmul.py"}) || s.Steps != 3 {
		t.Errorf("sidecar %+v", *s)
	}

	// An independent reading of the trace: its complete cpu_op events,
	// the shapes record_shapes adds and the [memory] events of
	// profile_memory.
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Cat  string         `json:"cat"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	b, err := os.ReadFile(l.Path(tr))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var cpuOps, mm, shaped, memory int64
	var steps []string
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && e.Cat == "user_annotation" && strings.HasPrefix(e.Name, "ProfilerStep#") {
			steps = append(steps, e.Name)
		}
		if e.Ph == "X" && e.Cat == "cpu_op" {
			cpuOps++
			if e.Name == "aten::mm" {
				mm++
			}
			if d, ok := e.Args["Input Dims"].([]any); ok && slices.ContainsFunc(d, func(x any) bool { l, _ := x.([]any); return len(l) > 0 }) {
				shaped++
			}
		}
		if e.Name == "[memory]" {
			memory++
		}
	}
	if cpuOps == 0 || mm < 6 || shaped == 0 || memory == 0 || !slices.Equal(steps, []string{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"}) {
		t.Fatalf("the trace has %d cpu_op slices, %d aten::mm, %d with input shapes, %d [memory] events, steps %q", cpuOps, mm, shaped, memory, steps)
	}

	// Publish the run as `flameox capture run` does and read the
	// published measurements back.
	pub := publish.New(l.WS, publish.Options{Extractors: []adapter.Extractor{trace.NewExtractor(), observe.NewExtractor()}})
	res, err := pub.PublishRuns(context.Background(), []publish.RunRef{{RunID: m.RunID, Revision: m.Revision}})
	if err != nil {
		t.Fatal(err)
	}
	extracted := map[string]string{}
	for _, x := range res.Extractions {
		extracted[x.ArtifactID] = x.Extractor
	}
	obsReg, ok := l.Regs[observe.File]
	if extracted[tr.ArtifactID] != trace.ExtractorName || !ok || extracted[obsReg.ArtifactID] != observe.ExtractorName {
		t.Fatalf("extractions %+v", res.Extractions)
	}
	files, _ := filepath.Glob(filepath.Join(l.WS.Root, "evidence", "measurements", "generation="+res.GenerationID, "*.parquet"))
	if len(files) == 0 {
		t.Fatalf("no published measurements for generation %s", res.GenerationID)
	}
	got := map[string]int64{}
	for _, f := range files {
		for _, r := range schematest.Read(t, f).Maps() {
			if r["artifact_id"] != tr.ArtifactID {
				continue
			}
			v, _ := r["value_int"].(int64)
			switch {
			case r["name"] == trace.NameCatCount && r["subject"] == "cpu_op":
				got["cpu_op"] += v
			case r["name"] == trace.NameOpCount && r["subject"] == "aten::mm":
				got["aten::mm"] += v
			}
		}
	}
	if got["cpu_op"] != cpuOps || got["aten::mm"] != mm {
		t.Errorf("published cpu_op slices %d, aten::mm %d; the trace has %d and %d", got["cpu_op"], got["aten::mm"], cpuOps, mm)
	}

	f, err := os.Open(l.Path(obsReg))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	obs, err := observe.Parse(f, config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{}
	for _, o := range obs.Observations {
		vals[o.Name] = string(o.Value)
	}
	if vals["torch.profiler.record_shapes"] != "true" || vals["torch.profiler.profile_memory"] != "true" || vals["torch.profiler.activities_used"] != `["cpu"]` ||
		vals["torch.profiler.torch_version"] != `"`+c.Version+`"` {
		t.Errorf("observations %v", vals)
	}
	t.Logf("torch %s (%s, %s): %d cpu_op slices (published %d), %d aten::mm, %d with shapes, %d [memory] events",
		c.Version, c.Executable, m.Containment.State, cpuOps, got["cpu_op"], mm, shaped, memory)
}
