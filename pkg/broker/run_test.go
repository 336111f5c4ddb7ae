package broker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

func TestShellMetacharactersStayLiteral(t *testing.T) {
	res := run(t, Spec{Argv: []string{"/bin/echo", "$(id)", ";", "|", "`id`", "*", "&&", "x > /tmp/y"}})
	if got, want := string(res.Stdout.Data), "$(id) ; | `id` * && x > /tmp/y\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if res.Path != "/bin/echo" || res.ExitCode != 0 || res.Pid <= 0 || res.Start.IsZero() || res.Wall <= 0 {
		t.Errorf("result = %+v", res)
	}
}

func TestRefusedBeforeAnythingRuns(t *testing.T) {
	marker := tempFile(t, "marker")
	notDir := tempFile(t, "file")
	os.WriteFile(notDir, nil, 0o644)
	started := false
	for name, spec := range map[string]Spec{
		"nul in argv": {Argv: []string{"/usr/bin/touch", marker, "x\x00y"}},
		"nul in env":  {Argv: []string{"/usr/bin/touch", marker}, Env: []string{"A=b\x00c"}},
		"dup env":     {Argv: []string{"/usr/bin/touch", marker}, Env: []string{"A=1", "A=2"}},
		"bad env":     {Argv: []string{"/usr/bin/touch", marker}, Env: []string{"=x"}},
		"empty argv":  {},
		"empty name":  {Argv: []string{""}},
		"missing dir": {Argv: []string{"/usr/bin/touch", marker}, Dir: "/nonexistent/dir"},
		"file as dir": {Argv: []string{"/usr/bin/touch", marker}, Dir: notDir},
	} {
		spec.OnStart = func(int) { started = true }
		res, err := Run(t.Context(), spec)
		if !fault.Is(err, fault.ExecutionRefused) || res != nil {
			t.Errorf("%s: got %v, %v; want EXECUTION_REFUSED", name, res, err)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) || started {
		t.Errorf("a refused spec ran (marker: %v, started: %v)", err, started)
	}
}

func TestSpawnFailure(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644)
	for name, spec := range map[string]Spec{
		"not executable": {Argv: []string{plain}},
		"not found":      {Argv: []string{"/nonexistent/prog"}},
		"not in PATH":    {Argv: []string{"flameox-no-such-tool"}, Env: testEnv},
		"no child PATH":  {Argv: []string{"echo"}, Env: []string{"HOME=/"}},
		"directory":      {Argv: []string{dir}},
	} {
		if _, err := Run(t.Context(), spec); !fault.Is(err, fault.ProcessFailed) {
			t.Errorf("%s: err = %v, want PROCESS_FAILED", name, err)
		}
	}
}

// TestChildPathResolution: a bare argv[0] is found in the CHILD's PATH (which
// the test's own PATH does not contain) and reported as an absolute path; a
// relative argv[0] with a slash is taken relative to Dir. (For a #! script
// the kernel passes the executed path as $0.)
func TestChildPathResolution(t *testing.T) {
	bin := t.TempDir()
	tool := filepath.Join(bin, "fx-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho \"tool $0 $PWD\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, Spec{Argv: []string{"fx-tool"}, Env: []string{"PATH=relative/dir:" + bin + ":/usr/bin:/bin"}, Dir: "/"})
	if res.Path != tool || string(res.Stdout.Data) != "tool "+tool+" /\n" {
		t.Errorf("path %q, stdout %q", res.Path, res.Stdout.Data)
	}
	res = run(t, Spec{Argv: []string{"./fx-tool"}, Dir: bin})
	if res.Path != tool || res.Dir != bin || string(res.Stdout.Data) != "tool "+tool+" "+bin+"\n" {
		t.Errorf("path %q, dir %q, stdout %q", res.Path, res.Dir, res.Stdout.Data)
	}
}

func TestExitCodeAndSignal(t *testing.T) {
	res := run(t, Spec{Argv: []string{"/bin/sh", "-c", "exit 3"}})
	if res.ExitCode != 3 || res.Signal != "" {
		t.Errorf("exit 3: code %d signal %q", res.ExitCode, res.Signal)
	}
	res = run(t, Spec{Argv: []string{"/bin/sh", "-c", "kill -KILL $$"}})
	if res.ExitCode != -1 || res.Signal != "SIGKILL" {
		t.Errorf("kill -KILL: code %d signal %q", res.ExitCode, res.Signal)
	}
}

func TestStdin(t *testing.T) {
	res := run(t, Spec{Argv: []string{"/bin/cat"}})
	if len(res.Stdout.Data) != 0 || res.ExitCode != 0 {
		t.Errorf("default stdin is not /dev/null: %q", res.Stdout.Data)
	}
	res = run(t, Spec{Argv: []string{"/bin/cat"}, Stdin: strings.NewReader("hello\n")})
	if string(res.Stdout.Data) != "hello\n" {
		t.Errorf("stdin reader: %q", res.Stdout.Data)
	}
	want := []byte("from a file\n")
	path := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(path, want, 0o644)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res = run(t, Spec{Argv: []string{"/bin/cat"}, Stdin: f})
	if !bytes.Equal(res.Stdout.Data, want) {
		t.Errorf("stdin file: %q, want %q", res.Stdout.Data, want)
	}
}

func TestOnStart(t *testing.T) {
	var seen int
	var wasRunning bool
	// cat runs until its stdin closes, which OnStart does after looking:
	// no sleep that a loaded machine could outlast.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := run(t, Spec{Argv: []string{"/bin/cat"}, Stdin: r, OnStart: func(pid int) {
		seen, wasRunning = pid, running(pid, "/bin/cat")
		w.Close()
	}})
	if seen != res.Pid || !wasRunning {
		t.Errorf("OnStart saw pid %d (running %v), result pid %d", seen, wasRunning, res.Pid)
	}
}

