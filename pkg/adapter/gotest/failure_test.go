package gotest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestReadFailure classifies go test output as go writes it: the
// test2json stream on stdout and the go command's own errors on stderr.
func TestReadFailure(t *testing.T) {
	for _, tt := range []struct {
		name, stdout, stderr string
		in                   adapter.FailureInput
		class, summary, line string
		tests                []string
	}{
		{name: "build-fail event",
			stdout: `{"ImportPath":"example.com/x [example.com/x.test]","Action":"build-output","Output":"./x_test.go:3:1: syntax error: non-declaration statement outside function body\n"}
{"ImportPath":"example.com/x [example.com/x.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/x"}
{"Action":"output","Package":"example.com/x","Output":"FAIL\texample.com/x [build failed]\n"}
{"Action":"fail","Package":"example.com/x","Elapsed":0,"FailedBuild":"example.com/x [example.com/x.test]"}
`, class: adapter.FailureBuild, summary: "example.com/x", line: "syntax error"},
		{name: "build failed on stderr",
			stderr: "# example.com/x\n./x.go:1:1: expected 'package', found 'EOF'\nFAIL\texample.com/x [build failed]\n",
			class:  adapter.FailureBuild, summary: "example.com/x", line: "expected 'package'"},
		{name: "setup failed",
			stdout: `{"Action":"output","Package":"example.com/x","Output":"FAIL\texample.com/x [setup failed]\n"}` + "\n",
			stderr: "# example.com/x\nx.go:1:1: no required module provides package example.com/y\n",
			class:  adapter.FailureSetup, summary: "example.com/x", line: "no required module"},
		{name: "read-only GOCACHE",
			stderr: "go: failed to initialize build cache at /home/u/.cache/go-build: mkdir /home/u/.cache/go-build: read-only file system\n",
			class:  adapter.FailureSetup, summary: "build cache", line: "read-only file system"},
		{name: "read-only GOCACHE, go 1.26",
			stderr: "failed to initialize build cache at /p/gocache: mkdir /p/gocache: read-only file system\n",
			class:  adapter.FailureSetup, summary: "build cache", line: "read-only file system"},
		{name: "test failed",
			stdout: `{"Action":"run","Package":"example.com/x","Test":"TestA"}
{"Action":"output","Package":"example.com/x","Test":"TestA","Output":"    x_test.go:9: got 1, want 2\n"}
{"Action":"fail","Package":"example.com/x","Test":"TestA"}
{"Action":"pass","Package":"example.com/x","Test":"TestB"}
{"Action":"fail","Package":"example.com/x"}
`, class: adapter.FailureTest, summary: "1 test(s) failed: example.com/x.TestA", line: "got 1, want 2", tests: []string{"example.com/x.TestA"}},
		{name: "panic",
			stdout: `{"Action":"run","Package":"example.com/x","Test":"TestP"}
{"Action":"output","Package":"example.com/x","Test":"TestP","Output":"panic: boom [recovered]\n"}
{"Action":"fail","Package":"example.com/x","Test":"TestP"}
`, class: adapter.FailurePanic, summary: "example.com/x.TestP", line: "panic: boom", tests: []string{"example.com/x.TestP"}},
		{name: "go test -timeout",
			stdout: `{"Action":"output","Package":"example.com/x","Test":"TestSlow","Output":"panic: test timed out after 1s\n"}
{"Action":"fail","Package":"example.com/x","Test":"TestSlow"}
`, class: adapter.FailureTimeout, summary: "timed out after 1s"},
		{name: "capture timeout", in: adapter.FailureInput{TimedOut: true}, stderr: "signal: terminated\n",
			class: adapter.FailureTimeout, summary: "time limit", line: "terminated"},
		{name: "no benchmark matched",
			in:     adapter.FailureInput{Plan: &adapter.Plan{Argv: []string{"go", "test", "-bench", "Nope", "."}}, Validation: "the -bench pattern \"Nope\" matched none"},
			stdout: `{"Action":"pass","Package":"example.com/x","Test":"TestA"}` + "\n" + `{"Action":"pass","Package":"example.com/x"}` + "\n",
			class:  adapter.FailureNoBenchmarks, summary: "matched none"},
		// Benchmarks ran (no tests, as -run ^$ asks) and another check, an
		// oracle, failed: not go test's failure to classify.
		{name: "benchmarks ran, oracle failed",
			in:     adapter.FailureInput{Plan: &adapter.Plan{Argv: []string{"go", "test", "-run", "^$", "-bench", ".", "."}}, Validation: "oracle: the output differs"},
			stdout: `{"Action":"output","Package":"example.com/x","Output":"BenchmarkSum-2   \t 100\t 1000 ns/op\n"}` + "\n" + `{"Action":"pass","Package":"example.com/x"}` + "\n"},
		{name: "nothing known", stdout: "not json\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := tt.in
			in.Stdout, in.Stderr = filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
			if tt.stdout != "" {
				os.WriteFile(in.Stdout, []byte(tt.stdout), 0o600)
			}
			if tt.stderr != "" {
				os.WriteFile(in.Stderr, []byte(tt.stderr), 0o600)
			}
			f := New().ReadFailure(context.Background(), in)
			if tt.class == "" {
				if f != nil {
					t.Fatalf("failure %+v, want none", f)
				}
				return
			}
			if f == nil || f.Class != tt.class || !strings.Contains(f.Summary, tt.summary) {
				t.Fatalf("failure %+v, want class %s saying %q", f, tt.class, tt.summary)
			}
			if tt.line != "" && !strings.Contains(strings.Join(f.Lines, "\n"), tt.line) {
				t.Errorf("lines %q do not show %q", f.Lines, tt.line)
			}
			if tt.tests != nil && !slices.Equal(f.FailedTests, tt.tests) {
				t.Errorf("failed tests %q, want %q", f.FailedTests, tt.tests)
			}
		})
	}
}

