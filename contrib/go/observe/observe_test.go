package observe

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestRecordAndPhase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "obs.jsonl")
	t.Setenv(EnvVar, p)
	end := Phase("train")
	Record("policy", "clipping_enabled", false, "max_norm", 1.5)
	Record("ready")
	end()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 4 || lines[0]["flameox_observations"] != float64(1) || lines[0]["language"] != "go" {
		t.Fatalf("lines %v", lines)
	}
	obs := lines[1]
	vals := obs["values"].(map[string]any)
	if obs["t"] != "observe" || obs["name"] != "policy" || obs["phase"] != "train" || vals["clipping_enabled"] != false || vals["max_norm"] != 1.5 {
		t.Fatalf("observation %v", obs)
	}
	if lines[2]["values"].(map[string]any)[""] != true {
		t.Fatalf("bare record %v", lines[2])
	}
	if lines[3]["t"] != "phase" || lines[3]["name"] != "train" || lines[3]["duration_ns"].(float64) < 0 {
		t.Fatalf("phase %v", lines[3])
	}
}

func TestUnsetDoesNothing(t *testing.T) {
	t.Setenv(EnvVar, "")
	Record("x", "y", 1)
	Phase("p")()
	if out != nil && path == "" {
		t.Fatal("a file was opened")
	}
}