func TestOutputBudget(t *testing.T) {
	res := run(t, Spec{Argv: []string{"head", "-c", "10485760", "/dev/zero"}, StdoutLimit: 1 << 20})
	if res.TimedOut || res.ExitCode != 0 || res.Path != "/usr/bin/head" {
		t.Fatalf("result %+v", res)
	}
	if !res.Stdout.Truncated || res.Stdout.Total != 10<<20 || len(res.Stdout.Data) != 1<<20 {
		t.Errorf("stdout: truncated %v, total %d, kept %d", res.Stdout.Truncated, res.Stdout.Total, len(res.Stdout.Data))
	}
	if res.Stderr.Truncated || res.Stderr.Total != 0 {
		t.Errorf("stderr: %+v", res.Stderr)
	}
}

func TestStreamToWriter(t *testing.T) {
	var out, errOut bytes.Buffer
	res := run(t, Spec{Argv: []string{"/bin/sh", "-c", "head -c 5000 /dev/zero; echo oops >&2"},
		Stdout: &out, Stderr: &errOut, StdoutLimit: 1000})
	if out.Len() != 1000 || res.Stdout.Data != nil || !res.Stdout.Truncated || res.Stdout.Total != 5000 {
		t.Errorf("stdout writer got %d bytes, stream %+v", out.Len(), res.Stdout)
	}
	if errOut.String() != "oops\n" || res.Stderr.Truncated {
		t.Errorf("stderr writer got %q", errOut.String())
	}
	res = run(t, Spec{Argv: []string{"head", "-c", "300000", "/dev/zero"}, Stdout: failWriter{}})
	if res.ExitCode != 0 || res.Stdout.WriteErr == nil || res.Stdout.Total != 300000 {
		t.Errorf("failing writer: exit %d, stream %+v", res.ExitCode, res.Stdout)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRusage(t *testing.T) {
	res := run(t, Spec{Argv: []string{"python3", "-c",
		"b=bytearray(50*1024*1024); b[::4096]=b'x'*len(b[::4096])"}})
	if res.ExitCode != 0 || res.PeakRSS < 40<<20 {
		t.Errorf("exit %d, peak RSS %d bytes, want >= 40 MiB; stderr %s", res.ExitCode, res.PeakRSS, res.Stderr.Data)
	}
	res = run(t, Spec{Argv: []string{"python3", "-c", "sum(i*i for i in range(2000000))"}})
	if res.ExitCode != 0 || res.UserCPU <= 0 || res.Wall < res.UserCPU/2 {
		t.Errorf("exit %d, user %v, sys %v, wall %v", res.ExitCode, res.UserCPU, res.SysCPU, res.Wall)
	}
}

func TestOutput(t *testing.T) {
	out, err := Output(t.Context(), []string{"/bin/echo", "v1.2"}, "", nil, 1024, 0)
	if err != nil || string(out) != "v1.2\n" {
		t.Errorf("Output = %q, %v", out, err)
	}
	var r interface {
		Output(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error)
	} = Default
	_, err = r.Output(t.Context(), []string{"/bin/sh", "-c", "echo bad flag >&2; exit 2"}, "/", nil, 1024, 0)
	fe := fault.As(err)
	if !fault.Is(err, fault.ProcessFailed) || fe.Details["stderr"] != "bad flag\n" || fe.Details["exit_code"] != "2" {
		t.Errorf("non-zero exit: %v %v", err, fe.Details)
	}
	_, err = Output(t.Context(), []string{"/bin/sh", "-c", "head -c 5000 /dev/zero >&2; exit 1"}, "/", testEnv, 1024, 0)
	if fe := fault.As(err); len(fe.Details["stderr"]) != 2048 {
		t.Errorf("stderr detail has %d bytes, want 2048", len(fe.Details["stderr"]))
	}
	out, err = Output(t.Context(), []string{"/bin/echo", "0123456789"}, "", nil, 4, 0)
	if !fault.Is(err, fault.ArtifactTooLarge) || string(out) != "0123" {
		t.Errorf("over limit: %q, %v", out, err)
	}
}

// TestPeakRSSNotInheritedFromParent: a small child of a large parent must
// not report the parent's memory (wait4's ru_maxrss does, after a
// CLONE_VM spawn).
func TestPeakRSSNotInheritedFromParent(t *testing.T) {
	ballast := make([]byte, 200<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"/bin/sleep", "0.5"}, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	// The parent's 200 MiB must never be reported as the child's. On a
	// machine so loaded that the sampler never ran while sleep lived, the
	// honest answer is "unknown" (0), which is allowed; a figure is not.
	switch {
	case res.PeakRSSSource == RSSUnknown && res.PeakRSS == 0:
		t.Logf("the sampler never saw sleep run; peak RSS unknown")
	case res.PeakRSSSource != RSSSampled || res.PeakRSS <= 0 || res.PeakRSS > 50<<20:
		t.Fatalf("sleep reported peak RSS %d bytes (%s); the parent holds 200 MiB", res.PeakRSS, res.PeakRSSSource)
	}
	ballast[0]++
}
