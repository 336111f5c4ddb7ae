package mcpserver_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestGetWorkloadRedaction: get_workload shows what a workload runs (go,
// test, -bench=…) and its description, and redacts by the broker's
// sensitivity rule, alike in argv, the oracle's argv and env (issue 14:
// every argv element was redacted while env values showed, secrets too).
func TestGetWorkloadRedaction(t *testing.T) {
	dir := captureProject(t, `schema_version = 1
[workloads.bench]
description = "BenchmarkParse of ./parse, one package"
argv = ["go", "test", "-bench={b}", "--api-token=hunter22", "--password", "swordfish", "https://bob:s3cret@example.com/x"]
env = { GOFLAGS = "-count=1", GITHUB_TOKEN = "ghp_abcdef", GOPROXY = "https://u:pw@proxy.example" }
oracle = { argv = ["go", "vet", "-auth-key=k3y"] }
[workloads.bench.parameters]
b = ["Parse"]
`)
	c := connect(t, dir, nil)
	var d struct {
		Description string `json:"description"`
		Definition  struct {
			Argv   []string          `json:"argv"`
			Env    map[string]string `json:"env"`
			Oracle struct {
				Argv []string `json:"argv"`
			} `json:"oracle"`
		} `json:"definition"`
	}
	env := c.ok("get_workload", map[string]any{"name": "bench"}, &d)
	wantArgv := []string{"go", "test", "-bench={b}", "--api-token=<redacted>", "--password", "<redacted>", "https://bob:<redacted>@example.com/x"}
	if !slices.Equal(d.Definition.Argv, wantArgv) {
		t.Errorf("argv %q, want %q", d.Definition.Argv, wantArgv)
	}
	if want := []string{"go", "vet", "-auth-key=<redacted>"}; !slices.Equal(d.Definition.Oracle.Argv, want) {
		t.Errorf("oracle argv %q, want %q", d.Definition.Oracle.Argv, want)
	}
	if e := d.Definition.Env; e["GOFLAGS"] != "-count=1" || e["GITHUB_TOKEN"] != "<redacted>" || e["GOPROXY"] != "<redacted>" {
		t.Errorf("env %v", e)
	}
	if d.Description != "BenchmarkParse of ./parse, one package" {
		t.Errorf("description %q", d.Description)
	}
	for _, secret := range []string{"hunter22", "swordfish", "s3cret", "ghp_abcdef", "pw@", "k3y"} {
		if strings.Contains(string(env.raw), secret) || strings.Contains(env.text, secret) {
			t.Errorf("secret %q in the result", secret)
		}
	}
	var l struct {
		Workloads []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"workloads"`
	}
	c.ok("list_workloads", nil, &l)
	if len(l.Workloads) != 1 || l.Workloads[0].Description != d.Description {
		b, _ := json.Marshal(l)
		t.Errorf("list_workloads: %s", b)
	}
}
