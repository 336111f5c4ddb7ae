package flameox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/status"
)

// captureProject creates a project with flameox.toml and an approved workload set.
func captureProject(t *testing.T, toml string, approve ...string) string {
	t.Helper()
	dir := initProject(t)
	if err := os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range approve {
		mustOK(t, flameox(t, dir, "workload", "approve", name))
	}
	return dir
}

func runOf(t *testing.T, stdout string) *capture.Result {
	t.Helper()
	var res capture.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Run == nil {
		t.Fatalf("not a capture result: %v\n%s", err, stdout)
	}
	return &res
}

const markerTOML = `schema_version = 1
[workloads.mark]
argv = ["/bin/sh", "scripts/mark.sh", "{value}"]
timeout_seconds = 10
[workloads.mark.parameters]
value = ["plain", "; touch pwned $(touch pwned2) | x & y > z"]
`

func TestCaptureLiteralArgvAndRefusals(t *testing.T) {
	dir := captureProject(t, markerTOML, "mark")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "mark.sh"), []byte("printf '%s' \"$1\" > marker\n"), 0o755)
	meta := "; touch pwned $(touch pwned2) | x & y > z"
	params, _ := json.Marshal(map[string]string{"value": meta})
	res := runOf(t, mustOK(t, flameox(t, dir, "capture", "run", "process", "--workload", "mark", "--parameters", string(params), "--json")).stdout)
	got, _ := os.ReadFile(filepath.Join(dir, "marker"))
	if string(got) != meta {
		t.Fatalf("argument arrived as %q", got)
	}
	for _, f := range []string{"pwned", "pwned2", "z"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("a shell interpreted the parameter: %s exists", f)
		}
	}
	if res.Run.ExecutionStatus != run.ExecSucceeded || res.CorpusCommitID == "" {
		t.Fatalf("run %+v", res.Run)
	}
	// Refused before anything runs: an undeclared value, an unknown
	// parameter, a NUL byte.
	os.Remove(filepath.Join(dir, "marker"))
	for _, p := range []string{`{"value":"other"}`, `{"nope":"x"}`, `{"value":"a\u0000b"}`} {
		r := flameox(t, dir, "capture", "run", "process", "--workload", "mark", "--parameters", p)
		if r.exit != 2 {
			t.Fatalf("parameters %s: exit %d %s", p, r.exit, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Fatal("a refused capture ran the workload")
	}
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	if st.Runs.Total != 1 {
		t.Fatalf("refusals created runs: %d", st.Runs.Total)
	}
	// A {missing} token is refused when the file is read.
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(strings.Replace(markerTOML, "{value}", "{missing}", 1)), 0o644)
	if r := flameox(t, dir, "capture", "plan", "process", "--workload", "mark"); r.exit != 2 || !strings.Contains(r.stderr, "missing") {
		t.Fatalf("{missing}: exit %d %s", r.exit, r.stderr)
	}
}

func TestEditAfterApprovalIsRefused(t *testing.T) {
	toml := "schema_version = 1\n[workloads.w]\nargv = [\"/bin/true\"]\ntimeout_seconds = 5\n"
	dir := captureProject(t, toml, "w")
	mustOK(t, flameox(t, dir, "capture", "run", "process", "--workload", "w"))
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(strings.Replace(toml, "timeout_seconds = 5", "timeout_seconds = 7", 1)), 0o644)
	r := flameox(t, dir, "capture", "run", "process", "--workload", "w")
	if r.exit != 9 || !strings.Contains(r.stderr, "EXECUTION_REFUSED") || !strings.Contains(r.stderr, "timeout_seconds") {
		t.Fatalf("edited workload: exit %d\n%s", r.exit, r.stderr)
	}
	show := mustOK(t, flameox(t, dir, "workload", "show", "w")).stdout
	if !strings.Contains(show, "changed") {
		t.Fatalf("workload show does not say what changed:\n%s", show)
	}
}

const escapeTOML = `schema_version = 1
[workloads.escape]
argv = ["/bin/sh", "escape.sh"]
timeout_seconds = 1
`

