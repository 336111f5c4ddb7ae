package flameox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/run"
)

const printenvTOML = `schema_version = 1
[workloads.printenv]
argv = ["/bin/sh", "scripts/env.sh"]
timeout_seconds = 30
[workloads.printenv_allowed]
argv = ["/bin/sh", "scripts/env.sh"]
timeout_seconds = 30
allow_env = ["GOPROXY", "PIP_INDEX_URL"]
`

// A credential in the user info of an allow-listed variable (GOPROXY, and
// PIP_INDEX_URL added to the allowlist) is kept from the child unless the
// workload's allow_env names it; either way it reaches no file of the
// workspace (the child prints its environment: the stored stdout has it
// redacted) and no output of flameox. Issue 12, defect 9.
func TestCaptureKeepsURLCredentials(t *testing.T) {
	const proxySecret, pipSecret = "FXSECRETproxy7", "FXSECRETpip42"
	dir := captureProject(t, printenvTOML, "printenv", "printenv_allowed")
	cfgPath := filepath.Join(dir, ".diagnostics", "config.toml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil || !strings.Contains(string(cfg), `"GOPROXY",`) {
		t.Fatalf("config: %v", err)
	}
	cfg = []byte(strings.Replace(string(cfg), `"GOPROXY",`, `"GOPROXY", "PIP_INDEX_URL",`, 1))
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "env.sh"), []byte("env > child.env\nenv\nenv >&2\n"), 0o755)
	parent := []string{"GOPROXY=https://user:" + proxySecret + "@proxy.example.com,direct",
		"PIP_INDEX_URL=https://" + pipSecret + "@pypi.example.com/simple"}
	for _, tc := range []struct {
		workload string
		allowed  bool
	}{{"printenv", false}, {"printenv_allowed", true}} {
		r := mustOK(t, tool(t, "flameox", dir, parent, "capture", "run", "process", "--workload", tc.workload, "--json"))
		res := runOf(t, r.stdout)
		if res.Run.ExecutionStatus != run.ExecSucceeded {
			t.Fatalf("%s: run %+v", tc.workload, res.Run)
		}
		childEnv, _ := os.ReadFile(filepath.Join(dir, "child.env"))
		for _, s := range []string{proxySecret, pipSecret} {
			if got := strings.Contains(string(childEnv), s); got != tc.allowed {
				t.Errorf("%s: child has %s: %v, want %v", tc.workload, s, got, tc.allowed)
			}
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("%s: flameox's output holds %s", tc.workload, s)
			}
		}
		dropped := strings.Join(res.Plan.Environment.Dropped, ",")
		if tc.allowed == strings.Contains(dropped, "GOPROXY") || tc.allowed == strings.Contains(dropped, "PIP_INDEX_URL") {
			t.Errorf("%s: dropped %q", tc.workload, dropped)
		}
		wantRedacted := ""
		if tc.allowed {
			wantRedacted = "GOPROXY,PIP_INDEX_URL"
		}
		if res.Run.Process == nil || strings.Join(res.Run.Process.RedactedEnv, ",") != wantRedacted {
			t.Errorf("%s: process %+v; want redacted_env %q", tc.workload, res.Run.Process, wantRedacted)
		}
	}
	filepath.WalkDir(filepath.Join(dir, ".diagnostics"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		for _, s := range []string{proxySecret, pipSecret} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds the credential %s", path, s)
			}
		}
		return nil
	})
	stored := 0
	filepath.WalkDir(filepath.Join(dir, ".diagnostics"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "GOPROXY=https://user:<redacted>@proxy.example.com,direct") {
				stored++
			}
		}
		return nil
	})
	if stored == 0 {
		t.Error("no stored output holds the allowed child's redacted GOPROXY")
	}
}