const tinyMod = "module example.com/tiny\n\ngo 1.22\n"

// tinyProject writes a one-package module with the given test file.
func tinyProject(t *testing.T, test string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs real tests")
	}
	testenv.LookPath(t, "go")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tinyMod), 0o644)
	os.WriteFile(filepath.Join(dir, "tiny.go"), []byte("package tiny\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tiny_test.go"), []byte(test), 0o644)
	return dir
}

const tinyTests = `package tiny

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1+2 != 3")
	}
}

func BenchmarkAdd(b *testing.B) {
	for range b.N {
		Add(1, 2)
	}
}
`

// TestLiveFailureClasses: a real go test capture that does not succeed
// carries, in its result, the class of the failure, the failed tests, the
// tails of its stored output and what to do.
func TestLiveFailureClasses(t *testing.T) {
	for _, tt := range []struct {
		name, test, argv, class, tail string
		tests                         []string
	}{
		{"build", "package tiny\n\nfunc TestX(t *testing.T) { undefinedThing() }\n", `"-run", "X", "."`, adapter.FailureBuild, "undefined", nil},
		{"test", "package tiny\n\nimport \"testing\"\n\nfunc TestBad(t *testing.T) { t.Fatal(\"want 4, got 5\") }\n", `"-run", "Bad", "."`,
			adapter.FailureTest, "want 4, got 5", []string{"example.com/tiny.TestBad"}},
		{"panic", "package tiny\n\nimport \"testing\"\n\nfunc TestBoom(t *testing.T) { panic(\"kaboom\") }\n", `"-run", "Boom", "."`,
			adapter.FailurePanic, "kaboom", []string{"example.com/tiny.TestBoom"}},
		{"nobench", tinyTests, `"-run", "^$", "-bench", "NoSuchBench", "."`, adapter.FailureNoBenchmarks, "PASS", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tinyProject(t, tt.test)
			toml := "schema_version = 1\n[workloads.w]\nargv = [\"go\", \"test\", " + tt.argv + "]\ntimeout_seconds = 300\nenv = { GOWORK = \"off\" }\n"
			l := adaptertest.Capture(t, dir, toml, "w", Name, process.New(), New())
			f, m := l.Result.Failure, l.Result.Run
			if f == nil || f.Class != tt.class {
				t.Fatalf("failure %+v, want class %s (run %s, %+v)", f, tt.class, m.ExecutionStatus, m.Error)
			}
			if tt.tests != nil && !slices.Equal(f.FailedTests, tt.tests) {
				t.Errorf("failed tests %q, want %q", f.FailedTests, tt.tests)
			}
			tails := strings.Join(f.Lines, "\n")
			for _, o := range []*capture.OutputTail{f.Stdout, f.Stderr} {
				if o != nil {
					tails += o.Text
					if o.Bytes <= 0 || int64(len(o.Text)) > 4096+4096/2 {
						t.Errorf("tail %+v", o)
					}
				}
			}
			if !strings.Contains(tails, tt.tail) {
				t.Errorf("the failure's lines and tails do not show %q: %+v", tt.tail, f)
			}
			if f.Stdout == nil || f.Stdout.ArtifactID == "" || !slices.Contains(l.Result.ArtifactIDs, f.Stdout.ArtifactID) {
				t.Errorf("the stdout tail does not name its stored artifact: %+v", f.Stdout)
			}
			if m.Error != nil && (m.Error.Details["failure_class"] != tt.class || len(m.Error.Remediation) == 0) {
				t.Errorf("the run's error does not carry the class and a remedy: %+v", m.Error)
			}
		})
	}
}