// TestTimeoutKillsEscapedTree: a workload whose grandchild ignores SIGTERM
// and leaves the process group is gone within grace + 1 s after the timeout;
// the run is timed_out and its output is kept.
func TestTimeoutKillsEscapedTree(t *testing.T) {
	dir := captureProject(t, escapeTOML, "escape")
	script := `trap '' TERM
echo started
setsid /bin/sh -c 'trap "" TERM; echo $$ > grandchild.pid; exec sleep 1000' &
sleep 1000
`
	os.WriteFile(filepath.Join(dir, "escape.sh"), []byte(script), 0o755)
	start := time.Now()
	r := flameox(t, dir, "capture", "run", "process", "--workload", "escape", "--json")
	elapsed := time.Since(start)
	if r.exit != 8 {
		t.Fatalf("exit %d, want 8\n%s", r.exit, r.stderr)
	}
	res := runOf(t, r.stdout)
	if res.Run.ExecutionStatus != run.ExecTimedOut || res.Run.Process == nil || !res.Run.Process.TimedOut || !res.Run.Process.CleanupComplete {
		t.Fatalf("run %+v process %+v", res.Run, res.Run.Process)
	}
	if elapsed < 1*time.Second { // the timeout itself; no upper bound on a loaded machine
		t.Fatalf("ended after %s, before its 1 s timeout", elapsed)
	}
	b, err := os.ReadFile(filepath.Join(dir, "grandchild.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 || processAlive(pid) {
		t.Fatalf("grandchild %d survived", pid)
	}
	if len(res.Run.Artifacts) != 1 || res.Run.Artifacts[0].Role != "stdout" {
		t.Fatalf("stdout not kept: %+v", res.Run.Artifacts)
	}
}

func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

func TestSecretsNeverReachChildOrRecords(t *testing.T) {
	toml := "schema_version = 1\n[workloads.env]\nargv = [\"/usr/bin/env\"]\ntimeout_seconds = 5\n"
	dir := captureProject(t, toml, "env")
	r := tool(t, "flameox", dir, []string{"API_TOKEN=secret-value-9876", "LD_PRELOAD=/nonexistent.so", "PYTHONPATH=/evil"},
		"capture", "run", "process", "--workload", "env", "--json")
	mustOK(t, r)
	res := runOf(t, r.stdout)
	if strings.Contains(r.stdout+r.stderr, "secret-value-9876") {
		t.Fatal("the secret appears in the output")
	}
	// The child's environment (its stdout) lacks them.
	var stdoutPath string
	for _, a := range res.Run.Artifacts {
		if a.Role == "stdout" {
			stdoutPath = filepath.Join(dir, ".diagnostics", a.PayloadPath)
		}
	}
	out, _ := os.ReadFile(stdoutPath)
	for _, bad := range []string{"API_TOKEN", "LD_PRELOAD", "PYTHONPATH", "secret-value"} {
		if strings.Contains(string(out), bad) {
			t.Fatalf("child saw %s:\n%s", bad, out)
		}
	}
	if !strings.Contains(string(out), "PATH=") {
		t.Fatal("PATH should pass the allowlist")
	}
	filepath.Walk(filepath.Join(dir, ".diagnostics"), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("secret-value-9876")) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
	dropped := strings.Join(res.Run.Command.EnvDropped, ",")
	if !strings.Contains(dropped, "API_TOKEN") || !strings.Contains(dropped, "LD_PRELOAD") {
		t.Fatalf("dropped names not recorded: %s", dropped)
	}
}

func TestConcurrentCaptures(t *testing.T) {
	toml := "schema_version = 1\n[workloads.nap]\nargv = [\"/bin/sleep\", \"0.3\"]\ntimeout_seconds = 5\n"
	dir := captureProject(t, toml, "nap")
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = flameox(t, dir, "capture", "run", "process", "--workload", "nap", "--json")
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		mustOK(t, r)
	}
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	if st.Runs.Total != 2 || st.Runs.ByExecution["succeeded"] != 2 || st.Runs.Unpublished != 0 {
		t.Fatalf("runs %+v", st.Runs)
	}
}

