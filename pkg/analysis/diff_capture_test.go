package analysis

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile/pproftest"
)

// burnSource is a small Go program whose test spends its CPU in two
// functions; BURN_MODE=fast makes one of them cheaper, as a change to the
// code under test would.
const burnSource = `package burn

import (
	"os"
	"testing"
	"time"
)

var sink uint64

//go:noinline
func mix(n int) uint64 {
	h := uint64(1)
	for i := 0; i < n; i++ {
		h = h*31 + uint64(i)
	}
	return h
}

//go:noinline
func churn(n int) uint64 {
	h := uint64(7)
	for i := 0; i < n; i++ {
		h ^= h<<13 ^ h>>7 ^ uint64(i)
	}
	return h
}

func TestBurn(t *testing.T) {
	n := 200000
	if os.Getenv("BURN_MODE") == "fast" {
		n = 20000
	}
	for deadline := time.Now().Add(400 * time.Millisecond); time.Now().Before(deadline); {
		sink += mix(100000) + churn(n)
	}
}
`

// TestDiffOfTwoCapturesMatchesGoToolPprof: two real CPU profiles of one
// test binary (go test -c), captured one after the other, the second
// with a cheaper churn, agree with go tool pprof -top -diff_base row for
// row, under both sample types.
func TestDiffOfTwoCapturesMatchesGoToolPprof(t *testing.T) {
	goBin := testenv.Go(t)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module burn\n\ngo 1.21\n")
	write("burn_test.go", burnSource)
	run := func(env []string, argv ...string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), append([]string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}, env...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	run(nil, goBin, "test", "-c", "-o", "burn.test", ".")
	base, cand := filepath.Join(dir, "base.pprof"), filepath.Join(dir, "cand.pprof")
	bin := filepath.Join(dir, "burn.test")
	run(nil, bin, "-test.run=TestBurn", "-test.cpuprofile="+base)
	run([]string{"BURN_MODE=fast"}, bin, "-test.run=TestBurn", "-test.cpuprofile="+cand)

	ws, runs := importProfiles(t, base, cand)
	_, hot := allHotspots(t, ws, HotspotsRequest{Input: runs[0]})
	for _, st := range hot.SampleTypes {
		t.Run(st.Type, func(t *testing.T) {
			got, res := allDiff(t, ws, DiffRequest{Base: runs[0], Candidate: runs[1], SampleType: st.Type})
			compareDiffRows(t, got, pproftest.TopLabeled(t, cand, st.Type, st.Unit, "-diff_base="+base))
			if res.Base.Source.ArtifactID == res.Candidate.Source.ArtifactID || res.Base.SampleType.Total == 0 {
				t.Fatalf("two captures: %+v %+v", res.Base, res.Candidate)
			}
			churn := false
			for _, r := range got {
				if r.Function == "burn.churn" {
					churn = true
					if r.SelfDelta >= 0 || r.Presence != "both" {
						t.Fatalf("the cheaper churn did not lose self value: %+v", r)
					}
				}
			}
			if !churn {
				t.Fatal("no row for burn.churn")
			}
		})
	}
}
