package flameox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/status"
)

// TestExperimentInterrupt sends SIGINT to `flameox experiment run` while
// its first trial runs: the trial's process tree is killed, that trial
// ends cancelled and every later one unattempted, everything is
// published, the journal closes every trial it registered, and flameox
// exits 8.
func TestExperimentInterrupt(t *testing.T) {
	var out bytes.Buffer
	dir, cmd, pidFile := startSlowExperiment(t, &out, "--json")
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("flameox did not finish after SIGINT")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 8 {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	var res struct {
		Status   string         `json:"status"`
		Outcomes map[string]int `json:"outcomes"`
		Trials   []struct {
			Outcome string `json:"outcome"`
			RunID   string `json:"run_id"`
		} `json:"trials"`
		Experiment struct {
			ExperimentID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	// The result, then the error envelope that explains exit 8.
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var envelope struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := dec.Decode(&envelope); err != nil || envelope.Error.Code != "PROCESS_CANCELLED" {
		t.Fatalf("no PROCESS_CANCELLED after the result (%v): %+v", err, envelope)
	}
	if res.Status != "cancelled" || len(res.Trials) != 4 || res.Outcomes["cancelled"] != 1 || res.Outcomes["unattempted"] != 3 ||
		res.Trials[0].Outcome != "cancelled" || res.Trials[0].RunID == "" {
		t.Fatalf("after SIGINT: %s", out.String())
	}
	b, _ := os.ReadFile(pidFile)
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); processAlive(pid) {
		t.Fatalf("the trial's process %d survived", pid)
	}
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	if st.Runs.Total != 1 || st.Runs.Unpublished != 0 || st.Runs.ByExecution["cancelled"] != 1 {
		t.Fatalf("runs after SIGINT: %+v", st.Runs)
	}
	// The journal registered one trial before it ran and closed all four.
	f, err := os.Open(filepath.Join(dir, ".diagnostics", "experiments", res.Experiment.ExperimentID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pending, closed int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ Record, Outcome string }
		json.Unmarshal(sc.Bytes(), &r)
		switch {
		case r.Record == "trial" && r.Outcome == "pending":
			pending++
		case r.Record == "trial" && r.Outcome != "planned":
			closed++
		}
	}
	if pending != 1 || closed != 4 {
		t.Fatalf("journal: %d pending registrations, %d terminal trials; want 1 and 4", pending, closed)
	}
	// Nothing is left for recovery: the experiment is closed.
	rec := mustOK(t, flameox(t, dir, "recover", "--json"))
	if strings.Contains(rec.stdout, res.Experiment.ExperimentID) {
		t.Fatalf("recover found the interrupted experiment open: %s", rec.stdout)
	}
}

// TestExperimentCrashRecovered kills `flameox experiment run` (SIGKILL)
// while its first trial runs: `flameox recover` closes the run, kills
// what is left of its workload, and closes the experiment: the running
// trial failed with its run, the others unattempted, all published with
// a run set for the variant that ran; a second recover finds nothing.
func TestExperimentCrashRecovered(t *testing.T) {
	dir, cmd, pidFile := startSlowExperiment(t, nil)
	cmd.Process.Kill()
	cmd.Wait()
	out := mustOK(t, flameox(t, dir, "recover", "--json")).stdout
	var res struct {
		Closed []struct {
			RunID string `json:"run_id"`
		} `json:"closed"`
		Experiments []struct {
			ExperimentID string `json:"experiment_id"`
			Trials       []struct {
				Outcome string `json:"outcome"`
				RunID   string `json:"run_id"`
			} `json:"trials"`
		} `json:"experiments"`
		CorpusCommitID string `json:"corpus_commit_id"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Closed) != 1 || len(res.Experiments) != 1 || len(res.Experiments[0].Trials) != 4 || res.CorpusCommitID == "" {
		t.Fatalf("recover: %s", out)
	}
	trials := res.Experiments[0].Trials
	if trials[0].Outcome != "failed" || trials[0].RunID != res.Closed[0].RunID {
		t.Fatalf("the running trial: %+v, want failed with run %s", trials[0], res.Closed[0].RunID)
	}
	for _, tr := range trials[1:] {
		if tr.Outcome != "unattempted" || tr.RunID != "" {
			t.Fatalf("a later trial: %+v", tr)
		}
	}
	b, _ := os.ReadFile(pidFile)
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); processAlive(pid) {
		t.Fatalf("the trial's process %d survived recovery", pid)
	}
	sets := mustOK(t, flameox(t, dir, "run-sets", "list", "--json")).stdout
	if !strings.Contains(sets, res.Experiments[0].ExperimentID) || !strings.Contains(sets, `"member_count": 1`) {
		t.Fatalf("run sets after recovery: %s", sets)
	}
	if again := mustOK(t, flameox(t, dir, "recover", "--json")).stdout; strings.Contains(again, res.Experiments[0].ExperimentID) {
		t.Fatalf("a second recover found the experiment again: %s", again)
	}
}

// startSlowExperiment starts `flameox experiment run` (stdout to out) on
// an experiment whose first trial sleeps, and returns once that trial's
// workload runs: the project, the command and the file holding the
// workload's pid.
func startSlowExperiment(t *testing.T, out *bytes.Buffer, args ...string) (string, *exec.Cmd, string) {
	t.Helper()
	toml := `schema_version = 1
[workloads.w]
argv = ["/bin/sh", "-c", "if [ $0 = slow ]; then echo $$ > child.pid; exec sleep 30; fi", "{impl}"]
timeout_seconds = 60
[workloads.w.parameters]
impl = ["slow", "quick"]
[experiments.e]
workload = "w"
variants = ["slow", "quick"]
design = "fixed_order"
blocks = 2
`
	dir := captureProject(t, toml, "w")
	cmd := exec.Command(os.Args[0], append([]string{"experiment", "run", "e", "--adapter", "process"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FLAMEOX_TEST_AS=flameox")
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The trial has started once its run records the workload as its
	// child: the workload writes child.pid as it starts, and the broker
	// records it just after (OnStart). A kill between the two leaves
	// recovery nothing to find; that window is not what these tests test,
	// and a loaded machine widens it.
	pidFile := filepath.Join(dir, "child.pid")
	recorded := func() bool {
		b, err := os.ReadFile(pidFile)
		pid := strings.TrimSpace(string(b))
		if err != nil || pid == "" {
			return false
		}
		children, _ := filepath.Glob(filepath.Join(dir, ".diagnostics", "runs", "*", "child.json"))
		for _, c := range children {
			if b, err := os.ReadFile(c); err == nil && strings.Contains(string(b), `"pid":`+pid+`,`) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if recorded() {
			return dir, cmd, pidFile
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the first trial never started")
		}
	}
}
