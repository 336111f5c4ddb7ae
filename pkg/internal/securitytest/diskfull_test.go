package securitytest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/tinyfs"
)

// headOf returns the published head commit `flameox status --json`
// reports, which must work however full the disk is.
func headOf(t *testing.T, dir string) string {
	t.Helper()
	r := mustOK(t, "status", fx(t, dir, "--json", "status"))
	var st struct {
		Head struct {
			CommitID string `json:"commit_id"`
		} `json:"head"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Head.CommitID == "" {
		t.Fatalf("status --json has no head commit: %v\n%s", err, r.stdout)
	}
	return st.Head.CommitID
}

// TestDiskFull puts a project on a tiny tmpfs and fills it: import,
// capture, publish (fox-publish reading fox-capture's records) and catalog
// compact each fail with STORAGE_FULL (exit 3, retryable, the directory to
// free named), HEAD stays the commit it was, status and `fox-catalog
// validate` work; once space is freed, recover and every one of those
// commands succeeds and nothing published before is lost.
func TestDiskFull(t *testing.T) {
	tfs := tinyfs.Mount(t, 24<<20)
	dir := filepath.Join(tfs.Dir, "project")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(helloTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, "init", fx(t, dir, "init"))
	mustOK(t, "workload approve", fx(t, dir, "workload", "approve", "hello"))
	bench, err := os.ReadFile(fixture(t, "golang-perf__crc-old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(n int) string { // the same benchmarks, another artifact
		name := fmt.Sprintf("bench-%d.txt", n)
		if err := os.WriteFile(filepath.Join(dir, name), append([]byte(fmt.Sprintf("note: variant %d\n", n)), bench...), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	var published []string
	for i := range 3 {
		published = append(published, runIDOf(t, mustOK(t, "import", fx(t, dir, "--json", "import", "--kind", "benchmark_samples", variant(i))).stdout))
	}
	mustOK(t, "catalog rebuild", fx(t, dir, "catalog", "rebuild"))
	records := mustOK(t, "fox-capture import", cmdline{tool: "fox-capture", dir: dir, args: []string{"import", variant(3)}}.run(t)).stdout
	next := variant(4)
	head := headOf(t, dir)

	tfs.Fill(t, 0)
	for _, c := range []struct {
		what string
		cmd  cmdline
	}{
		{"import", cmdline{tool: "flameox", args: []string{"--json", "import", "--kind", "benchmark_samples", next}}},
		{"capture run", cmdline{tool: "flameox", args: []string{"--json", "capture", "run", "process", "--workload", "hello"}}},
		{"fox-publish", cmdline{tool: "fox-publish", stdin: records}},
		{"catalog compact", cmdline{tool: "flameox", args: []string{"--json", "catalog", "compact"}}},
	} {
		c.cmd.dir = dir
		r := c.cmd.run(t)
		var fe *fault.Error
		if c.cmd.tool == "fox-publish" {
			fe = errorRecord(t, c.what, r)
		} else if r.exit != 0 {
			fe = errorOf(t, c.what, r)
		}
		if fe == nil || fe.Code != fault.StorageFull || !fe.Retryable || !strings.HasPrefix(fe.Details["directory"], tfs.Dir) {
			t.Errorf("%s on a full disk: exit %d, %+v; want STORAGE_FULL naming a directory in %s\n%s", c.what, r.exit, fe, tfs.Dir, r.stderr)
		}
		if got := headOf(t, dir); got != head {
			t.Errorf("%s on a full disk moved HEAD from %s to %s", c.what, head, got)
		}
		mustOK(t, "fox-catalog validate", cmdline{tool: "fox-catalog", dir: dir, args: []string{"validate"}}.run(t))
		mustOK(t, "validate --level full", fx(t, dir, "validate", "--level", "full"))
	}
	// gc reads (its dry run works full) and, applied, either finds nothing
	// to move or fails as cleanly.
	mustOK(t, "gc", fx(t, dir, "gc"))
	if r := fx(t, dir, "--json", "gc", "--apply"); r.exit != 0 {
		if fe := errorOf(t, "gc --apply", r); fe.Code != fault.StorageFull {
			t.Errorf("gc --apply on a full disk: %s, want STORAGE_FULL", fe.Code)
		}
	}
	if got := headOf(t, dir); got != head {
		t.Errorf("gc on a full disk moved HEAD from %s to %s", head, got)
	}

	tfs.Free(t)
	mustOK(t, "recover", fx(t, dir, "recover"))
	published = append(published, runIDOf(t, mustOK(t, "import", fx(t, dir, "--json", "import", "--kind", "benchmark_samples", next)).stdout))
	published = append(published, runIDOf(t, mustOK(t, "capture run", fx(t, dir, "--json", "capture", "run", "process", "--workload", "hello")).stdout))
	mustOK(t, "fox-publish", cmdline{tool: "fox-publish", dir: dir, stdin: records}.run(t))
	mustOK(t, "catalog compact", fx(t, dir, "catalog", "compact"))
	mustOK(t, "fox-catalog validate", cmdline{tool: "fox-catalog", dir: dir, args: []string{"validate"}}.run(t))
	mustOK(t, "validate --level full", fx(t, dir, "validate", "--level", "full"))
	mustOK(t, "gc --apply", fx(t, dir, "gc", "--apply"))
	if headOf(t, dir) == head {
		t.Error("HEAD did not move once space was freed")
	}
	list := mustOK(t, "runs list", fx(t, dir, "--json", "runs", "list", "--limit", "100")).stdout
	for _, id := range published {
		if !strings.Contains(list, id) {
			t.Errorf("run %s is not listed after the disk filled and was freed", id)
		}
	}
}

// errorRecord reads a plumbing tool's error record (stdout) after it
// failed with the record's exit code.
func errorRecord(t *testing.T, what string, r result) *fault.Error {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct {
			Record string `json:"record"`
		}
		var fe fault.Error // the record carries the error's fields (docs/records.md)
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Record == "error" && json.Unmarshal([]byte(line), &fe) == nil {
			if r.exit != fe.ExitCode() {
				t.Errorf("%s: exit %d, but its error record says %s (exit %d)", what, r.exit, fe.Code, fe.ExitCode())
			}
			return &fe
		}
	}
	return nil
}
