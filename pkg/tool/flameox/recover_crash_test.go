package flameox

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/status"
	"github.com/flameox/flameox/pkg/workspace"
)

// crashTrials is how many SIGKILLs TestSIGKILLThenRecover delivers.
const crashTrials = 50

// TestSIGKILLThenRecover kills `flameox import` and `flameox capture run`
// with SIGKILL at random moments (seeded: FLAMEOX_CRASH_SEED replays a
// sequence; every trial's operation and delay is logged), then runs
// `flameox recover` after each, in one workspace that accumulates every
// trial's leftovers. After every recover: it exited 0, every run on disk is
// terminal with a reason when it did not register, every run is listed by
// `runs list`, no process of a workload is alive, and status reports no
// stale run, no unreadable run and no abandoned staging of a dead owner.
func TestSIGKILLThenRecover(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real flameox processes 50 times")
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FLAMEOX_CRASH_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("FLAMEOX_CRASH_SEED: %v", err)
		}
	}
	t.Logf("FLAMEOX_CRASH_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	// nap ends on its own; hold leaves a process of its group behind that
	// only recovery kills (it outlives every deadline below).
	toml := `schema_version = 1
[workloads.nap]
argv = ["/bin/sh", "-c", "sleep 0.2; echo done"]
timeout_seconds = 20
[workloads.hold]
argv = ["/bin/sh", "-c", "sleep 120 & echo started; sleep 120"]
timeout_seconds = 300
`
	dir := captureProject(t, toml, "nap", "hold")
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // compared with /proc/<pid>/cwd
	}
	good := filepath.Join("..", "..", "profile", "testdata", "parca__alloc_objects.pb.gz")
	if abs, err := filepath.Abs(good); err == nil {
		good = abs
	}
	full, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "truncated.pb.gz")
	os.WriteFile(bad, full[:len(full)/2], 0o644)
	ops := []struct {
		name    string
		args    []string
		maxWait time.Duration
	}{
		{"import", []string{"import", good}, 500 * time.Millisecond},
		{"import-bad", []string{"import", bad}, 450 * time.Millisecond},
		{"capture-nap", []string{"capture", "run", "process", "--workload", "nap"}, 1000 * time.Millisecond},
		{"capture-hold", []string{"capture", "run", "process", "--workload", "hold"}, 1000 * time.Millisecond},
	}
	root := filepath.Join(dir, ".diagnostics")
	store := &run.Store{Root: root}
	defer killLeftovers(dir)
	seen := map[string]int{}
	for trial := range crashTrials {
		op := ops[rng.IntN(len(ops))]
		delay := time.Duration(rng.Int64N(int64(op.maxWait)))
		t.Logf("trial %d: %s, SIGKILL after %s", trial, op.name, delay)
		cmd := exec.Command(os.Args[0], op.args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "FLAMEOX_TEST_AS=flameox")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done: // finished before the kill
			seen["finished before the kill"]++
		case <-time.After(delay):
			cmd.Process.Kill()
			<-done
			seen["killed"]++
		}

		r := flameox(t, dir, "recover", "--json")
		if r.exit != 0 {
			t.Fatalf("trial %d (%s after %s): recover exit %d\n%s%s", trial, op.name, delay, r.exit, r.stdout, r.stderr)
		}
		var rec capture.RecoveryResult
		if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
			t.Fatalf("trial %d: recover output: %v\n%s", trial, err, r.stdout)
		}
		if len(rec.Problems)+len(rec.Undecided)+len(rec.Live) != 0 {
			t.Fatalf("trial %d (%s after %s): recover left runs: %s", trial, op.name, delay, r.stdout)
		}
		checkRecovered(t, trial, dir, store)
		seen["closed"] += len(rec.Closed)
		seen["repaired"] += len(rec.Repaired)
		seen["removed"] += len(rec.Removed)
		seen["quarantined"] += len(rec.Quarantined)
		seen["published"] += len(rec.Published)
		seen["staging removed"] += len(rec.StagingRemoved)
		for _, c := range rec.Closed {
			seen["processes killed"] += c.KilledProcesses
		}
	}
	t.Logf("outcomes: %v", seen)
	// The command-line views agree with the checks made in process.
	var list query.RunList
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "runs", "list", "--json", "--limit", "1000")).stdout), &list)
	ids, _ := store.IDs()
	if len(list.Runs) != len(ids) {
		t.Fatalf("runs list shows %d run(s), %d on disk", len(list.Runs), len(ids))
	}
	for _, r := range list.Runs {
		if !run.Execution.Terminal(r.ExecutionStatus) || r.CaptureStatus == run.CapturePending || r.CaptureStatus == run.CaptureRunning || !run.Validation.Terminal(r.ValidationStatus) {
			t.Fatalf("run %s listed open: %+v", r.RunID, r)
		}
		if r.Reason == "" || r.CaptureStatus != run.CaptureRegistered && r.ErrorCode == "" {
			t.Fatalf("run %s listed without its reason: %+v", r.RunID, r)
		}
	}
	t.Logf("%d run(s) after %d kills", len(ids), crashTrials)
}

// checkRecovered asserts what must hold after every recover.
func checkRecovered(t *testing.T, trial int, dir string, store *run.Store) {
	t.Helper()
	ids, err := store.IDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		m, err := store.Get(id)
		if err != nil {
			t.Fatalf("trial %d: run %s unreadable after recover: %v", trial, id, err)
		}
		if m.Open() {
			t.Fatalf("trial %d: run %s open after recover: %s %s %s", trial, id, m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus)
		}
		if m.CaptureStatus != run.CaptureRegistered && (m.Error == nil || m.Reason == "") {
			t.Fatalf("trial %d: run %s is %s without a reason", trial, id, m.CaptureStatus)
		}
	}
	ws, err := workspace.Discover(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := query.ListRuns(ctx, ws, query.ListRunsRequest{Limit: query.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if int(list.Total) != len(ids) {
		t.Fatalf("trial %d: %d run(s) listed, %d on disk", trial, list.Total, len(ids))
	}
	st, err := status.Collect(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.StaleRuns) != 0 || st.Runs.Unpublished != 0 {
		t.Fatalf("trial %d: stale %v, unpublished %d", trial, st.StaleRuns, st.Runs.Unpublished)
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, "unreadable run") {
			t.Fatalf("trial %d: %s", trial, w)
		}
	}
	for _, s := range st.AbandonedStaging {
		// Staging without an owner record waits a minute before either
		// status or recover calls it abandoned; the next recover after
		// that removes it.
		if s.Owner == "owner process gone" {
			t.Fatalf("trial %d: staging of a dead owner left: %+v", trial, s)
		}
	}
	// No process of a workload outlives recovery: every one runs in the
	// project directory, and the hold workload would run for minutes.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := processesIn(dir)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trial %d: processes left running in the project: %v", trial, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesIn lists live processes (not zombies) whose working directory
// is dir or below it.
func processesIn(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); err != nil || i < 0 || strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, strconv.Itoa(pid)+" "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
	}
	return out
}

// killLeftovers ends whatever a failed run of the test left in dir.
func killLeftovers(dir string) {
	for _, p := range processesIn(dir) {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			if proc, err := os.FindProcess(pid); err == nil {
				proc.Kill()
			}
		}
	}
}
