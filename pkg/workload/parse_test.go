package workload

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

var update = flag.Bool("update", false, "rewrite golden files")

func readFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustParse(t testing.TB, src string) *File {
	t.Helper()
	f, err := Parse(src, FileName)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

// golden is what `workload show --json` and `experiment show --json` would
// print for every declaration of a file.
func golden(t testing.TB, f *File) []byte {
	t.Helper()
	type shown struct {
		DefinitionID string     `json:"definition_id"`
		Canonical    Definition `json:"canonical"`
	}
	out := struct {
		Workloads   map[string]shown       `json:"workloads"`
		Experiments map[string]*Experiment `json:"experiments"`
	}{map[string]shown{}, f.Experiments}
	for name, w := range f.Workloads {
		out.Workloads[name] = shown{w.DefinitionID(), w.Canonical()}
	}
	b, err := durable.MarshalIndent(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFullExampleGolden(t *testing.T) {
	got := golden(t, mustParse(t, readFile(t, "full.toml")))
	path := filepath.Join("testdata", "full.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("canonical form differs from %s (run with -update after review):\n%s", path, got)
	}
	// Key order, inline tables, literal strings and number spelling do not
	// change the canonical form, the ids or the experiments.
	if again := golden(t, mustParse(t, readFile(t, "full_reformatted.toml"))); !bytes.Equal(again, want) {
		t.Fatalf("reformatted file gives another canonical form:\n%s", again)
	}
}

func TestDefinitionIDChanges(t *testing.T) {
	base := readFile(t, "full.toml")
	ids := func(src string) map[string]string {
		f := mustParse(t, src)
		return map[string]string{"scan": f.Workloads["scan"].DefinitionID(), "startup": f.Workloads["startup"].DefinitionID()}
	}
	orig := ids(base)
	tests := []struct {
		name, old, new, workload string
		changes                  bool
	}{
		{"comment only", "[workloads.scan]\n", "[workloads.scan] # hot path\n", "scan", false},
		{"argv element", `"scan.py"`, `"scan2.py"`, "scan", true},
		{"argv length", `"{length}"]`, `"{length}", "-v"]`, "scan", true},
		{"cwd", `cwd = "."`, `cwd = "sub"`, "scan", true},
		{"timeout", "timeout_seconds = 30", "timeout_seconds = 60", "scan", true},
		{"env value", `SCAN_MODE = "{mode}"`, `SCAN_MODE = "x{mode}"`, "scan", true},
		{"env added", `env = { SCAN_MODE = "{mode}" }`, `env = { SCAN_MODE = "{mode}", B = "1" }`, "scan", true},
		{"allow_env", `allow_env = ["OPENAI_API_KEY"]`, `allow_env = ["OPENAI_API_KEY", "HF_TOKEN"]`, "scan", true},
		{"choice added", `"broken"]`, `"broken", "extra"]`, "scan", true},
		{"choice order (default)", `["baseline", "candidate", "broken"]`, `["candidate", "baseline", "broken"]`, "scan", true},
		{"choice type", `fast = [true, false]`, `fast = ["true", "false"]`, "startup", true},
		{"oracle strength", `strength = "cross_treatment_equivalence"`, `strength = "contract_check"`, "scan", true},
		{"oracle argv", `"validate.py"`, `"check.py"`, "scan", true},
		{"oracle removed", "[workloads.scan.oracle]\nstrength = \"cross_treatment_equivalence\"\nargv = [\"python3\", \"validate.py\", \"{mode}\", \"{length}\"]\n", "", "scan", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(base, tt.old) {
				t.Fatalf("fixture lacks %q", tt.old)
			}
			got := ids(strings.Replace(base, tt.old, tt.new, 1))
			if (got[tt.workload] != orig[tt.workload]) != tt.changes {
				t.Fatalf("id changed = %v, want %v", got[tt.workload] != orig[tt.workload], tt.changes)
			}
			for name, id := range got {
				if name != tt.workload && id != orig[name] {
					t.Fatalf("editing %s changed the id of %s", tt.workload, name)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	f, err := Load(dir)
	if err != nil || len(f.Workloads) != 0 || len(f.Experiments) != 0 {
		t.Fatalf("missing flameox.toml: %v %+v", err, f)
	}
	if _, err := f.Workload("scan"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown workload: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(readFile(t, "full.toml")), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := f.Workload("scan"); err != nil || w.TimeoutSeconds != 30 || f.Path != filepath.Join(dir, FileName) {
		t.Fatalf("load: %v %+v", err, w)
	}
	if s := f.Workloads["startup"]; s.TimeoutSeconds != DefaultTimeoutSeconds || s.Oracle != nil || len(s.AllowEnv) != 0 {
		t.Fatalf("defaults not applied: %+v", s)
	}
	e := f.Experiments["scan_scaling"]
	if e.Combinations() != 6 || strings.Join(e.Variants(), ",") != "baseline,candidate" || e.Factors[1].Parameter != "length" {
		t.Fatalf("experiment: %+v", e)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("schema_version = 1\n[workloads.x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !fault.Is(err, fault.WorkspaceInvalid) || fault.As(err).Details["file"] != filepath.Join(dir, FileName) {
		t.Fatalf("invalid file: %v", err)
	}
}
