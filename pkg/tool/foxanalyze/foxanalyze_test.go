package foxanalyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/capture/capturetest"
)

// TestFocusAndFrameRegexp: fox-analyze takes --focus/--ignore for
// hotspots and a regexp for the frame tools, as flameox does.
func TestFocusAndFrameRegexp(t *testing.T) {
	ws, ids := capturetest.Published(t, "", "../../profile/testdata/google-pprof__sample.cpu.pb.gz")
	run := foxAnalyze(ws.ProjectRoot)
	out, code := run("hotspots", ids[0], "--focus", "mapassign", "--ignore", "growWork")
	var rec struct {
		Result analysis.HotspotsResult `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Result.Parameters.Focus != "mapassign" || len(rec.Result.Rows) == 0 {
		t.Fatalf("hotspots --focus: exit %d\n%s", code, out)
	}
	out, code = run("callers", ids[0], "runtime\\.mapiter")
	if code != 0 || !strings.Contains(out, `"function":"runtime.mapiternext"`) {
		t.Fatalf("callers by regexp: exit %d\n%s", code, out)
	}
	if _, code = run("callers", ids[0], "busyLoop", "--focus", "x"); code != 2 {
		t.Fatalf("--focus on callers: exit %d", code)
	}
}

// TestMemoryRecord: fox-analyze memory writes the memory recipe as an
// analysis_result record, and with --record an analysis record whose
// inputs are the capture it read.
func TestMemoryRecord(t *testing.T) {
	ws, ids := capturetest.Published(t, "", "../../adapter/massif/testdata/massif-visualizer__massif.out.kate2")
	run := foxAnalyze(ws.ProjectRoot)
	out, code := run("memory", ids[0], "--limit", "2")
	var rec struct {
		Record string `json:"record"`
		Result struct {
			Operation string `json:"operation"`
			Base      struct {
				Figures []struct {
					Name string `json:"name"`
				} `json:"figures"`
				Peak struct {
					Stacks []any `json:"stacks"`
				} `json:"top_at_peak"`
			} `json:"base"`
		} `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Record != "analysis_result" || rec.Result.Operation != "memory" ||
		len(rec.Result.Base.Figures) == 0 || len(rec.Result.Base.Peak.Stacks) != 2 {
		t.Fatalf("memory: exit %d\n%s", code, out)
	}
	out, code = run("memory", ids[0], "--record")
	var an struct {
		Record      string   `json:"record"`
		Operation   string   `json:"operation"`
		InputRunIDs []string `json:"input_run_ids"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &an) != nil || an.Record != "analysis" || an.Operation != "memory" || len(an.InputRunIDs) != 1 || an.InputRunIDs[0] != ids[0] {
		t.Fatalf("memory --record: exit %d\n%s", code, out)
	}
	if _, code = run("memory", ids[0], "--threshold", "0.05"); code != 2 {
		t.Fatalf("--threshold without --against: exit %d", code)
	}
}

// TestExecutionAndFailures: fox-analyze execution and failures write
// their recipes' results as analysis_result records, and with --record
// analysis records.
func TestExecutionAndFailures(t *testing.T) {
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.jsonl")
	if err := os.WriteFile(obs, []byte(`{"flameox_observations": 1}`+"\n"+`{"t": "observe", "name": "policy", "values": {"on": true}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, ids := capturetest.Published(t, "", obs)
	run := foxAnalyze(ws.ProjectRoot)
	for _, tc := range []struct {
		args []string
		op   string
	}{
		{[]string{"execution", ids[0]}, "execution"},
		{[]string{"failures", "--limit", "3"}, "failures"},
	} {
		out, code := run(tc.args...)
		var rec struct {
			Record string `json:"record"`
			Result struct {
				Operation string `json:"operation"`
			} `json:"result"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Record != "analysis_result" || rec.Result.Operation != tc.op {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, out)
		}
		out, code = run(append(tc.args, "--record")...)
		var an struct {
			Record    string `json:"record"`
			Operation string `json:"operation"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &an) != nil || an.Record != "analysis" || an.Operation != tc.op {
			t.Fatalf("%v --record: exit %d\n%s", tc.args, code, out)
		}
	}
	if _, code := run("execution"); code != 2 {
		t.Fatalf("execution without a run: exit %d", code)
	}
}