// TestLiveContainedCache: a gotest capture inside Bubblewrap builds (the
// user's GOCACHE is read-only in there) with the workspace's persistent
// caches, and a second capture finds them filled.
func TestLiveContainedCache(t *testing.T) {
	testenv.LookPath(t, "bwrap")
	dir := tinyProject(t, tinyTests)
	// The workload's own GOCACHE is one go must create, in the project:
	// read-only inside the sandbox, as the user's is.
	toml := "schema_version = 1\n[workloads.w]\nargv = [\"go\", \"test\", \"-run\", \"Add\", \"-bench\", \"Add\", \"-benchtime\", \"10x\", \".\"]\ntimeout_seconds = 300\n" +
		"env = { GOWORK = \"off\", GOTOOLCHAIN = \"local\", GOCACHE = \"" + filepath.Join(dir, "gocache") + "\" }\n"
	contained := func(s *capture.Service) { s.WS.Config.Execution.Containment = "required" }
	first := adaptertest.CaptureWith(t, dir, toml, "w", Name, contained, process.New(), New())
	m := first.Result.Run
	if m.Containment == nil || m.Containment.State != "contained" {
		t.Fatalf("containment %+v", m.Containment)
	}
	if m.ExecutionStatus != run.ExecSucceeded || m.ValidationStatus != run.ValidationPassed {
		t.Fatalf("contained capture: %s/%s %+v\nfailure %+v", m.ExecutionStatus, m.ValidationStatus, m.Error, first.Result.Failure)
	}
	cache := filepath.Join(first.WS.Root, capture.CacheDir, "go-build")
	if ents, err := os.ReadDir(cache); err != nil || len(ents) == 0 {
		t.Fatalf("the build cache %s is empty after a capture: %v", cache, err)
	}
	second := adaptertest.CaptureWith(t, dir, toml, "w", Name, contained, process.New(), New())
	m2 := second.Result.Run
	if m2.ExecutionStatus != run.ExecSucceeded || m2.ValidationStatus != run.ValidationPassed {
		t.Fatalf("second contained capture: %s/%s %+v", m2.ExecutionStatus, m2.ValidationStatus, m2.Error)
	}
	stdout := second.Regs["stdout.txt"]
	in := adapter.ExtractInput{RunID: m2.RunID, ArtifactID: stdout.ArtifactID, Path: second.Path(stdout), Started: *m2.Process.StartedAt}
	in.Head, _ = os.ReadFile(in.Path)
	sink := newSink(t)
	if _, err := (&BenchExtractor{}).Extract(context.Background(), in, sink); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range sink.Rows(t, "measurements") {
		found = found || r["name"] == "gotest.build_time"
	}
	if !found {
		t.Fatal("the second contained capture has no gotest.build_time row")
	}
}

