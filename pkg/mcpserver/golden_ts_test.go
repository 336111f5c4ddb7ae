package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// goldenMaxCalls is the budget: each golden investigation over
// MCP alone in at most 20 tool calls, get_job polls included.
const goldenMaxCalls = 20

// goldenProject copies a bundled example into a fresh git project,
// runs build (if any) in it, commits it (source identity exact), creates
// its workspace and approves its workloads as a person would (no MCP
// tool approves).
func goldenProject(t *testing.T, example string, build func(dir string), approve ...string) string {
	t.Helper()
	git := testenv.LookPath(t, "git")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "contrib", "examples", example))); err != nil {
		t.Fatal(err)
	}
	if build != nil {
		build(dir)
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"}, {"commit", "-q", "-m", example}} {
		cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	init, err := workspace.Init(context.Background(), dir, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range approve {
		wl, _, err := workload.Lookup(init.Workspace, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := workload.Approve(context.Background(), init.Workspace, wl, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGoldenTypeScript runs goldens (a), (d) and (c) of SPEC §9
// (docs/goldens.md) over MCP alone: testdata/golden/golden.mjs (and
// golden_memory.mjs for (c)), TypeScript-SDK clients, take each bundled
// example from a question to a supported finding and its report in at
// most goldenMaxCalls calls, asserting what
// pkg/tool/flameox/testdata/script/golden_*.txtar assert on the CLI.
func TestGoldenTypeScript(t *testing.T) {
	if testing.Short() {
		t.Skip("golden investigations: live go test, pyperf, memray and massif experiments")
	}
	node, sdkDir := tsSDKDir(t)
	text, err := os.ReadFile(filepath.Join("testdata", "golden", "golden.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := tsScript(t, sdkDir, text)
	for _, g := range []struct {
		name, example string
		approve       []string
		cfg           map[string]any
	}{
		{"go", "reverse-scan", []string{"bench", "bench_profiled"}, map[string]any{
			"adapter": "gotest", "metric": "gobench.sec/op", "workload": "bench",
			"scaling": "reverse_scaling", "baseline": "reverse", "compare": "reverse_compare",
			"broken":   map[string]any{"impl": "broken", "n": "32768"},
			"profiled": map[string]any{"workload": "bench_profiled", "parameters": map[string]any{"impl": "reverse", "n": "131072"}},
			"question": "Is DirectSum faster than ReverseSum, and how does ReverseSum grow?",
			"title":    "DirectSum is faster than ReverseSum",
			"claim":    "DirectSum is faster at n=131072; the profile puts the time in ReverseSum",
		}},
		{"pyperf", "reverse-scan-py", []string{"reverse_scan"}, map[string]any{
			"adapter": "pyperf", "metric": "pyperf.sec", "workload": "reverse_scan",
			"scaling": "reverse_scaling", "baseline": "baseline", "compare": "reverse_compare",
			"broken":   map[string]any{"mode": "broken", "length": "32768"},
			"question": "Does sum() make the reverse scan faster, and how does the scan grow?",
			"title":    "sum() scan is faster",
			"claim":    "sum() is faster than the reversed loop at 128K; the loop grows with the length",
		}},
	} {
		t.Run(g.name, func(t *testing.T) {
			env := goldenEnv()
			if g.name == "go" {
				testenv.LookPath(t, "go")
			}
			dir := goldenProject(t, g.example, nil, g.approve...)
			if g.name == "pyperf" {
				env["PATH"] = pythonVenv(t, dir, "pyperf") + string(os.PathListSeparator) + env["PATH"]
			}
			cfg := g.cfg
			cfg["command"], cfg["args"], cfg["env"] = os.Args[0], []string{"serve", "--project-root", dir}, env
			cfg["prediction"], cfg["max_calls"] = "the candidate at least 5% faster at the largest size; the baseline grows linearly", goldenMaxCalls
			b, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			out := runAgent(t, sdkDir, node, script, string(b))
			t.Logf("golden %s over MCP (TypeScript SDK %s): %s", g.name, tsSDK, out)
		})
	}
	t.Run("memory", func(t *testing.T) { goldenMemory(t, node, sdkDir) })
}

// goldenMemory is golden (c) over MCP alone
// (testdata/golden/golden_memory.mjs): the retained-memory regression of
// contrib/examples/retained-memory under memray (Python) and massif (C),
// from a question to a supported finding citing both comparisons and
// both memory analyses, as golden_memory.txtar does on the CLI.
func goldenMemory(t *testing.T, node, sdkDir string) {
	text, err := os.ReadFile(filepath.Join("testdata", "golden", "golden_memory.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := tsScript(t, sdkDir, text)
	testenv.LookPath(t, "valgrind")
	cc := testenv.LookPath(t, "cc")
	env := goldenEnv()
	// The C workload runs ./cache: built before the commit, as a user
	// builds it; the example's .gitignore keeps the binary (and .venv)
	// out of the source, so the tree stays clean and identity exact.
	dir := goldenProject(t, "retained-memory", func(dir string) {
		cmd := exec.Command(cc, "-g", "-O0", "-o", "cache", "cache.c")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cc cache.c: %v\n%s", err, out)
		}
	}, "cache", "cache_c")
	// The real interpreter first on PATH, with memray importable: a
	// launcher script's runs have partial source identity, and their
	// comparison could not be valid.
	env["PATH"] = pythonVenv(t, dir, "memray") + string(os.PathListSeparator) + env["PATH"]
	b, err := json.Marshal(map[string]any{
		"command": os.Args[0], "args": []string{"serve", "--project-root", dir}, "env": env,
		// Two experiments take at least 14 calls before any get_job
		// poll (golden_memory.mjs), leaving 6 polls of 50 s: within
		// the budget on an idle machine.
		"max_calls": goldenMaxCalls,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := runAgent(t, sdkDir, node, script, string(b))
	t.Logf("golden memory over MCP (TypeScript SDK %s): %s", tsSDK, out)
}

// goldenEnv is the server's environment: the test's own, with
// FOX_MCP_TEST_SERVE so that the test binary serves MCP.
func goldenEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	env["FOX_MCP_TEST_SERVE"] = "1"
	return env
}

// pythonVenv puts the real python3 (not a launcher script such as
// pyenv's shim, whose runs' source identity is partial: it has no build
// id) in the project's .venv/bin, as a virtualenv would, with module
// (the collector: pyperf, memray) importable, and returns that
// directory. Inside the project, it is visible to a contained capture;
// .gitignore leaves it out of the source.
func pythonVenv(t *testing.T, dir, module string) string {
	t.Helper()
	python := testenv.LookPath(t, "python3")
	out, err := exec.Command(python, "-c", "import sys, "+module+"; print(sys.executable)").Output()
	if err != nil {
		testenv.Unable(t, module, "not installed", "%s -c 'import %s': %v", python, module, err)
	}
	bin := filepath.Join(dir, ".venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strings.TrimSpace(string(out)), filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestRecordScalingAnalysis: record_analysis's scaling recipe persists
// analyze_scaling's result with the experiment's trials' runs as inputs,
// so a finding can cite it over MCP (goldens (a) and (d)).
func TestRecordScalingAnalysis(t *testing.T) {
	dir := captureProject(t, scalingTOML, "grow") // scaling_test.go's
	c := connect(t, dir, nil)
	var p experimentPlan
	c.ok("plan_experiment", map[string]any{"experiment": "grow", "adapter": "process"}, &p)
	var done experimentJob
	c.ok("start_experiment", map[string]any{"plan_token": p.PlanToken}, &done)
	for deadline := time.Now().Add(2 * time.Minute); !done.Terminal; {
		if time.Now().After(deadline) {
			t.Fatalf("the experiment did not end: %+v", done.job)
		}
		c.ok("get_job", map[string]any{"job_id": done.JobID, "wait_seconds": 10}, &done)
	}
	if done.Experiment == nil || done.Experiment.Outcomes["succeeded"] != 12 {
		t.Fatalf("experiment: %+v", done.Experiment)
	}
	exp := done.Experiment.Experiment.ExperimentID
	var rec struct {
		Recipe     string `json:"recipe"`
		Operation  string `json:"operation"`
		Commit     string `json:"corpus_commit_id"`
		AnalysisID string `json:"analysis_id"`
	}
	c.ok("record_analysis", map[string]any{"recipe": "scaling", "arguments": map[string]any{"experiment_id": exp}}, &rec)
	if rec.Recipe != "scaling" || rec.Operation != "scaling" || rec.Commit == "" || rec.AnalysisID == "" {
		t.Fatalf("record_analysis scaling: %+v", rec)
	}
	// The recorded analysis is evidence a finding can cite.
	var row struct {
		Fields map[string]string `json:"fields"`
	}
	c.ok("get_evidence", map[string]any{"type": "analysis", "id": rec.AnalysisID}, &row)
	if row.Fields["analysis_id"] != rec.AnalysisID || row.Fields["recipe"] != "scaling" {
		t.Fatalf("get_evidence analysis: %v", row.Fields)
	}
	// Its arguments are analyze_scaling's, checked against its schema.
	c.fails("record_analysis", map[string]any{"recipe": "scaling", "arguments": map[string]any{"experiment_id": exp, "limit": "many"}}, "INVALID_ARGUMENTS")
}
