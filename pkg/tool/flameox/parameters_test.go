package flameox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/status"
)

// rangeTOML declares an integer range, a float range and an enumerated
// parameter; args.sh writes the argv it received, one element a line.
const rangeTOML = `schema_version = 1
[workloads.args]
argv = ["/bin/sh", "args.sh", "--count={count}", "{ratio}", "{mode}"]
timeout_seconds = 10
[workloads.args.parameters]
count = {min = 1, max = 50}
ratio = {min = 0.1, max = 0.9, default = 0.5}
mode = ["a", "b"]
`

// TestCaptureRangeParameters: a capture takes range values as KEY=VALUE
// pairs (repeated or comma-separated) or JSON, substitutes their canonical
// text, refuses values outside the range, non-integers and repeated keys
// before anything runs, and a changed range needs approval again.
func TestCaptureRangeParameters(t *testing.T) {
	dir := captureProject(t, rangeTOML, "args")
	os.WriteFile(filepath.Join(dir, "args.sh"), []byte(`printf '%s\n' "$@" > argv.txt`+"\n"), 0o755)
	argv := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "argv.txt"))
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "argv.txt"))
		return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", " ")
	}
	runs := 0
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "--count=1 0.5 a"},
		{[]string{"--parameters", "count=25", "--parameters", "ratio=0.25,mode=b"}, "--count=25 0.25 b"},
		{[]string{"--parameters", "count=50,ratio=0.9"}, "--count=50 0.9 a"},
		{[]string{"--parameters", `{"count": 2.5e1, "ratio": 0.10}`}, "--count=25 0.1 a"},
		{[]string{"--parameters", `{"mode":"b"}`, "--parameters", "count=1"}, "--count=1 0.5 b"},
	} {
		args := append([]string{"capture", "run", "process", "--workload", "args", "--json"}, tt.args...)
		res := runOf(t, mustOK(t, flameox(t, dir, args...)).stdout)
		runs++
		if got := argv(); got != tt.want {
			t.Errorf("%q: workload got argv %q, want %q", tt.args, got, tt.want)
		}
		if m := res.Run; m.Command == nil || !strings.Contains(strings.Join(m.Command.Argv, " "), tt.want) || m.Workload == nil {
			t.Errorf("%q: run records command %+v", tt.args, m.Command)
		} else if fields := strings.Fields(tt.want); m.Workload.Parameters["count"] != strings.TrimPrefix(fields[0], "--count=") || m.Workload.Parameters["ratio"] != fields[1] {
			t.Errorf("%q: run records parameters %v", tt.args, m.Workload.Parameters)
		}
	}
	// The plan shows the substituted values too.
	plan := mustOK(t, flameox(t, dir, "capture", "plan", "process", "--workload", "args", "--parameters", "count=7")).stdout
	if !strings.Contains(plan, "--count=7") || !strings.Contains(plan, "count = 7") {
		t.Errorf("plan does not show count=7:\n%s", plan)
	}
	// Refused before anything runs, naming the parameter, value and range.
	for _, tt := range []struct {
		params []string
		want   []string
	}{
		{[]string{"count=51"}, []string{`parameter "count"`, `"51" is outside the range [1, 50]`}},
		{[]string{"count=0"}, []string{`"0" is outside the range [1, 50]`}},
		{[]string{`{"count": 51}`}, []string{`51 is outside the range [1, 50]`}},
		{[]string{"count=2.5"}, []string{`parameter "count"`, `"2.5" is not an integer (range [1, 50])`}},
		{[]string{"count=many"}, []string{`"many" is not a number (range [1, 50])`}},
		{[]string{"ratio=0.95"}, []string{`parameter "ratio"`, `"0.95" is outside the range [0.1, 0.9]`}},
		{[]string{"mode=c"}, []string{`"c" is not a declared choice (choices: a, b)`}},
		{[]string{"count=1,count=2"}, []string{`--parameters gives "count" more than once`}},
		{[]string{"count=1", `{"count":1}`}, []string{`gives "count" more than once`}},
		{[]string{`{"count":1,"count":2}`}, []string{`gives "count" more than once`}},
		{[]string{"count"}, []string{`"count" is not KEY=VALUE`}},
		{[]string{"nope=1"}, []string{`has no parameter "nope"`}},
	} {
		args := []string{"capture", "run", "process", "--workload", "args"}
		for _, p := range tt.params {
			args = append(args, "--parameters", p)
		}
		r := flameox(t, dir, args...)
		if r.exit != 2 || !strings.Contains(r.stderr, "INVALID_ARGUMENTS") {
			t.Errorf("%q: exit %d, want 2 INVALID_ARGUMENTS\n%s", tt.params, r.exit, r.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%q: stderr does not say %q:\n%s", tt.params, w, r.stderr)
			}
		}
	}
	// fox-capture reads the flag the same way.
	if r := tool(t, "fox-capture", dir, nil, "plan", "process", "--workload", "args", "--parameters", "count=7,ratio=0.3"); r.exit != 0 || !strings.Contains(r.stdout, "--count=7") {
		t.Errorf("fox-capture plan: exit %d\n%s\n%s", r.exit, r.stdout, r.stderr)
	}
	if r := tool(t, "fox-capture", dir, nil, "plan", "process", "--workload", "args", "--parameters", "count=51"); r.exit != 2 || !strings.Contains(r.stdout+r.stderr, "outside the range [1, 50]") {
		t.Errorf("fox-capture out of range: exit %d\n%s\n%s", r.exit, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "argv.txt")); err == nil {
		t.Error("a refused capture ran the workload")
	}
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	if st.Runs.Total != runs {
		t.Errorf("%d runs, want %d: refusals created runs", st.Runs.Total, runs)
	}
	// Widening the range revokes the approval and says how it changed.
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(strings.Replace(rangeTOML, "max = 50", "max = 100", 1)), 0o644)
	r := flameox(t, dir, "capture", "run", "process", "--workload", "args", "--parameters", "count=75")
	if r.exit != 9 || !strings.Contains(r.stderr, "EXECUTION_REFUSED") || !strings.Contains(r.stderr, "parameters.count range [1, 50] → [1, 100]") {
		t.Fatalf("widened range: exit %d\n%s", r.exit, r.stderr)
	}
	mustOK(t, flameox(t, dir, "workload", "approve", "args"))
	mustOK(t, flameox(t, dir, "capture", "run", "process", "--workload", "args", "--parameters", "count=75"))
	if got := argv(); got != "--count=75 0.5 a" {
		t.Fatalf("after approval: argv %q", got)
	}
	// min > max is refused when the file is read.
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(strings.Replace(rangeTOML, "min = 1, max = 50", "min = 50, max = 1", 1)), 0o644)
	if r := flameox(t, dir, "workload", "list"); r.exit != 2 || !strings.Contains(r.stderr, "workloads.args.parameters.count has min 50 greater than max 1") {
		t.Fatalf("min > max: exit %d\n%s", r.exit, r.stderr)
	}
}
