package memray

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/run"
)

// needMemray skips (fails under CI=true) when memray is not installed.
func needMemray(t *testing.T) {
	t.Helper()
	c := New().Probe(context.Background())
	if c.Status != adapter.Available {
		testenv.Unable(t, "memray", "not installed", "%v", c.Remediation)
	}
}

func input(t *testing.T, path string) adapter.ExtractInput {
	t.Helper()
	head, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(head) > 4096 {
		head = head[:4096]
	}
	return adapter.ExtractInput{RunID: "run", ArtifactID: "art", Kind: Kind, Path: path, Head: head, Limits: config.DefaultLimits()}
}

func TestAccepts(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.bin")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	lz4 := filepath.Join(dir, "lz4.bin")
	os.WriteFile(lz4, []byte{0x04, 0x22, 0x4d, 0x18, 0x40, 0x40, 'x', 'y'}, 0o644)
	raw := filepath.Join(dir, "raw.bin")
	os.WriteFile(raw, []byte("memray\x00\x0d\x00"), 0o644)
	for _, c := range []struct {
		path string
		want bool
	}{
		{"testdata/retain.bin", true},
		{"testdata/oldversion.bin", true},
		{"testdata/aggregated.bin", true},
		{raw, true},
		{text, false},
		{lz4, false},
	} {
		if got := (&Extractor{}).Accepts(input(t, c.path)); got != c.want {
			t.Errorf("Accepts(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestParseStats(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"ok", `{"total_num_allocations":3,"total_bytes_allocated":30,"allocator_type_distribution":{"MALLOC":3},"metadata":{"peak_memory":20}}`, ""},
		{"not json", `peak`, "not a JSON object"},
		{"array", `[1]`, "not a JSON object"},
		{"no peak", `{"total_num_allocations":3,"metadata":{}}`, "no metadata.peak_memory"},
		{"negative", `{"total_num_allocations":-3,"metadata":{"peak_memory":1}}`, "negative"},
		{"negative allocator", `{"allocator_type_distribution":{"MALLOC":-1},"metadata":{"peak_memory":1}}`, "negative"},
		{"truncated", `{"total_num_allocations":3`, "decode"},
		{"too large", `{"x":"` + strings.Repeat("a", maxStatsBytes) + `"}`, "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseStats(strings.NewReader(c.in))
			if c.err == "" {
				if err != nil || *s.Metadata.PeakMemory != 20 || s.TotalBytes != 30 || s.Allocators["MALLOC"] != 3 {
					t.Fatalf("%+v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}

func TestParseCSV(t *testing.T) {
	const head = "allocator,num_allocations,size,tid,thread_name,stack_trace\n"
	small := config.DefaultLimits()
	small.MaxSamples, small.MaxStackDepth = 2, 2
	for _, c := range []struct {
		name, in string
		lim      config.Limits
		err      string
		frames   int
	}{
		{"ok", head + "MALLOC,2,100,1,0x1,f;a.py;3|g;b;c.py;9\n", config.DefaultLimits(), "", 2},
		{"no stack", head + "MMAP,1,4096,1,0x1,\n", config.DefaultLimits(), "", 0},
		{"bad header", "a,b,c,d,e,f\n", config.DefaultLimits(), "column 1", 0},
		{"empty", "", config.DefaultLimits(), "header", 0},
		{"bad size", head + "MALLOC,1,-5,1,0x1,f;a.py;1\n", config.DefaultLimits(), "must be counts", 0},
		{"short row", head + "MALLOC,1\n", config.DefaultLimits(), "fields", 0},
		{"too many rows", head + strings.Repeat("MALLOC,1,1,1,0x1,f;a.py;1\n", 3), small, "max_samples", 0},
		{"too deep", head + "MALLOC,1,1,1,0x1,f;a;1|g;a;2|h;a;3\n", small, "max_stack_depth", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs, err := ParseCSV(strings.NewReader(c.in), c.lim)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || len(recs) != 1 || len(recs[0].Stack) != c.frames {
				t.Fatalf("%+v, %v", recs, err)
			}
			if c.frames == 2 && (recs[0].Stack[1] != Frame{Function: "g", File: "b;c.py", Line: 9}) {
				t.Fatalf("frame %+v", recs[0].Stack[1])
			}
		})
	}
}

// memrayStats runs `memray stats --json` on path, the reporter alone, and
// reads its report with encoding/json into generic maps.
func memrayStats(t *testing.T, path string) map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "stats.json")
	py, _ := RealSystem().LookPath("python3")
	if _, err := RealSystem().Output(context.Background(), []string{py, "-m", "memray", "stats", "--json", "-o", out, "-f", path}, time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func measurements(t *testing.T, s *adaptertest.Sink) map[string]int64 {
	return measurementsOf(s.Rows(t, "measurements"))
}

// measurementsOf are the totals by name (and allocator); the snapshot
// rows are snapshotRows'.
func measurementsOf(rows []map[string]any) map[string]int64 {
	got := map[string]int64{}
	for _, r := range rows {
		name := r["name"].(string)
		if strings.HasPrefix(name, "memory.snapshot.") {
			continue
		}
		if d, ok := r["dimensions"].(map[string]string); ok && d["allocator"] != "" {
			name += "/" + d["allocator"]
		}
		if v, ok := r["value_int"].(int64); ok {
			got[name] = v
		}
	}
	return got
}

// TestExtractAgreesWithMemrayStats extracts every memray capture memray
// can read and compares the totals with `memray stats` run beside it.
func TestExtractAgreesWithMemrayStats(t *testing.T) {
	needMemray(t)
	paths := []string{"testdata/retain.bin"}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := memrayStats(t, path)
			meta := want["metadata"].(map[string]any)
			sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
			x, err := New().Extractors()[0].Extract(context.Background(), input(t, path), sink)
			if err != nil {
				t.Fatal(err)
			}
			rows := sink.Rows(t, "measurements")
			got := measurementsOf(rows)
			// retain.py runs for less than one tick of memray's
			// background thread: one snapshot, at its start.
			snaps := snapshotRows(t, rows)
			if len(snaps) == 0 || snaps[0].ordinal != 0 || snaps[0].time != 0 {
				t.Errorf("snapshots %+v", snaps)
			}
			for _, s := range snaps {
				if s.heap > got["memory.peak_heap"] {
					t.Errorf("snapshot %+v exceeds the peak %d", s, got["memory.peak_heap"])
				}
			}
			for name, w := range map[string]any{
				"memory.peak_heap":       meta["peak_memory"],
				"memory.total_allocated": want["total_bytes_allocated"],
				"memory.allocations":     want["total_num_allocations"],
			} {
				if got[name] != int64(w.(float64)) {
					t.Errorf("%s = %d, memray stats says %v", name, got[name], w)
				}
			}
			for a, n := range want["allocator_type_distribution"].(map[string]any) {
				if got["memory.allocations_by_allocator/"+a] != int64(n.(float64)) {
					t.Errorf("allocator %s = %d, memray stats says %v", a, got["memory.allocations_by_allocator/"+a], n)
				}
			}
			// retain.py keeps 512 KiB in bytearrays to the end.
			if r := got["memory.retained_end"]; r < 512<<10 || r > got["memory.peak_heap"] {
				t.Errorf("memory.retained_end = %d, want at least 512 KiB and at most the peak %d", r, got["memory.peak_heap"])
			}
			var fns []string
			for _, r := range sink.Rows(t, "frames") {
				fns = append(fns, r["function"].(string))
			}
			if !slices.Contains(fns, "retain") || !slices.Contains(fns, "churn") {
				t.Errorf("frames %v lack retain and churn", fns)
			}
			if x.Rows["frames"] == 0 || x.Rows["stacks"] == 0 {
				t.Errorf("rows %v", x.Rows)
			}
		})
	}
}

// TestExtractRefuses: files memray refuses give ARTIFACT_PARSE_FAILED
// with memray's own reason and nothing written: a capture of a header
// version no memray release writes (retain.bin with its version
// replaced; flameox says which releases it knows) and a truncated one.
func TestExtractRefuses(t *testing.T) {
	needMemray(t)
	b, _ := os.ReadFile("testdata/retain.bin")
	trunc := filepath.Join(t.TempDir(), "trunc.bin")
	os.WriteFile(trunc, b[:100], 0o644)
	for _, c := range []struct{ path, reason, fix string }{
		{rawCapture(t, 99), "incompatible with this version of memray", "header version 99 is newer than any memray release flameox knows"},
		{rawCapture(t, 5), "incompatible with this version of memray", "header version 5 is not one any memray release from 1.1.0"},
		{trunc, "does not look like a binary generated by memray", "memray release that wrote it"},
	} {
		sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
		_, err := New().Extractors()[0].Extract(context.Background(), input(t, c.path), sink)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.ArtifactParseFailed || !strings.Contains(fe.Details["reason"], c.reason) {
			t.Errorf("%s: %v, want ARTIFACT_PARSE_FAILED: %s", c.path, err, c.reason)
		} else if fix := strings.Join(fe.Remediation, " "); !strings.Contains(fix, c.fix) {
			t.Errorf("%s: remediation %q, want %q", c.path, fix, c.fix)
		}
		if sink.Opened() != 0 {
			t.Errorf("%s: %d tables written", c.path, sink.Opened())
		}
	}
}

// TestExtractMissing: without python3, or with a python3 that cannot
// import memray, extraction says what is missing.
func TestExtractMissing(t *testing.T) {
	noPy := System{LookPath: func(string) (string, error) { return "", errors.New("not found") }}
	noMod := System{LookPath: func(string) (string, error) { return "/usr/bin/python3", nil },
		Output: func(context.Context, []string, time.Duration) ([]byte, error) {
			return nil, fault.New(fault.ProcessFailed, "exited with status 1").With("stderr", "/usr/bin/python3: No module named memray\n")
		}}
	for name, c := range map[string]struct {
		sys     System
		missing string
	}{"python3": {noPy, "python3"}, "memray": {noMod, "memray"}} {
		sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
		_, err := (&Extractor{Sys: c.sys}).Extract(context.Background(), input(t, "testdata/retain.bin"), sink)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.CapabilityUnavailable || fe.Details["missing"] != c.missing || len(fe.Remediation) == 0 {
			t.Errorf("%s: %v, want CAPABILITY_UNAVAILABLE missing=%s", name, err, c.missing)
		}
		if sink.Opened() != 0 {
			t.Errorf("%s: tables written", name)
		}
	}
}

func TestPlan(t *testing.T) {
	a := &Adapter{Sys: System{LookPath: func(string) (string, error) { return "/usr/bin/python3", nil }}}
	for _, c := range []struct {
		name string
		argv []string
		opts map[string]string
		want []string
		err  string
	}{
		{"script", []string{"/usr/bin/python3", "s.py", "x"}, nil,
			[]string{"/usr/bin/python3", "-m", "memray", "run", "-o", "/out/memray.bin", "-f", "-q", "s.py", "x"}, ""},
		{"module with options", []string{"/usr/bin/python3.12", "-m", "mod"}, map[string]string{"native": "true", "follow_fork": "true", "trace_python_allocators": "true"},
			[]string{"/usr/bin/python3.12", "-m", "memray", "run", "-o", "/out/memray.bin", "-f", "-q", "--native", "--follow-fork", "--trace-python-allocators", "-m", "mod"}, ""},
		{"bare script", []string{"/p/s.py"}, nil,
			[]string{"/usr/bin/python3", "-m", "memray", "run", "-o", "/out/memray.bin", "-f", "-q", "/p/s.py"}, ""},
		{"not python", []string{"/bin/ls"}, nil, nil, "runs Python programs"},
		{"interpreter flag", []string{"python3", "-X", "dev", "s.py"}, nil, nil, "needs a script"},
		{"unknown option", []string{"python3", "s.py"}, map[string]string{"leaks": "true"}, nil, "no capture option"},
		{"bad value", []string{"python3", "s.py"}, map[string]string{"native": "yes"}, nil, "want \"true\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := a.Plan(adapter.PlanRequest{OutputDir: "/out", Argv: c.argv, Options: c.opts})
			if c.err != "" {
				var fe *fault.Error
				if !errors.As(err, &fe) || fe.Code != fault.InvalidCapturePlan || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want INVALID_CAPTURE_PLAN %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(p.Argv, c.want) {
				t.Fatalf("argv %q, %v; want %q", p.Argv, err, c.want)
			}
		})
	}
}

const liveToml = `schema_version = 1

[workloads.retain]
argv = ["python3", "retain.py"]
timeout_seconds = 300
options = { trace_python_allocators = "true" }
`

// TestLiveCapture runs the real memray through capture.Service on a tiny
// script and extracts the capture it wrote.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	project := t.TempDir()
	src, _ := os.ReadFile("testdata/retain.py")
	if err := os.WriteFile(filepath.Join(project, "retain.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	l := adaptertest.Capture(t, project, liveToml, "retain", Name, process.New(), a)
	m := l.Result.Run
	if m.ExecutionStatus != run.ExecSucceeded || m.CaptureStatus != run.CaptureRegistered {
		t.Fatalf("run %s/%s: %+v\nstderr:\n%s", m.ExecutionStatus, m.CaptureStatus, m.Error, l.Stderr())
	}
	reg, ok := l.Regs[CaptureFile]
	if !ok || reg.Kind != Kind {
		t.Fatalf("%s is not registered as %s: %+v", CaptureFile, Kind, m.Artifacts)
	}
	if !slices.Contains(m.Command.Argv, "--trace-python-allocators") {
		t.Errorf("argv %q", m.Command.Argv)
	}
	in := input(t, l.Path(reg))
	if !a.Extractors()[0].Accepts(in) {
		t.Fatal("the capture is not accepted")
	}
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	if _, err := a.Extractors()[0].Extract(context.Background(), in, sink); err != nil {
		t.Fatal(err)
	}
	got := measurements(t, sink)
	want := memrayStats(t, l.Path(reg))
	if got["memory.peak_heap"] != int64(want["metadata"].(map[string]any)["peak_memory"].(float64)) || got["memory.retained_end"] < 512<<10 {
		t.Fatalf("measurements %v; memray stats %v", got, want["metadata"])
	}
}

// TestExtractAggregated: memray stats refuses a pre-aggregated capture
// (memray run --aggregate); the extractor still gives the peak and the
// retained memory from memray transform csv, and says what is unknown.
func TestExtractAggregated(t *testing.T) {
	needMemray(t)
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := New().Extractors()[0].Extract(context.Background(), input(t, "testdata/aggregated.bin"), sink)
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Rows(t, "measurements")
	got := measurementsOf(rows)
	// memray writes the snapshots of an aggregated capture as it runs:
	// they are there, below the high-water mark.
	snaps := snapshotRows(t, rows)
	if len(snaps) == 0 {
		t.Errorf("no snapshots")
	}
	for _, s := range snaps {
		if s.heap > got["memory.peak_heap"] {
			t.Errorf("snapshot %+v exceeds the peak %d", s, got["memory.peak_heap"])
		}
	}
	if got["memory.peak_heap"] < 512<<10 || got["memory.retained_end"] < 512<<10 || got["memory.retained_end"] > got["memory.peak_heap"] {
		t.Errorf("measurements %v", got)
	}
	if _, ok := got["memory.total_allocated"]; ok {
		t.Errorf("total allocated %d from a pre-aggregated capture", got["memory.total_allocated"])
	}
	if !slices.ContainsFunc(x.Limitations, func(l string) bool { return strings.Contains(l, "pre-aggregated") }) {
		t.Errorf("limitations %q", x.Limitations)
	}
}

// TestConformance checks the adapter contract with a Python workload and
// validates every capture in testdata.
func TestConformance(t *testing.T) {
	decl := adapter.ArtifactDecl{RelPath: CaptureFile, Kind: Kind, Role: "primary", Required: true}
	var fixtures []adaptertest.Fixture
	for _, p := range []string{"testdata/retain.bin", "testdata/aggregated.bin", "testdata/oldversion.bin"} {
		fixtures = append(fixtures, adaptertest.Fixture{Path: p, Decl: decl})
	}
	adaptertest.RunWith(t, New(), adaptertest.Config{Workload: []string{"/usr/bin/python3", "a b; $(x).py", "--flag"}}, fixtures...)
}
