package hyperfine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// TestLiveHyperfine runs the real hyperfine on two tiny commands, one of
// them parametrised and one failing on purpose, and imports its
// --export-json file: as many rows as the file's own runs, exit codes and
// CPU figures, with the parameter on the rows and the failures' outcome.
func TestLiveHyperfine(t *testing.T) {
	hf := testenv.LookPath(t, "hyperfine")
	out := filepath.Join(t.TempDir(), "results.json")
	args := []string{"--runs", "5", "--warmup", "1", "--ignore-failure", "--export-json", out, "--style", "none",
		"-L", "n", "1,2", "seq {n}", "false"}
	if help, _ := exec.Command(hf, "--help").Output(); strings.Contains(string(help), "--shell") && strings.Contains(string(help), "none") {
		args = append([]string{"-N"}, args...) // hyperfine 1.13+: no shell, no spawning time to subtract
	}
	cmd := exec.Command(hf, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hyperfine %v: %v\n%s", args, err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	in := inputOf(t, out)
	if !NewExtractor().Accepts(in) {
		t.Fatalf("the real hyperfine's file is not accepted:\n%s", raw)
	}
	sink := newSink(t)
	x, err := NewExtractor().Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	want := counts(t, raw)
	got := map[string]int{}
	outcomes := map[string]int{}
	params := map[string]bool{}
	for _, r := range sink.Rows(t, "measurements") {
		got[r["name"].(string)]++
		if r["name"] == nameWall {
			outcomes[r["subject"].(string)+" "+r["outcome"].(string)]++
		}
		params[r["dimensions"].(map[string]string)["parameter.n"]] = true
	}
	if len(got) != len(want) {
		t.Fatalf("rows per measurement %v, the file's own %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("rows per measurement %v, the file's own %v", got, want)
		}
	}
	// 5 runs of each of "seq 1", "seq 2", "false (n = 1)", "false (n = 2)".
	if got[nameWall] != 20 || outcomes["seq 1 succeeded"] != 5 || outcomes["seq 2 succeeded"] != 5 ||
		outcomes["false (n = 1) failed"] != 5 || outcomes["false (n = 2) failed"] != 5 || !params["1"] || !params["2"] {
		t.Fatalf("wall times %d, outcomes %v, parameters %v", got[nameWall], outcomes, params)
	}
	if lim := strings.Join(x.Limitations, "\n"); strings.Contains(lim, "disagrees") {
		t.Fatalf("the real hyperfine's summaries disagree with its times: %s", lim)
	}
}
