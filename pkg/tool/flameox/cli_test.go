package flameox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/status"
	"github.com/flameox/flameox/pkg/tool/foxcapture"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as flameox or fox-capture in a child
// process, so CLI tests run real processes without a separate build; the
// testscript suites (script_test.go) find the same tools on their PATH.
func TestMain(m *testing.M) {
	switch os.Getenv("FLAMEOX_TEST_AS") {
	case "flameox":
		os.Exit(cli.Main("flameox", Run))
	case "fox-capture":
		os.Exit(cli.Main("fox-capture", foxcapture.Run))
	}
	testscript.Main(m, scriptTools)
}

type result struct {
	stdout, stderr string
	exit           int
}

// tool runs the test binary as the named tool in dir with extra env.
func tool(t *testing.T, name, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "FLAMEOX_TEST_AS="+name), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func flameox(t *testing.T, dir string, args ...string) result {
	return tool(t, "flameox", dir, nil, args...)
}

func mustOK(t *testing.T, r result) result {
	t.Helper()
	if r.exit != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.exit, r.stdout, r.stderr)
	}
	return r
}

func initProject(t *testing.T) string {
	dir := t.TempDir()
	mustOK(t, flameox(t, dir, "init"))
	return dir
}

func TestInitStatusImportJSON(t *testing.T) {
	dir := initProject(t)
	// init writes every anchor and, the corpus being empty, starts no
	// DuckDB instance (a reader would leave staging/duckdb-temp behind).
	if m, _ := filepath.Glob(filepath.Join(dir, ".diagnostics", "evidence", "*", "_anchor-v*.parquet")); len(m) < 10 {
		t.Fatalf("anchors after init: %v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, ".diagnostics", "staging", "duckdb-temp")); err == nil {
		t.Error("init opened a DuckDB reader for an empty corpus")
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o644)
	r := mustOK(t, flameox(t, dir, "import", "--json", "--kind", "benchmark_samples", "a.txt"))
	var imp struct {
		ArtifactID string        `json:"artifact_id"`
		Run        *run.Manifest `json:"run"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &imp); err != nil || !strings.HasPrefix(imp.ArtifactID, "sha256:") {
		t.Fatalf("import --json: %v %s", err, r.stdout)
	}
	var st status.Status
	r = mustOK(t, flameox(t, dir, "--json", "status"))
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Runs.Total != 1 || st.Artifacts.Objects != 1 || st.Artifacts.ByKind["benchmark_samples"].Objects != 1 {
		t.Fatalf("status %+v", st)
	}
	var list query.RunList
	r = mustOK(t, flameox(t, dir, "runs", "list", "--json"))
	json.Unmarshal([]byte(r.stdout), &list)
	if list.Total != 1 || list.Runs[0].RunID != imp.Run.RunID {
		t.Fatalf("runs list %s", r.stdout)
	}
	r = mustOK(t, flameox(t, dir, "runs", "show", imp.Run.RunID))
	if !strings.Contains(r.stdout, imp.ArtifactID) {
		t.Fatalf("runs show: %s", r.stdout)
	}
	r = mustOK(t, flameox(t, dir, "artifacts", "show", imp.ArtifactID, "--json"))
	var d query.ArtifactDetail
	json.Unmarshal([]byte(r.stdout), &d)
	if len(d.Registrations) != 1 || d.EffectiveSensitivity != "internal" {
		t.Fatalf("artifacts show: %s", r.stdout)
	}
	// Subdirectories find the workspace.
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	mustOK(t, flameox(t, filepath.Join(dir, "sub"), "status"))
}

func TestErrorsAndExitCodes(t *testing.T) {
	dir := initProject(t)
	tests := []struct {
		name   string
		damage func()
		args   []string
		exit   int
		code   string
		names  string
	}{
		{"no workspace", nil, []string{"status"}, 2, "WORKSPACE_NOT_FOUND", ""},
		{"bad flag", nil, []string{"runs", "list", "--bogus"}, 2, "INVALID_ARGUMENTS", "bogus"},
		{"unknown command", nil, []string{"frobnicate"}, 2, "INVALID_ARGUMENTS", "fox-frobnicate"},
		{"limit too big", nil, []string{"runs", "list", "--limit", "5000"}, 2, "QUERY_BUDGET_EXCEEDED", ""},
		{"missing run", nil, []string{"runs", "show", "00000000-0000-4000-8000-000000000000"}, 1, "NOT_FOUND", ""},
		{"unknown config key", func() {
			p := filepath.Join(dir, ".diagnostics", "config.toml")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte("max_artifact_bytes"), []byte("max_artifact_bites"), 1), 0o600)
		}, []string{"status"}, 2, "WORKSPACE_INVALID", "capture.max_artifact_bites"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wd := dir
			if tt.damage == nil && tt.code == "WORKSPACE_NOT_FOUND" {
				wd = t.TempDir()
			}
			if tt.damage != nil {
				tt.damage()
			}
			r := flameox(t, wd, append([]string{"--json"}, tt.args...)...)
			if r.exit != tt.exit {
				t.Fatalf("exit %d, want %d\n%s%s", r.exit, tt.exit, r.stdout, r.stderr)
			}
			var env cli.ErrorEnvelope
			if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.OK || env.Error == nil || string(env.Error.Code) != tt.code {
				t.Fatalf("stdout is not the %s envelope: %v %s", tt.code, err, r.stdout)
			}
			if !strings.Contains(r.stderr, tt.code) || !strings.Contains(r.stderr, tt.names) {
				t.Fatalf("stderr %q lacks %s / %s", r.stderr, tt.code, tt.names)
			}
		})
	}
	// Damaged state is exit 5, naming the file.
	os.Remove(filepath.Join(dir, ".diagnostics", "config.toml"))
	mustOK(t, flameox(t, dir, "init"))
	os.WriteFile(filepath.Join(dir, ".diagnostics", "corpus", "HEAD"), []byte("nonsense\n"), 0o600)
	r := flameox(t, dir, "status")
	if r.exit != 5 || !strings.Contains(r.stderr, "corpus/HEAD") {
		t.Fatalf("corrupt HEAD: exit %d %s", r.exit, r.stderr)
	}
}

func TestFoxCaptureRecords(t *testing.T) {
	dir := initProject(t)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("beta"), 0o644)
	r := tool(t, "fox-capture", dir, []string{"API_TOKEN=secret-4242-token"}, "import", "b.txt")
	mustOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one run record, got %q", r.stdout)
	}
	var rec run.Record
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec.Record != "run" || rec.SchemaVersion != 1 || rec.CaptureStatus != "registered" || len(rec.ArtifactIDs) != 1 {
		t.Fatalf("record %v %s", err, lines[0])
	}
	if strings.Contains(r.stdout+r.stderr, "secret-4242") {
		t.Fatal("a parent secret leaked into the output")
	}
	if _, err := os.Stat(filepath.Join(rec.Workspace, rec.Manifest)); err != nil {
		t.Fatalf("record names a missing manifest: %v", err)
	}
	r = tool(t, "fox-capture", dir, nil, "import", "missing.txt")
	if r.exit != 2 || !strings.Contains(r.stdout, `"record":"error"`) || !strings.Contains(r.stdout, "INVALID_ARGUMENTS") {
		t.Fatalf("failed import: exit %d %s", r.exit, r.stdout)
	}
}

func TestConcurrentImports(t *testing.T) {
	dir := initProject(t)
	const n = 8
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("f%d.txt", i))
		content := fmt.Sprintf("file %d", i)
		if i%2 == 1 {
			content = "shared content" // half of them dedupe into one object
		}
		os.WriteFile(p, []byte(content), 0o644)
		wg.Add(1)
		go func(i int, p string) {
			defer wg.Done()
			results[i] = flameox(t, dir, "import", p)
		}(i, p)
	}
	wg.Wait()
	for _, r := range results {
		mustOK(t, r)
	}
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	if st.Runs.Total != n || st.Runs.Unpublished != 0 || st.Runs.ByCapture["registered"] != n || st.Artifacts.Objects != n/2+1 || st.Head.Generations != n {
		t.Fatalf("status after %d concurrent imports: %+v", n, st.Runs)
	}
	var list query.ArtifactList
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "artifacts", "list", "--json")).stdout), &list)
	regs := 0
	for _, a := range list.Artifacts {
		regs += a.Registrations
	}
	if regs != n || len(st.Warnings) != 0 {
		t.Fatalf("registrations %d, warnings %v", regs, st.Warnings)
	}
}

// TestKillDuringImport builds flameox with fault points and kills it at each
// named point of an import.
func TestKillDuringImport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fault-injection binary")
	}
	bin := filepath.Join(t.TempDir(), "flameox")
	build := exec.Command("go", "build", "-tags", "faultinject", "-o", bin, "github.com/flameox/flameox/cmd/flameox")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, point := range []string{"import.run_created", "import.copied", "import.staged", "import.placed"} {
		t.Run(point, func(t *testing.T) {
			dir := initProject(t)
			src := filepath.Join(dir, "big.bin")
			os.WriteFile(src, bytes.Repeat([]byte("evidence"), 1<<18), 0o644)
			cmd := exec.CommandContext(context.Background(), bin, "import", src)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "FLAMEOX_FAULTPOINT="+point)
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("process was not killed at %s: %v", point, err)
			}
			// No partial object: every object directory is complete and verifies.
			objs, _ := filepath.Glob(filepath.Join(dir, ".diagnostics", "artifacts", "sha256", "*", "*"))
			for _, o := range objs {
				if strings.HasPrefix(filepath.Base(o), ".tmp-") {
					continue // an unnamed temporary, invisible to readers
				}
				if _, err := os.Stat(filepath.Join(o, "artifact.json")); err != nil {
					t.Fatalf("partial object visible: %s", o)
				}
			}
			var st status.Status
			r := mustOK(t, flameox(t, dir, "status", "--json"))
			json.Unmarshal([]byte(r.stdout), &st)
			if st.Runs.ByCapture["registered"] != 0 {
				t.Fatalf("a killed import claims registered: %+v", st.Runs)
			}
			switch point {
			case "import.copied", "import.staged", "import.placed":
				if len(st.AbandonedStaging) == 0 {
					t.Fatalf("abandoned staging not reported: %s", r.stdout)
				}
			}
			// The workspace still works: the same import now succeeds.
			mustOK(t, flameox(t, dir, "import", src))
		})
	}
}

// TestConcurrentPublishersAndReaders runs 4 publishing processes and 4
// reading processes at once: commits serialize, every generation is visible
// at the end, and no reader fails.
func TestConcurrentPublishersAndReaders(t *testing.T) {
	dir := initProject(t)
	const publishers, perPublisher, readers = 4, 3, 4
	var pubWG, readWG sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan string, 100)
	for p := 0; p < publishers; p++ {
		pubWG.Add(1)
		go func(p int) {
			defer pubWG.Done()
			for i := 0; i < perPublisher; i++ {
				path := filepath.Join(dir, fmt.Sprintf("p%d-%d.txt", p, i))
				os.WriteFile(path, []byte(path), 0o644)
				if r := flameox(t, dir, "import", path); r.exit != 0 {
					errs <- "publisher: " + r.stderr
				}
			}
		}(p)
	}
	for r := 0; r < readers; r++ {
		readWG.Add(1)
		go func() {
			defer readWG.Done()
			last := int64(-1)
			for {
				select {
				case <-done:
					return
				default:
				}
				res := flameox(t, dir, "runs", "list", "--json")
				if res.exit != 0 {
					errs <- "reader: " + res.stderr
					return
				}
				var list query.RunList
				if err := json.Unmarshal([]byte(res.stdout), &list); err != nil {
					errs <- "reader: " + err.Error()
					return
				}
				if list.Total < last {
					errs <- fmt.Sprintf("reader saw the corpus shrink: %d → %d", last, list.Total)
				}
				last = list.Total
			}
		}()
	}
	pubWG.Wait()
	close(done)
	readWG.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	var st status.Status
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "status", "--json")).stdout), &st)
	if st.Runs.Total != publishers*perPublisher || st.Runs.Unpublished != 0 || st.Head.Generations != publishers*perPublisher || len(st.Head.Orphans) != 0 {
		t.Fatalf("after concurrent publication: runs %+v, generations %d, orphans %v", st.Runs, st.Head.Generations, st.Head.Orphans)
	}
}
