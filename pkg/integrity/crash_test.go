package integrity_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/integrity"
	"github.com/flameox/flameox/pkg/publish"
)

// TestCrashDuringRepair kills a real fox-gc (built with -tags faultinject)
// at every named point of `repair --apply` and at the commit steps of its
// republication, 20 times each (2 with -short; FLAMEOX_CRASH_ITERATIONS
// overrides), each time on a freshly damaged workspace. After every crash
// HEAD reads, the damaged artifact is in exactly one place (the store or
// quarantine) and the intact one is untouched; planning and applying again
// finishes the repair, and full validation passes.
func TestCrashDuringRepair(t *testing.T) {
	iterations := 20
	if testing.Short() {
		iterations = 2
	}
	if v, err := strconv.Atoi(os.Getenv("FLAMEOX_CRASH_ITERATIONS")); err == nil && v > 0 {
		iterations = v
	}
	bin := filepath.Join(t.TempDir(), "fox-gc")
	if out, err := exec.Command("go", "build", "-tags", "faultinject", "-o", bin, "github.com/flameox/flameox/cmd/fox-gc").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	points := append(integrity.Steps(), publish.StepFilesMoved, publish.StepHeadReplaced)
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			for i := range iterations {
				ctx := context.Background()
				ws, _, b, idA, _ := damaged(t)
				idB, _ := payloadOf(t, ws, b)
				plan, err := integrity.Plan(ctx, ws)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin, "repair", "--apply", plan.PlanDigest)
				cmd.Dir = ws.ProjectRoot
				cmd.Env = append(os.Environ(), "FLAMEOX_FAULTPOINT="+point)
				out, err := cmd.CombinedOutput()
				if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("iteration %d: fox-gc not killed at %s: %v\n%s", i, point, err, out)
				}
				if _, err := corpus.Pin(ws.Root); err != nil {
					t.Fatalf("iteration %d: HEAD unreadable after a crash at %s: %v", i, point, err)
				}
				rel := artifact.ObjectRel(idA)
				places, _ := filepath.Glob(filepath.Join(ws.Root, "quarantine", "*", "object", filepath.FromSlash(rel)))
				if _, err := os.Stat(filepath.Join(ws.Root, filepath.FromSlash(rel))); err == nil {
					places = append(places, rel)
				}
				if len(places) != 1 {
					t.Fatalf("iteration %d: after a crash at %s the damaged object is in %d places: %v", i, point, len(places), places)
				}
				if err := (&artifact.Store{Root: ws.Root}).Verify(idB); err != nil {
					t.Fatalf("iteration %d: the intact artifact changed: %v", i, err)
				}
				again, err := integrity.Plan(ctx, ws)
				if err != nil {
					t.Fatal(err)
				}
				if !again.Intact {
					if _, err := integrity.Apply(ctx, ws, again.PlanDigest, publisher(ws)); err != nil {
						t.Fatalf("iteration %d: repairing after a crash at %s: %v", i, point, err)
					}
				}
				res := validate(t, ws, integrity.Full)
				if !res.Valid || find(res, integrity.CodeQuarantineInterrupted) != nil || find(res, integrity.CodeArtifactQuarantined) == nil {
					t.Fatalf("iteration %d: after a crash at %s and a second repair: %v", i, point, codes(res))
				}
			}
		})
	}
}
