package foxcapture_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/tinyfs"
)

// storageFailure checks that a command that failed on the full file system
// said STORAGE_FULL the whole way: exit 3, retryable, a remedy naming a
// directory on that file system, and no "this is a bug". It returns the
// error, or nil when the command succeeded.
func storageFailure(t *testing.T, what string, r result, mount string) *fault.Error {
	t.Helper()
	if r.exit == 0 {
		return nil
	}
	var env struct {
		Error *fault.Error `json:"error"`
	}
	if r.exit != fault.ExitCapability || json.Unmarshal([]byte(r.stdout), &env) != nil || env.Error == nil {
		t.Fatalf("%s on a full disk: exit %d, want 0 or %d\nstdout: %s\nstderr: %s", what, r.exit, fault.ExitCapability, r.stdout, r.stderr)
	}
	fe := env.Error
	dir := fe.Details["directory"]
	if fe.Code != fault.StorageFull || !fe.Retryable || !strings.HasPrefix(dir, mount) ||
		len(fe.Remediation) == 0 || !strings.Contains(fe.Remediation[0], "Free space in "+dir) {
		t.Fatalf("%s on a full disk: %+v", what, fe)
	}
	if strings.Contains(r.stderr, "bug") || !strings.Contains(r.stderr, "STORAGE_FULL") {
		t.Fatalf("%s on a full disk said:\n%s", what, r.stderr)
	}
	return fe
}

// variant returns a copy of the gzip file src that differs in its header's
// MTIME only: the same profile, a different artifact.
func variant(t *testing.T, src string, n int) []byte {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	data[4], data[5], data[6], data[7] = byte(n), byte(n>>8), 0x5a, 0x5a
	return data
}

// TestFullDisk fills a real tmpfs to different depths and runs `flameox
// import`, `flameox recover` and `flameox catalog rebuild` on it: each
// succeeds or fails with STORAGE_FULL naming the directory to free (the
// catalog's DuckDB file included), never INTERNAL_ERROR; once space is
// freed, recover succeeds, nothing published is lost and the workspace
// works again.
func TestFullDisk(t *testing.T) {
	tfs := tinyfs.Mount(t, 8<<20)
	dir := filepath.Join(tfs.Dir, "project")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, tool(t, "flameox", dir, "init"))
	root := filepath.Join(dir, ".diagnostics")
	fixture := filepath.Join("..", "..", "profile", "testdata", "parca__fgprof.pb.gz")
	leaves := []int64{0, 4 << 10, 8 << 10, 12 << 10, 16 << 10, 24 << 10, 32 << 10, 48 << 10, 64 << 10, 96 << 10, 128 << 10, 192 << 10, 256 << 10, 384 << 10, 512 << 10}
	for i := 0; i <= len(leaves); i++ {
		if err := os.WriteFile(filepath.Join(dir, "p"+string(rune('a'+i))+".pb.gz"), variant(t, fixture, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	importRun := func(r result) string {
		var res struct {
			Run struct {
				RunID string `json:"run_id"`
			} `json:"run"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Run.RunID == "" {
			t.Fatalf("not an import result: %v\n%s", err, r.stdout)
		}
		return res.Run.RunID
	}
	published := []string{importRun(mustOK(t, tool(t, "flameox", dir, "--json", "import", "pa.pb.gz")))}
	mustOK(t, tool(t, "flameox", dir, "catalog", "rebuild"))

	var importsFull, rebuildsFull, duckdbFull int
	for i, leave := range leaves {
		src := "p" + string(rune('b'+i)) + ".pb.gz"
		tfs.Fill(t, leave)
		r := tool(t, "flameox", dir, "--json", "import", src)
		if storageFailure(t, "import", r, tfs.Dir) != nil {
			importsFull++
		} else {
			published = append(published, importRun(r))
		}
		if leave == 0 { // plumbing says it in its error record
			r := tool(t, "fox-capture", dir, "import", src)
			if r.exit != fault.ExitCapability || !strings.Contains(r.stdout, `"record":"error"`) || !strings.Contains(r.stdout, `"code":"STORAGE_FULL"`) {
				t.Fatalf("fox-capture import on a full disk: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
			}
		}
		storageFailure(t, "recover", tool(t, "flameox", dir, "--json", "recover"), tfs.Dir)
		if fe := storageFailure(t, "catalog rebuild", tool(t, "flameox", dir, "--json", "catalog", "rebuild"), tfs.Dir); fe != nil {
			rebuildsFull++
			if strings.Contains(fe.Message, "IO Error") { // DuckDB's own text: no errno
				duckdbFull++
			}
		}
		if r := tool(t, "flameox", dir, "status"); r.exit != 0 {
			t.Fatalf("status on a full disk: exit %d %s", r.exit, r.stderr)
		}
		tfs.Free(t)
		mustOK(t, tool(t, "flameox", dir, "recover"))
	}
	t.Logf("STORAGE_FULL from %d imports, %d catalog rebuilds (%d from DuckDB); %d imports published", importsFull, rebuildsFull, duckdbFull, len(published)-1)
	if importsFull == 0 || rebuildsFull == 0 || duckdbFull == 0 {
		t.Fatal("the file system never filled where expected")
	}

	// Space is back: nothing published is lost, and everything works.
	mustOK(t, tool(t, "flameox", dir, "recover"))
	var list struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	r := mustOK(t, tool(t, "flameox", dir, "--json", "runs", "list", "--limit", "1000"))
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, run := range list.Runs {
		listed[run.RunID] = true
	}
	for _, id := range published {
		if !listed[id] {
			t.Errorf("published run %s is gone after the disk filled", id)
		}
		mustOK(t, tool(t, "flameox", dir, "analyze", "hotspots", id))
	}
	var st struct {
		StaleRuns []string `json:"stale_runs"`
		Warnings  []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, tool(t, "flameox", dir, "--json", "status")).stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.StaleRuns) != 0 {
		t.Errorf("recover left stale runs: %v", st.StaleRuns)
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, "damaged") {
			t.Errorf("status: %s", w)
		}
	}
	mustOK(t, tool(t, "flameox", dir, "catalog", "rebuild"))
	mustOK(t, tool(t, "flameox", dir, "import", "p"+string(rune('a'+len(leaves)))+".pb.gz"))
	if _, err := os.Stat(filepath.Join(root, "catalog.duckdb")); err != nil {
		t.Fatal(err)
	}
}
