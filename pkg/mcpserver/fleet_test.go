package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryFleetReadsOnlyAllowedExports: query_fleet reads an export in
// the project, or under a fleet.exports directory a person configured;
// one elsewhere (also through a symlink in the project) is refused with
// EXECUTION_REFUSED naming the config key, a missing one is NOT_FOUND.
func TestQueryFleetReadsOnlyAllowedExports(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	outside := t.TempDir()
	porcelainJSON(t, dir, "export", "corpus", "--to", filepath.Join(dir, "exports"))
	porcelainJSON(t, dir, "export", "corpus", "--to", filepath.Join(outside, "team"))
	if err := os.Symlink(filepath.Join(outside, "team"), filepath.Join(dir, "team-link")); err != nil {
		t.Fatal(err)
	}

	var res struct {
		Corpora []any `json:"corpora"`
		Total   int   `json:"total"`
	}
	c.ok("query_fleet", map[string]any{"name": "runs_per_environment", "from": []string{"exports"}}, &res)
	if len(res.Corpora) != 1 || res.Total == 0 {
		t.Fatalf("an export in the project: %+v", res)
	}
	for _, from := range []string{filepath.Join(outside, "team"), "team-link", "/"} {
		env := c.fails("query_fleet", map[string]any{"name": "runs_per_environment", "from": []string{from}}, "EXECUTION_REFUSED")
		if !strings.Contains(env.text, "fleet.exports") {
			t.Errorf("%s: the refusal does not say how to allow it: %s", from, env.text)
		}
	}
	c.fails("query_fleet", map[string]any{"name": "runs_per_environment", "from": []string{"no-such-export"}}, "NOT_FOUND")

	// A person allows the directory: now it is read.
	cfg := filepath.Join(dir, ".diagnostics", "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "exports = []", "exports = ["+`"`+outside+`"`+"]", 1))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	res.Corpora = nil
	c.ok("query_fleet", map[string]any{"name": "runs_per_environment", "from": []string{filepath.Join(outside, "team"), "team-link"}}, &res)
	if len(res.Corpora) != 1 {
		t.Fatalf("an allowed export (twice, once through a link): %+v", res)
	}
}
