package flameox

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/profile/pproftest"
	"github.com/google/pprof/profile"
)

// hostileName is a function name an artifact may carry: long enough that
// padding every row of a table to it would multiply it, and holding a
// right-to-left override (U+202E) and an 8-bit CSI (U+009B) that would
// reorder or restyle a terminal.
func hostileName(size int) string {
	head := "main.\u202eevil\u009b2J"
	return head + strings.Repeat("x", size-len(head))
}

// writeHostileProfile writes a CPU profile in which the hostile function
// calls a leaf and is called by main, next to ordinary functions, so every
// table (hotspots, callers, callees, examples) has several rows.
func writeHostileProfile(t *testing.T, path, name string) {
	t.Helper()
	fn := func(id uint64, name string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: "f.go"}
	}
	fns := []*profile.Function{fn(1, "main.main"), fn(2, name), fn(3, "main.leaf"), fn(4, "main.other"), fn(5, "main.third")}
	locs := make([]*profile.Location, len(fns))
	for i, f := range fns {
		locs[i] = &profile.Location{ID: uint64(i + 1), Address: uint64(0x1000 * (i + 1)), Line: []profile.Line{{Function: f, Line: 1}}}
	}
	sample := func(v int64, idx ...int) *profile.Sample {
		s := &profile.Sample{Value: []int64{v, v * 10000000}}
		for _, i := range idx {
			s.Location = append(s.Location, locs[i])
		}
		return s
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10000000,
		Sample:   []*profile.Sample{sample(5, 2, 1, 0), sample(3, 1, 0), sample(2, 3, 1, 0), sample(1, 4, 0)},
		Location: locs, Function: fns,
	}
	pproftest.Write(t, path, p)
}

// TestHostileNameOutput is defect 8 of issue 12: a long function name with
// bidi and C1 controls, imported and analysed by the real CLI. Text tables
// must stay bounded (the name is cut for display, not padded into every
// row) and hold neither control raw; --json keeps the whole name with both
// characters escaped.
func TestHostileNameOutput(t *testing.T) {
	const size = 1 << 20
	name := hostileName(size)
	dir := initProject(t)
	writeHostileProfile(t, filepath.Join(dir, "cpu.pb.gz"), name)
	var imp capture.ImportResult
	if err := json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "import", "cpu.pb.gz", "--json")).stdout), &imp); err != nil {
		t.Fatal(err)
	}
	runID := imp.Run.RunID

	js := mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--json")).stdout
	var hot analysis.HotspotsOutput
	if err := json.Unmarshal([]byte(js), &hot); err != nil {
		t.Fatal(err)
	}
	frame := ""
	for _, r := range hot.Rows {
		if r.Function == name {
			frame = r.FrameID
		}
	}
	if frame == "" {
		t.Fatalf("--json lost the whole name: %d row(s)", len(hot.Rows))
	}
	assertEscapedJSON(t, "analyze hotspots --json", js)

	for _, args := range [][]string{
		{"analyze", "hotspots", runID},
		{"stacks", "callers", runID, frame},
		{"stacks", "callees", runID, frame},
		{"stacks", "examples", runID, frame},
	} {
		cmd := strings.Join(args[:2], " ")
		out := mustOK(t, flameox(t, dir, args...)).stdout
		if len(out) > 64<<10 {
			t.Errorf("%s: %d bytes of text for a few rows (a name of %d bytes)", cmd, len(out), size)
		}
		assertNoRawControls(t, cmd, out)
		if !strings.Contains(out, `main.\u202eevil\u009b2Jxxx`) || !strings.Contains(out, "…") {
			t.Errorf("%s: the name is not shown escaped and cut:\n%.2000s", cmd, out)
		}
		js := mustOK(t, flameox(t, dir, append(args, "--json")...)).stdout
		if !strings.Contains(js, `"main.\u202eevil\u009b2J`+strings.Repeat("x", size-len("main.\u202eevil\u009b2J"))+`"`) {
			t.Errorf("%s --json does not hold the whole name, escaped", cmd)
		}
		assertEscapedJSON(t, cmd+" --json", js)
	}
}

func assertNoRawControls(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range "\u202e\u009b" {
		if strings.ContainsRune(out, r) {
			t.Errorf("%s: output holds a raw %U", what, r)
		}
	}
}

func assertEscapedJSON(t *testing.T, what, js string) {
	t.Helper()
	assertNoRawControls(t, what, js)
	if !json.Valid([]byte(js)) {
		t.Errorf("%s: not valid JSON", what)
	}
}
