package foxanalyze

import (
	"encoding/json"
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