// TestInterruptEveryPhase sends SIGINT to `flameox capture run` in each
// phase and checks the run ends terminal, staging is cleaned, the locks are
// free and no process is left.
func TestInterruptEveryPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fault-injection binary")
	}
	bin := filepath.Join(t.TempDir(), "flameox")
	if out, err := exec.Command("go", "build", "-tags", "faultinject", "-o", bin, "github.com/flameox/flameox/cmd/flameox").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	toml := `schema_version = 1
[workloads.slow]
argv = ["/bin/sh", "-c", "echo $$ > child.pid; exec sleep 30"]
timeout_seconds = 60
[workloads.slow.oracle]
strength = "execution_check"
argv = ["/bin/sh", "-c", "echo $$ > oracle.pid; exec sleep 30"]
[workloads.quick]
argv = ["/bin/echo", "hi"]
timeout_seconds = 60
[workloads.checked]
argv = ["/bin/echo", "hi"]
timeout_seconds = 60
[workloads.checked.oracle]
strength = "execution_check"
argv = ["/bin/sh", "-c", "echo $$ > oracle.pid; exec sleep 30"]
`
	cases := []struct {
		phase, workload, point, waitFile string
	}{
		{"spawning", "quick", "capture.spawning", ""},
		{"running", "slow", "", "child.pid"},
		{"validation", "checked", "", "oracle.pid"},
		{"registration", "quick", "capture.registering", ""},
		{"publication", "quick", "capture.publishing", ""},
	}
	for _, tc := range cases {
		t.Run(tc.phase, func(t *testing.T) {
			dir := captureProject(t, toml, "slow", "quick", "checked")
			ready := filepath.Join(t.TempDir(), "ready")
			cmd := exec.Command(bin, "capture", "run", "process", "--workload", tc.workload, "--json")
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.Env = append(os.Environ(), "FLAMEOX_FAULTPOINT_READY="+ready)
			if tc.point != "" {
				cmd.Env = append(cmd.Env, "FLAMEOX_FAULTPOINT="+tc.point+":sleep")
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wait := ready
			if tc.waitFile != "" {
				wait = filepath.Join(dir, tc.waitFile)
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				if _, err := os.Stat(wait); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("never reached %s", tc.phase)
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatal("flameox did not finish after SIGINT")
			}
			// The run is terminal and published.
			var st status.Status
			json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
			if st.Runs.Total != 1 || st.Runs.ByCapture["pending"]+st.Runs.ByCapture["running"] != 0 || st.Runs.Unpublished != 0 {
				t.Fatalf("after SIGINT in %s: %+v\n%s", tc.phase, st.Runs, out.String())
			}
			for _, f := range []string{"child.pid", "oracle.pid"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
					pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
					if processAlive(pid) {
						t.Fatalf("%s %d survived", f, pid)
					}
				}
			}
			if st.AbandonedStaging == nil || len(st.AbandonedStaging) != 0 {
				t.Fatalf("staging left behind: %v", st.AbandonedStaging)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, ".diagnostics", "staging"))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "capture-") || strings.HasPrefix(e.Name(), "publish-") {
					t.Fatalf("staging left behind: %s", e.Name())
				}
			}
			rel, err := lock.NewSet(filepath.Join(dir, ".diagnostics"), time.Second).Lock(t.Context(), lock.Write, false)
			if err != nil {
				t.Fatalf("write lock still held: %v", err)
			}
			rel()
		})
	}
}

// TestKillThenRecover: SIGKILL of fox-capture mid-run, then recover closes
// the run as failed; a live run is never closed.
func TestKillThenRecover(t *testing.T) {
	toml := "schema_version = 1\n[workloads.nap]\nargv = [\"/bin/sleep\", \"30\"]\ntimeout_seconds = 60\n"
	dir := captureProject(t, toml, "nap")
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "run", "process", "--workload", "nap")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "FLAMEOX_TEST_AS=fox-capture")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	waitRunning := func(n int) {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			ids, _ := (&run.Store{Root: filepath.Join(dir, ".diagnostics")}).IDs()
			running := 0
			for _, id := range ids {
				if m, err := (&run.Store{Root: filepath.Join(dir, ".diagnostics")}).Get(id); err == nil && m.ExecutionStatus == run.ExecRunning {
					running++
				}
			}
			if running >= n {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("capture never reached running")
	}
	victim := start()
	waitRunning(1)
	victim.Process.Kill()
	victim.Wait()
	live := start()
	defer func() { live.Process.Signal(syscall.SIGINT); live.Wait() }()
	waitRunning(2)
	var rec capture.RecoveryResult
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "recover", "--json")).stdout), &rec)
	if len(rec.Closed) != 1 || len(rec.Live) != 1 {
		t.Fatalf("recover: %+v", rec)
	}
	m, err := (&run.Store{Root: filepath.Join(dir, ".diagnostics")}).Get(rec.Closed[0].RunID)
	if err != nil || m.ExecutionStatus != run.ExecFailed || m.CaptureStatus != run.CaptureFailed || m.Error == nil || !strings.Contains(m.Error.Message, "gone") {
		t.Fatalf("closed run %+v", m)
	}
	if rec.Live[0] == rec.Closed[0].RunID {
		t.Fatal("closed a live run")
	}
}

func TestContainedCapture(t *testing.T) {
	testenv.LookPath(t, "bwrap")
	toml := "schema_version = 1\n[workloads.peek]\nargv = [\"/bin/sh\", \"-c\", \"find .diagnostics -type f | wc -l; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '\"]\ntimeout_seconds = 10\n"
	dir := captureProject(t, toml, "peek")
	cfg := filepath.Join(dir, ".diagnostics", "config.toml")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.Replace(b, []byte(`containment = "required_for_mcp"`), []byte(`containment = "required"`), 1), 0o600)
	plan := mustOK(t, flameox(t, dir, "capture", "plan", "process", "--workload", "peek")).stdout
	if !strings.Contains(plan, "containment  contained (network unshared)") {
		t.Fatalf("plan:\n%s", plan)
	}
	res := runOf(t, mustOK(t, flameox(t, dir, "capture", "run", "process", "--workload", "peek", "--json")).stdout)
	if res.Run.Containment == nil || res.Run.Containment.State != "contained" {
		t.Fatalf("containment %+v", res.Run.Containment)
	}
	out, _ := os.ReadFile(filepath.Join(dir, ".diagnostics", res.Run.Artifacts[0].PayloadPath))
	if string(out) != "0\nlo\n" {
		t.Fatalf("the contained child saw:\n%s", out)
	}
}