// TestLiveCancelledProfileNotRegistered: a capture cancelled while the
// test runs leaves the 0-byte cpu.pprof go test had opened; it is not
// registered as a sample profile, and a limitation says why.
func TestLiveCancelledProfileNotRegistered(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "started")
	dir := tinyProject(t, `package tiny

import (
	"os"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	os.WriteFile(os.Getenv("MARK"), nil, 0o644)
	time.Sleep(time.Hour)
}
`)
	toml := "schema_version = 1\n[workloads.w]\nargv = [\"go\", \"test\", \"-run\", \"Wait\", \".\"]\ntimeout_seconds = 600\noptions = { profiles = \"cpu\" }\nenv = { GOWORK = \"off\", MARK = \"" + mark + "\" }\n"
	os.WriteFile(filepath.Join(dir, workload.FileName), []byte(toml), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	init, err := workspace.Init(ctx, dir, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	file, _ := workload.Load(dir)
	wl, _ := file.Workload("w")
	if _, err := workload.Approve(ctx, init.Workspace, wl, time.Now()); err != nil {
		t.Fatal(err)
	}
	go func() {
		for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(mark); err == nil {
				break
			}
		}
		cancel()
	}()
	svc := &capture.Service{WS: init.Workspace, Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: adapter.NewRegistry(process.New(), New())}
	res, err := svc.Execute(ctx, capture.PlanRequest{Adapter: Name, Workload: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the test never started: %+v", res.Run.Error)
	}
	m := res.Run
	if m.ExecutionStatus != run.ExecCancelled {
		t.Fatalf("execution %s", m.ExecutionStatus)
	}
	for _, a := range m.Artifacts {
		if a.Kind == KindSampleProfile || a.ByteLength == 0 {
			t.Errorf("registered %s (%s, %d bytes)", a.DisplayName, a.Kind, a.ByteLength)
		}
	}
	if !strings.Contains(strings.Join(m.Limitations, " "), "cpu.pprof is empty") {
		t.Errorf("no limitation says the empty profile was left out: %q", m.Limitations)
	}
	if res.Failure == nil || res.Failure.Class != adapter.FailureCancelled {
		t.Errorf("failure %+v, want cancelled", res.Failure)
	}
}

// FuzzReadFailure: any stdout and stderr give a failure or nil, never a
// panic, with bounded lines and test names.
func FuzzReadFailure(f *testing.F) {
	f.Add([]byte(`{"Action":"fail","Package":"p","Test":"T"}`+"\n"), []byte("FAIL\tp [build failed]\n"), false)
	f.Add([]byte(`{"Action":"output","Package":"p","Test":"T","Output":"panic: x\n"}`), []byte("go: bad\n"), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, stdout, stderr []byte, timedOut bool) {
		in := adapter.FailureInput{Stdout: filepath.Join(dir, "o"), Stderr: filepath.Join(dir, "e"), TimedOut: timedOut}
		os.WriteFile(in.Stdout, stdout, 0o600)
		os.WriteFile(in.Stderr, stderr, 0o600)
		r := New().ReadFailure(context.Background(), in)
		if r != nil && (r.Class == "" || len(r.Lines) > failLines || len(r.FailedTests) > maxFailedTests) {
			t.Fatalf("failure %+v", r)
		}
	})
}
