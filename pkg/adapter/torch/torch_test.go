package torch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/fault"
)

// TestLauncherIsContrib: the launcher the binary carries is
// contrib/python/flameox_torch.py, byte for byte.
func TestLauncherIsContrib(t *testing.T) {
	want, err := os.ReadFile("../../../contrib/python/flameox_torch.py")
	if err != nil {
		t.Fatal(err)
	}
	if Launcher != string(want) {
		t.Fatal("pkg/adapter/torch/launcher.py differs from contrib/python/flameox_torch.py: cp contrib/python/flameox_torch.py pkg/adapter/torch/launcher.py")
	}
}

// TestPrepare: Prepare writes the launcher the plan runs, in the output
// directory and nowhere else.
func TestPrepare(t *testing.T) {
	out := t.TempDir()
	if err := New().Prepare(out); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	b, err := os.ReadFile(filepath.Join(out, LauncherFile))
	if err != nil || string(b) != Launcher || len(ents) != 1 {
		t.Fatalf("%v %v: %d bytes", ents, err, len(b))
	}
	if err := New().Prepare(filepath.Join(out, "absent")); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestParseOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		opts map[string]string
		want Options
		err  string
	}{
		{"default", nil, Options{Activities: []string{"cpu"}}, ""},
		{"all", map[string]string{"activities": "cuda, cpu", "record_shapes": "true", "profile_memory": "true", "with_stack": "true", "gzip": "true"},
			Options{Activities: []string{"cpu", "cuda"}, RecordShapes: true, ProfileMemory: true, WithStack: true, Gzip: true}, ""},
		{"cuda only", map[string]string{"activities": "cuda", "record_shapes": "false"}, Options{Activities: []string{"cuda"}}, ""},
		{"unknown option", map[string]string{"schedule": "1"}, Options{}, `torch has no capture option "schedule"`},
		{"unknown activity", map[string]string{"activities": "cpu,xpu"}, Options{}, "want cpu, cuda or cpu,cuda"},
		{"empty activities", map[string]string{"activities": ""}, Options{}, "want cpu, cuda or cpu,cuda"},
		{"twice", map[string]string{"activities": "cpu,cpu"}, Options{}, "names cpu twice"},
		{"not a bool", map[string]string{"with_stack": "yes"}, Options{}, `with_stack="yes": want "true" or "false"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseOptions(c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || fault.As(err).Code != fault.InvalidCapturePlan {
					t.Fatalf("err %v, want INVALID_CAPTURE_PLAN with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Activities, c.want.Activities) || got.RecordShapes != c.want.RecordShapes || got.ProfileMemory != c.want.ProfileMemory ||
				got.WithStack != c.want.WithStack || got.Gzip != c.want.Gzip {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// fakeSys finds the named executables and answers the probe with out.
func fakeSys(env map[string]string, exes map[string]string, out string, outErr error) System {
	return System{
		LookPath: func(f string) (string, error) {
			if p, ok := exes[f]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		},
		Output: func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error) {
			return []byte(out), outErr
		},
		Getenv: func(k string) string { return env[k] },
	}
}

func TestPlan(t *testing.T) {
	a := &Adapter{Sys: fakeSys(nil, map[string]string{"python3": "/usr/bin/python3"}, "", nil)}
	venv := &Adapter{Sys: fakeSys(map[string]string{PythonEnv: "/venv/bin/python"}, map[string]string{"python3": "/usr/bin/python3", "/venv/bin/python": "/venv/bin/python"}, "", nil)}
	out := "/tmp/out"
	for _, c := range []struct {
		name  string
		a     *Adapter
		argv  []string
		opts  map[string]string
		want  []string // argv after the launcher's text
		trace string
		lim   string // a limitation the plan states
		err   string
	}{
		{"script", a, []string{"/usr/bin/python3", "train.py", "--epochs", "2"}, nil,
			[]string{"--out", out + "/torch-trace.json", "--sidecar", out + "/torch-profile.json", "--activities", "cpu", "--", "train.py", "--epochs", "2"},
			TraceFile, "without cuda in options.activities", ""},
		{"flags", a, []string{"/usr/bin/python3", "train.py"}, map[string]string{"activities": "cpu,cuda", "record_shapes": "true", "profile_memory": "true", "with_stack": "true", "gzip": "true"},
			[]string{"--out", out + "/torch-trace.json.gz", "--sidecar", out + "/torch-profile.json", "--activities", "cpu,cuda", "--record-shapes", "--profile-memory", "--with-stack", "--", "train.py"},
			TraceFileGzip, "cuda is recorded only where torch.cuda.is_available()", ""},
		{"module", a, []string{"/opt/py/bin/python3.12", "-m", "pkg.train", "x"}, nil,
			[]string{"--out", out + "/torch-trace.json", "--sidecar", out + "/torch-profile.json", "--activities", "cpu", "--", "-m", "pkg.train", "x"},
			TraceFile, "without options.record_shapes", ""},
		{"code", a, []string{"/usr/bin/python", "-c", "import torch"}, nil,
			[]string{"--out", out + "/torch-trace.json", "--sidecar", out + "/torch-profile.json", "--activities", "cpu", "--", "-c", "import torch"},
			TraceFile, "without options.profile_memory", ""},
		{"bare script, python3", a, []string{"/p/train.py"}, nil,
			[]string{"--out", out + "/torch-trace.json", "--sidecar", out + "/torch-profile.json", "--activities", "cpu", "--", "/p/train.py"},
			TraceFile, "without options.with_stack", ""},
		{"bare script, FLAMEOX_TORCH_PYTHON", venv, []string{"/p/train.py"}, nil,
			[]string{"--out", out + "/torch-trace.json", "--sidecar", out + "/torch-profile.json", "--activities", "cpu", "--", "/p/train.py"},
			TraceFile, "", ""},
		{"not python", a, []string{"/bin/true"}, nil, nil, "", "", "torch runs Python programs"},
		{"interpreter alone", a, []string{"/usr/bin/python3"}, nil, nil, "", "", "needs a script, -m MODULE or -c CODE"},
		{"interpreter flag", a, []string{"/usr/bin/python3", "-X", "importtime", "t.py"}, nil, nil, "", "", "needs a script"},
		{"-m without module", a, []string{"/usr/bin/python3", "-m"}, nil, nil, "", "", "needs a script"},
		{"bad option", a, []string{"/usr/bin/python3", "t.py"}, map[string]string{"activities": "tpu"}, nil, "", "", "activities"},
		{"no argv", a, nil, nil, nil, "", "", "no argv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.a.Plan(adapter.PlanRequest{ProjectRoot: "/p", OutputDir: out, Argv: c.argv, Options: c.opts})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantExe := c.argv[0]
			if !isPython(wantExe) {
				wantExe = "/usr/bin/python3"
				if c.a == venv {
					wantExe = "/venv/bin/python"
				}
			}
			if len(p.Argv) < 2 || p.Argv[0] != wantExe || p.Argv[1] != out+"/"+LauncherFile {
				t.Fatalf("argv does not start with %s OUT/%s: %q", wantExe, LauncherFile, p.Argv)
			}
			if !slices.Equal(p.Argv[2:], c.want) {
				t.Errorf("argv after the launcher\n got %q\nwant %q", p.Argv[2:], c.want)
			}
			if len(p.Artifacts) != 2 || p.Artifacts[0].RelPath != c.trace || p.Artifacts[0].Kind != "execution_trace" || !p.Artifacts[0].Required ||
				p.Artifacts[1].RelPath != SidecarFile || p.Artifacts[1].Kind != SidecarKind {
				t.Errorf("artifacts %+v", p.Artifacts)
			}
			if c.lim != "" && !slices.ContainsFunc(p.Limitations, func(l string) bool { return strings.Contains(l, c.lim) }) {
				t.Errorf("limitations %q lack %q", p.Limitations, c.lim)
			}
		})
	}
}

func TestProbe(t *testing.T) {
	py := map[string]string{"python3": "/usr/bin/python3"}
	for _, c := range []struct {
		name    string
		env     map[string]string
		exes    map[string]string
		out     string
		outErr  error
		status  adapter.Status
		version string
		facts   map[string]string
		lim     string
	}{
		{"no python", nil, nil, "", nil, adapter.Unavailable, "", nil, "python3 was not found"},
		{"FLAMEOX_TORCH_PYTHON missing", map[string]string{PythonEnv: "/nope/python"}, py, "", nil, adapter.Unavailable, "", nil, PythonEnv + "=/nope/python is not an executable"},
		{"probe fails", nil, py, "", errors.New("exit 1"), adapter.Unknown, "", nil, "asking /usr/bin/python3 where torch is installed failed"},
		{"no torch", nil, py, "3.11.7\n\n\n\n\n", nil, adapter.Unavailable, "", map[string]string{"python_version": "3.11.7"}, "torch is not importable by /usr/bin/python3"},
		{"cuda build", nil, py, "3.11.7\n/v/torch/__init__.py\n2.15.0\n2.15.0+cu132\n13.2\n", nil, adapter.Available, "2.15.0+cu132",
			map[string]string{"torch_version": "2.15.0+cu132", "torch_cuda_build": "13.2", "torch_module": "/v/torch/__init__.py"}, "CUDA activity is recorded only where"},
		{"cpu build, other release", nil, py, "3.12.1\n/v/torch/__init__.py\n2.9.1\n2.9.1+cpu\n\n", nil, adapter.Available, "2.9.1+cpu",
			map[string]string{"pinned_version": Version}, "CPU-only build"},
		{"metadata only", nil, py, "3.12.1\n/v/torch/__init__.py\n2.15.0\n\n\n", nil, adapter.Available, "2.15.0", map[string]string{"torch_version": "2.15.0"}, ""},
		{"no version", nil, py, "3.12.1\n/v/torch/__init__.py\n\n\n\n", nil, adapter.Degraded, "", nil, "neither its metadata nor torch/version.py"},
		{"venv", map[string]string{PythonEnv: "/venv/bin/python"}, map[string]string{"/venv/bin/python": "/venv/bin/python"}, "3.11.7\n/venv/torch/__init__.py\n2.15.0\n2.15.0\n\n", nil,
			adapter.Available, "2.15.0", map[string]string{"python": "/venv/bin/python"}, "the probe asks /venv/bin/python (set FLAMEOX_TORCH_PYTHON for another)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp := (&Adapter{Sys: fakeSys(c.env, c.exes, c.out, c.outErr)}).Probe(context.Background())
			if cp.Status != c.status || cp.Version != c.version {
				t.Fatalf("status %s version %q, want %s %q: %+v", cp.Status, cp.Version, c.status, c.version, cp)
			}
			for k, v := range c.facts {
				if cp.Facts[k] != v {
					t.Errorf("fact %s = %q, want %q (%v)", k, cp.Facts[k], v, cp.Facts)
				}
			}
			if c.lim != "" && !slices.ContainsFunc(cp.Limitations, func(l string) bool { return strings.Contains(l, c.lim) }) {
				t.Errorf("limitations %q lack %q", cp.Limitations, c.lim)
			}
			if cp.Status != adapter.Available && len(cp.Remediation) == 0 {
				t.Errorf("%s without a remediation", cp.Status)
			}
		})
	}
}

// TestProbeWorkload: a workload whose argv names an interpreter is
// probed with that one, whatever python3 and FLAMEOX_TORCH_PYTHON say.
func TestProbeWorkload(t *testing.T) {
	exes := map[string]string{"python3": "/usr/bin/python3", "/venv/bin/python": "/venv/bin/python"}
	var asked []string
	sys := fakeSys(nil, exes, "", nil)
	sys.Output = func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error) {
		asked = append(asked, argv[0])
		return []byte("3.11.7\n/venv/torch/__init__.py\n2.15.0\n2.15.0+cpu\n\n"), nil
	}
	a := &Adapter{Sys: sys}
	for _, c := range []struct {
		argv   []string
		asked  string
		status adapter.Status
		lim    string
	}{
		{[]string{"/venv/bin/python", "train.py"}, "/venv/bin/python", adapter.Available, "asked the workload's interpreter /venv/bin/python"},
		{[]string{"/p/train.py"}, "/usr/bin/python3", adapter.Available, "the probe asks /usr/bin/python3"},
		{nil, "/usr/bin/python3", adapter.Available, "the probe asks"},
		{[]string{"/gone/bin/python3", "t.py"}, "", adapter.Unavailable, "the workload's interpreter /gone/bin/python3 is not an executable"},
	} {
		asked = nil
		cp := a.ProbeWorkload(context.Background(), c.argv)
		if cp.Status != c.status || (c.asked != "" && (len(asked) != 1 || asked[0] != c.asked || cp.Executable != c.asked)) || (c.asked == "" && len(asked) != 0) {
			t.Errorf("%q: status %s, asked %q, executable %q", c.argv, cp.Status, asked, cp.Executable)
		}
		if !slices.ContainsFunc(cp.Limitations, func(l string) bool { return strings.Contains(l, c.lim) }) {
			t.Errorf("%q: limitations %q lack %q", c.argv, cp.Limitations, c.lim)
		}
	}
}

// TestProbeScript runs the probe's script on a real python3 with the
// stand-in torch of testdata/faketorch on its path: it finds the module
// and reads its version.py without importing it.
func TestProbeScript(t *testing.T) {
	py := python3(t)
	fake, _ := filepath.Abs("testdata/faketorch")
	a := &Adapter{Sys: System{LookPath: func(string) (string, error) { return py, nil }, Getenv: func(string) string { return "" },
		Output: func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error) {
			return runPython(t, fake, nil, argv[1:]...).stdout, nil
		}}}
	c := a.Probe(context.Background())
	// The stand-in has no installed metadata; its version.py names no
	// __version__, so the probe cannot name one.
	if c.Status != adapter.Degraded || c.Facts["torch_module"] != filepath.Join(fake, "torch", "__init__.py") {
		t.Fatalf("%+v", c)
	}
	if !slices.ContainsFunc(c.Limitations, func(l string) bool { return strings.Contains(l, "CPU-only build") }) {
		t.Errorf("limitations %q", c.Limitations)
	}
}

func TestValidate(t *testing.T) {
	a := New()
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	traceDecl := adapter.ArtifactDecl{RelPath: TraceFile, Kind: Kind, Role: "primary", Required: true}
	sideDecl := adapter.ArtifactDecl{RelPath: SidecarFile, Kind: SidecarKind, Role: "metadata", Required: true}
	for _, c := range []struct {
		name string
		path string
		decl adapter.ArtifactDecl
		err  string
	}{
		{"torch trace", "testdata/matmul-trace.json", traceDecl, ""},
		{"gzip trace", "testdata/matmul-trace.json.gz", traceDecl, ""},
		{"sidecar", "testdata/torch-profile.json", sideDecl, ""},
		{"sidecar as trace", "testdata/torch-profile.json", traceDecl, "not a Chrome trace"},
		{"trace as sidecar", "testdata/matmul-trace.json", sideDecl, "no flameox_torch format number"},
		{"truncated gzip", write("t.gz", "\x1f\x8b\x08\x00"), traceDecl, "not a Chrome trace"},
		{"other format", write("s.json", `{"flameox_torch": 2}`), sideDecl, "format 2"},
		{"not JSON", write("n.json", "flameox_torch"), sideDecl, "not a torch launcher sidecar"},
		{"too large", write("big.json", `{"flameox_torch":1,"x":"`+strings.Repeat("a", maxSidecarBytes)+`"}`), sideDecl, "larger than 1 MiB"},
		{"missing", filepath.Join(dir, "absent"), sideDecl, "open"},
		{"process output", write("o.txt", "anything"), adapter.ArtifactDecl{RelPath: "stdout.txt", Kind: "process_output"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := a.Validate(c.path, c.decl)
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}

func TestViewer(t *testing.T) {
	for _, c := range []struct{ kind, tool string }{{Kind, "Perfetto UI"}, {SidecarKind, "json.tool"}, {"process_output", "less"}} {
		v, err := New().Viewer("/a/b.json", c.kind)
		if err != nil || v.Tool != c.tool {
			t.Errorf("%s: %+v %v", c.kind, v, err)
		}
	}
}

// TestConformance checks the adapter contract with a Python workload and
// validates the real torch files in testdata.
func TestConformance(t *testing.T) {
	adaptertest.RunWith(t, New(), adaptertest.Config{Workload: []string{"/usr/bin/python3", "a b; $(x).py", "--flag"}},
		adaptertest.Fixture{Path: "testdata/matmul-trace.json", Decl: adapter.ArtifactDecl{RelPath: TraceFile, Kind: Kind, Role: "primary", Required: true}},
		adaptertest.Fixture{Path: "testdata/matmul-trace.json.gz", Decl: adapter.ArtifactDecl{RelPath: TraceFileGzip, Kind: Kind, Role: "primary", Required: true}},
		adaptertest.Fixture{Path: "testdata/torch-profile.json", Decl: adapter.ArtifactDecl{RelPath: SidecarFile, Kind: SidecarKind, Role: "metadata", Required: true}})
}

func FuzzParseSidecar(f *testing.F) {
	b, _ := os.ReadFile("testdata/torch-profile.json")
	f.Add(b)
	f.Add([]byte(`{"flameox_torch": 1}`))
	f.Add([]byte(`{"flameox_torch": null, "cuda_devices": [1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSidecar(bytes.NewReader(b))
		if err == nil && (s.Format == nil || *s.Format != SidecarFormat) {
			t.Fatalf("accepted %+v", s)
		}
	})
}

// TestMakefilePin: `make test-torch` installs the release Version names.
func TestMakefilePin(t *testing.T) {
	b, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nTORCH_VERSION   ?= "+Version+"\n") {
		t.Fatalf("the Makefile's TORCH_VERSION is not %s (pkg/adapter/torch.Version)", Version)
	}
}
