package foxcapture_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/run"
)

const outcomeTOML = `schema_version = 1
[workloads.ok]
argv = ["/bin/true"]
timeout_seconds = 30
[workloads.fails]
argv = ["/bin/sh", "-c", "exit 3"]
timeout_seconds = 30
[workloads.false]
argv = ["/bin/false"]
timeout_seconds = 30
[workloads.slow]
argv = ["/bin/sh", "-c", "exec sleep 30"]
timeout_seconds = 1
[workloads.rejected]
argv = ["/bin/true"]
timeout_seconds = 30
[workloads.rejected.oracle]
strength = "execution_check"
argv = ["/bin/false"]
`

// TestCaptureExitCodesAgree: `fox-capture run` and `flameox capture run`
// exit with the same status for the same outcome (docs/exit-codes.md),
// and fox-capture still writes the run record before exiting non-zero.
func TestCaptureExitCodesAgree(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, tool(t, "flameox", dir, "init"))
	if err := os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(outcomeTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		workload string
		exit     int
		exec     string
		says     string
	}{
		{"ok", 0, run.ExecSucceeded, ""},
		{"fails", 4, run.ExecFailed, "the workload failed"},
		{"false", 4, run.ExecFailed, "the workload failed"},
		{"slow", 8, run.ExecTimedOut, "timed out"},
		{"rejected", 1, run.ExecSucceeded, "oracle rejected"},
	}
	for _, tt := range tests {
		mustOK(t, tool(t, "flameox", dir, "workload", "approve", tt.workload))
	}
	for _, tt := range tests {
		t.Run(tt.workload, func(t *testing.T) {
			fx := tool(t, "flameox", dir, "capture", "run", "process", "--workload", tt.workload)
			fc := tool(t, "fox-capture", dir, "run", "process", "--workload", tt.workload)
			if fx.exit != tt.exit || fc.exit != tt.exit {
				t.Fatalf("flameox exit %d, fox-capture exit %d, want %d both\nflameox: %s\nfox-capture: %s",
					fx.exit, fc.exit, tt.exit, fx.stderr, fc.stderr)
			}
			for _, r := range []result{fx, fc} {
				if tt.says != "" && !strings.Contains(r.stderr, tt.says) {
					t.Errorf("stderr does not say %q: %s", tt.says, r.stderr)
				}
			}
			lines := strings.Split(strings.TrimSpace(fc.stdout), "\n")
			var rec run.Record
			if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec.Record != "run" || rec.ExecutionStatus != tt.exec {
				t.Fatalf("fox-capture did not write the run record: %q", fc.stdout)
			}
		})
	}
}
