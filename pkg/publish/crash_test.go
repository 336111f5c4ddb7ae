package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/status"
	"github.com/flameox/flameox/pkg/workspace"
)

// newWorkspace creates a workspace with n imported (unpublished) runs and
// returns their run records as JSON lines.
func newWorkspace(t testing.TB, n int) (*workspace.Workspace, []byte) {
	t.Helper()
	res, err := workspace.Init(context.Background(), t.TempDir(), time.Now(), FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	var lines bytes.Buffer
	for i := 0; i < n; i++ {
		p := filepath.Join(t.TempDir(), "a.txt")
		os.WriteFile(p, []byte("evidence "+strconv.Itoa(i)), 0o644)
		imp, err := svc.Import(context.Background(), capture.ImportRequest{Path: p, Kind: "benchmark_samples"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(run.NewRecord(ws.Root, imp.Run))
		lines.Write(append(b, '\n'))
	}
	return ws, lines.Bytes()
}

func buildFaulty(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fox-publish")
	out, err := exec.Command("go", "build", "-tags", "faultinject", "-o", bin, "github.com/flameox/flameox/cmd/fox-publish").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestCrashAtEveryStep kills a real fox-publish at every named step of the
// commit protocol, repeatedly, and checks that HEAD never names a partial
// generation, the previous snapshot is unchanged, orphans are reported, and
// publishing again succeeds (acceptance 3).
func TestCrashAtEveryStep(t *testing.T) {
	iterations := 20
	if testing.Short() {
		iterations = 2
	}
	if v, err := strconv.Atoi(os.Getenv("FLAMEOX_CRASH_ITERATIONS")); err == nil && v > 0 {
		iterations = v
	}
	bin := buildFaulty(t)
	for _, step := range Steps() {
		t.Run(step, func(t *testing.T) {
			ws, records := newWorkspace(t, 2)
			for i := 0; i < iterations; i++ {
				before, err := corpus.Pin(ws.Root)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin)
				cmd.Dir = ws.ProjectRoot
				cmd.Stdin = bytes.NewReader(records)
				cmd.Env = append(os.Environ(), "FLAMEOX_FAULTPOINT="+step)
				err = cmd.Run()
				if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("iteration %d: publisher not killed at %s: %v", i, step, err)
				}
				after, err := corpus.Pin(ws.Root)
				if err != nil {
					t.Fatalf("iteration %d: HEAD unreadable after a crash at %s: %v", i, step, err)
				}
				if step != StepHeadReplaced {
					if after.Commit.CommitID != before.Commit.CommitID {
						t.Fatalf("HEAD moved although the crash came before %s", StepHeadReplaced)
					}
				} else {
					if after.Commit.CommitID == before.Commit.CommitID || after.Rows["runs"] != before.Rows["runs"]+2 {
						t.Fatalf("a crash after HEAD moved must leave the whole generation visible: %v → %v", before.Rows, after.Rows)
					}
				}
				// The previous snapshot answers exactly as before.
				again, err := corpus.PinCommit(ws.Root, before.Commit.CommitID)
				if err != nil || !reflect.DeepEqual(again.Files, before.Files) || !reflect.DeepEqual(again.Rows, before.Rows) {
					t.Fatalf("previous snapshot changed: %v", err)
				}
			}
			st, err := status.Collect(context.Background(), ws)
			if err != nil {
				t.Fatal(err)
			}
			switch step {
			case StepStaged, StepManifestStaged, StepLocked:
				if len(st.AbandonedStaging) == 0 {
					t.Fatalf("abandoned staging not reported after crashes at %s", step)
				}
			case StepFilesMoved, StepManifestMoved, StepCommitWritten:
				if len(st.Head.Orphans) == 0 {
					t.Fatalf("orphans not reported after crashes at %s", step)
				}
			}
			// Publishing again succeeds.
			prev := st.Head.CommitID
			var refs []RunRef
			for _, line := range bytes.Split(bytes.TrimSpace(records), []byte("\n")) {
				var rec run.Record
				json.Unmarshal(line, &rec)
				refs = append(refs, RunRef{RunID: rec.RunID, Revision: rec.Revision})
			}
			res, err := (&Publisher{WS: ws}).PublishRuns(context.Background(), refs)
			if err != nil {
				t.Fatalf("publishing after crashes: %v", err)
			}
			if res.ParentID != prev {
				t.Fatalf("new commit's parent %s, want %s", res.ParentID, prev)
			}
			snap, err := corpus.Pin(ws.Root)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range corpus.Orphans(snap) {
				if filepath.Base(o) == "generation="+res.GenerationID {
					t.Fatalf("the new generation is reported as an orphan")
				}
			}
		})
	}
}
