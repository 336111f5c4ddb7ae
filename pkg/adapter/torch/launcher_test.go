package torch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/observe"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

func python3(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, "python3")
}

type pyResult struct {
	stdout, stderr []byte
	code           int
}

// runPython runs python3 ARGS with pythonPath as PYTHONPATH and env
// added to a minimal environment.
func runPython(t *testing.T, pythonPath string, env []string, args ...string) pyResult {
	t.Helper()
	cmd := exec.Command(python3(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PYTHONPATH=" + pythonPath, "PYTHONDONTWRITEBYTECODE=1"}, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return pyResult{o.Bytes(), e.Bytes(), code}
}

func readSidecar(t *testing.T, path string) *Sidecar {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseSidecar(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLauncher runs the argv the plan builds (python3 OUT/flameox_torch.py,
// written by Prepare) on testdata/faketorch's stand-in for torch, which records
// what the launcher passed to torch.profiler.profile: the workload's
// argv, sys.path[0] and exit status are a plain `python script`'s, the
// trace is exported also when it raises, and the sidecar and the
// observations say what was asked for and used. TestLiveCapture runs the
// real torch.
func TestLauncher(t *testing.T) {
	fake, _ := filepath.Abs("testdata/faketorch")
	contrib, _ := filepath.Abs("../../../contrib/python")
	work := filepath.Join(fake, "work.py")
	for _, c := range []struct {
		name      string
		opts      map[string]string
		mode      string
		env       []string
		path      string // PYTHONPATH beside the stand-in
		code      int
		program   int // the program's own exit status, when the launcher's differs
		stderr    string
		exception string
		exported  bool
		used      []string
		lims      int
		processes int // headers in the observations file
		steps     int
	}{
		{name: "steps", mode: "steps", exported: true, used: []string{"cpu"}, processes: 1, steps: 3},
		{name: "ok", opts: map[string]string{"record_shapes": "true", "profile_memory": "true"}, exported: true, used: []string{"cpu"}, processes: 1},
		{name: "raise", mode: "raise", code: 1, stderr: "ValueError: boom", exception: "ValueError", exported: true, used: []string{"cpu"}, processes: 1},
		{name: "exit 7", mode: "exit7", code: 7, exported: true, used: []string{"cpu"}, processes: 1},
		{name: "exit message", mode: "exitmsg", code: 1, stderr: "a message", exported: true, used: []string{"cpu"}, processes: 1},
		{name: "cuda unavailable", opts: map[string]string{"activities": "cpu,cuda", "with_stack": "true"}, stderr: "cuda was asked for but torch.cuda.is_available() is false",
			exported: true, used: []string{"cpu"}, lims: 1, processes: 1},
		{name: "cuda only, unavailable", opts: map[string]string{"activities": "cuda"}, exported: true, used: []string{"cpu"}, lims: 2, processes: 1},
		{name: "export fails", env: []string{"FAKE_TORCH_EXPORT_FAILS=1"}, code: 1, program: -1, stderr: "export_chrome_trace failed", used: []string{"cpu"}, processes: 1},
		// The workload's own flameox_observe: the launcher writes through
		// it, so the file has one header for the one process.
		{name: "workload observes", env: []string{"WORK_OBSERVES=1"}, path: contrib, exported: true, used: []string{"cpu"}, processes: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			sys := fakeSys(nil, map[string]string{"python3": python3(t)}, "", nil)
			p, err := (&Adapter{Sys: sys}).Plan(adapter.PlanRequest{ProjectRoot: fake, OutputDir: out, Argv: []string{python3(t), work, c.mode}, Options: c.opts})
			if err != nil {
				t.Fatal(err)
			}
			obs := filepath.Join(out, observe.File)
			pp := fake
			if c.path != "" {
				pp += string(os.PathListSeparator) + c.path
			}
			if err := (&Adapter{Sys: sys}).Prepare(out); err != nil {
				t.Fatal(err)
			}
			r := runPython(t, pp, append([]string{observe.EnvVar + "=" + obs}, c.env...), p.Argv[1:]...)
			if r.code != c.code || !strings.Contains(string(r.stderr), c.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q lacks %q", r.code, c.code, r.stderr, c.stderr)
			}
			// A traceback is the program's, as `python SCRIPT` prints it.
			if c.exception != "" && (!strings.Contains(string(r.stderr), "Traceback (most recent call last):\n  File \""+work+"\", line") ||
				strings.Contains(string(r.stderr), LauncherFile) || strings.Contains(string(r.stderr), "runpy")) {
				t.Errorf("traceback %s", r.stderr)
			}
			if !strings.Contains(string(r.stdout), "argv ['"+work+"'") || !strings.Contains(string(r.stdout), "path0 "+fake+"\n") {
				t.Errorf("the workload saw %s", r.stdout)
			}
			s := readSidecar(t, filepath.Join(out, SidecarFile))
			o, _ := ParseOptions(c.opts)
			program := c.code
			if c.program < 0 {
				program = 0
			}
			if s.ExitStatus != program || s.TraceExported != c.exported || !slices.Equal(s.ActivitiesUsed, c.used) || !slices.Equal(s.ActivitiesRequested, o.Activities) ||
				s.RecordShapes != o.RecordShapes || s.ProfileMemory != o.ProfileMemory || s.WithStack != o.WithStack || s.TorchVersion != "0.0.0+fake" ||
				len(s.Limitations) != c.lims || s.Steps != c.steps || s.Trace != TraceFile || s.CUDAAvailable || len(s.CUDADevices) != 0 {
				t.Errorf("sidecar %+v", *s)
			}
			if (s.Exception == nil) != (c.exception == "") || (s.Exception != nil && *s.Exception != c.exception) {
				t.Errorf("exception %v, want %q", s.Exception, c.exception)
			}
			if c.exported {
				var tr struct {
					Kwargs struct {
						Activities    []string `json:"activities"`
						RecordShapes  bool     `json:"record_shapes"`
						ProfileMemory bool     `json:"profile_memory"`
						WithStack     bool     `json:"with_stack"`
					} `json:"fake_profile_kwargs"`
					Ranges [][2]string `json:"fake_ranges"`
				}
				b, err := os.ReadFile(filepath.Join(out, TraceFile))
				if err != nil {
					t.Fatal(err)
				}
				json.Unmarshal(b, &tr)
				k := tr.Kwargs
				if !slices.Equal(k.Activities, []string{"CPU"}) || k.RecordShapes != o.RecordShapes || k.ProfileMemory != o.ProfileMemory || k.WithStack != o.WithStack {
					t.Errorf("torch.profiler.profile got %+v, options %+v", k, o)
				}
				// flameox_torch.step() opens ProfilerStep#N and closes it at
				// the next call, the last one when the program ends.
				var want [][2]string
				for i := range c.steps {
					n := fmt.Sprintf("ProfilerStep#%d", i)
					want = append(want, [2]string{"enter", n}, [2]string{"exit", n})
				}
				if !slices.Equal(tr.Ranges, want) {
					t.Errorf("record_function ranges %q, want %q", tr.Ranges, want)
				}
			} else if _, err := os.Stat(filepath.Join(out, TraceFile)); err == nil {
				t.Error("a trace after a failed export")
			}
			f, err := os.Open(obs)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := observe.Parse(f, config.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			vals := map[string]string{}
			for _, ob := range got.Observations {
				vals[ob.Name] = string(ob.Value)
			}
			want := map[string]string{"torch.profiler.torch_version": `"0.0.0+fake"`, "torch.profiler.activities_used": `["cpu"]`,
				"torch.profiler.record_shapes": boolJSON(o.RecordShapes), "torch.profiler.with_stack": boolJSON(o.WithStack)}
			for k, v := range want {
				if vals[k] != v {
					t.Errorf("observation %s = %s, want %s (%v)", k, vals[k], v, vals)
				}
			}
			if got.Processes != c.processes {
				t.Errorf("%d headers, want %d", got.Processes, c.processes)
			}
		})
	}
}

func boolJSON(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestLauncherUsage: a launcher command without the program exits 2
// with argparse's usage, before it imports torch.
func TestLauncherUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "x.json"}, "the program follows --"},
		{[]string{"--out", "x.json", "--"}, "after -- comes SCRIPT"},
		{[]string{"--out", "x.json", "--", "-X", "t.py"}, "after -- comes SCRIPT"},
		{[]string{"--out", "x.json", "--activities", "tpu", "--", "t.py"}, "unknown activity 'tpu'"},
		{[]string{"--", "t.py"}, "--out"},
	} {
		r := runPython(t, t.TempDir(), nil, append([]string{"-c", Launcher}, c.args...)...)
		if r.code != 2 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestLauncherNoTorch: without torch the launcher says which interpreter
// lacks it and exits 1, running nothing (testdata/notorch's torch fails
// to import, as a missing one does).
func TestLauncherNoTorch(t *testing.T) {
	notorch, _ := filepath.Abs("testdata/notorch")
	fake, _ := filepath.Abs("testdata/faketorch")
	out := t.TempDir()
	r := runPython(t, notorch, nil, "-c", Launcher, "--out", filepath.Join(out, "t.json"), "--", filepath.Join(fake, "work.py"))
	if r.code != 1 || !strings.Contains(string(r.stderr), "cannot import torch.profiler (stand-in: no torch here): install torch for this interpreter") || len(r.stdout) != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("wrote %v", ents)
	}
}

// TestLauncherBesideSDK runs contrib/python/flameox_torch.py by hand, as
// a user does outside flameox, beside flameox_observe.py: the trace, the
// sidecar and one process's observations (a header and one event).
func TestLauncherBesideSDK(t *testing.T) {
	fake, _ := filepath.Abs("testdata/faketorch")
	out := t.TempDir()
	obs := filepath.Join(out, "obs.jsonl")
	r := runPython(t, fake, []string{observe.EnvVar + "=" + obs}, "../../../contrib/python/flameox_torch.py", "--out", filepath.Join(out, "t.json"), "--", filepath.Join(fake, "work.py"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if s := readSidecar(t, filepath.Join(out, SidecarFile)); !s.TraceExported || s.Trace != "t.json" {
		t.Errorf("sidecar %+v", *s)
	}
	b, _ := os.ReadFile(obs)
	if !bytes.HasPrefix(b, []byte(`{"flameox_observations": 1, "language": "python", "pid": `)) || bytes.Count(b, []byte("\n")) != 2 {
		t.Errorf("observations %s", b)
	}
}
