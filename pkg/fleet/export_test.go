package fleet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fleet"
	"github.com/flameox/flameox/pkg/tool/flameox"
	"github.com/flameox/flameox/pkg/workspace"
)

// childEnv makes the test binary run one `flameox export corpus` and exit
// (the subprocess the kill test SIGKILLs).
const childEnv = "FLAMEOX_FLEET_EXPORT_CHILD"

func TestMain(m *testing.M) {
	if args := os.Getenv(childEnv); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			os.Exit(3)
		}
		dir, _ := os.Getwd()
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ, Dir: dir, Now: time.Now}
		if err := flameox.Run(context.Background(), env, argv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// run runs flameox in process in dir and returns its stdout.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv, Environ: os.Environ, Dir: dir, Now: time.Now}
	if err := flameox.Run(context.Background(), env, args); err != nil {
		t.Fatalf("flameox %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// project is a workspace with evidence in several tables: a pyperf suite
// and Go benchmark output (runs, artifacts, environments, source states,
// measurements, observations), and a sensitive pyperf import.
type project struct {
	dir string
	ws  *workspace.Workspace
}

func newProject(t testing.TB) *project {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init")
	run(t, dir, "import", testdata(t, "pyperf.json"), testdata(t, "gobench.txt"))
	// Other bytes than the first import's: one artifact registered twice
	// takes the higher sensitivity, so all its rows would be left out.
	b, err := os.ReadFile(testdata(t, "gobench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, append(b, "BenchmarkSecret 10 100 ns/op\n"...), 0o644)
	run(t, dir, "import", "--sensitivity", "sensitive", secret)
	ws, err := workspace.Discover(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return &project{dir: dir, ws: ws}
}

func testdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// importMore adds one run (a Go benchmark output file of its own bytes).
func (p *project) importMore(t testing.TB, i int) {
	t.Helper()
	b, err := os.ReadFile(testdata(t, "gobench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "bench"+strconv.Itoa(i)+".txt")
	os.WriteFile(f, append(b, []byte(fmt.Sprintf("BenchmarkExtra%d 100 %d ns/op\n", i, 1000+i))...), 0o644)
	run(t, p.dir, "import", f)
}

func export(t testing.TB, p *project, to string, extra ...string) *fleet.ExportResult {
	t.Helper()
	out := run(t, p.dir, append([]string{"export", "corpus", "--json", "--to", to}, extra...)...)
	var res fleet.ExportResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	return &res
}

// scan runs a curated query and returns its rows as strings.
func scan(t testing.TB, r *catalog.Reader, q string) [][]string {
	t.Helper()
	var out [][]string
	err := r.Scan(context.Background(), catalog.Query{Name: "test", Version: "1", SQL: q}, nil, func(rows *sql.Rows) error {
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = fmt.Sprint(v)
			}
			out = append(out, row)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// fingerprint is count and an order-independent digest of whole rows.
const fingerprint = `SELECT count(*), CAST(coalesce(bit_xor(hash(CAST(s AS VARCHAR))), 0) AS VARCHAR) FROM (%s) s`

func sourceFingerprints(t testing.TB, root string, commit string) map[string][2]string {
	t.Helper()
	snap, err := corpus.PinCommit(root, commit)
	if err != nil {
		t.Fatal(err)
	}
	r, err := catalog.Open(context.Background(), snap, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string][2]string{}
	for _, table := range snap.Tables() {
		row := scan(t, r, fmt.Sprintf(fingerprint, "SELECT * FROM "+table))[0]
		out[table] = [2]string{row[0], row[1]}
	}
	return out
}

// exportFingerprints reads DIR as an engine does: by glob, with Hive
// partitioning, one workspace's partition.
func exportFingerprints(t testing.TB, dir, wsID string, tables []string) map[string][2]string {
	t.Helper()
	r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string][2]string{}
	for _, table := range tables {
		q := fmt.Sprintf(`SELECT * EXCLUDE (workspace_id, date) FROM read_parquet('%s/%s/**/*.parquet', hive_partitioning = true, union_by_name = true) WHERE workspace_id = '%s'`, dir, table, wsID)
		row := scan(t, r, fmt.Sprintf(fingerprint, q))[0]
		out[table] = [2]string{row[0], row[1]}
	}
	return out
}

// TestExportReadsInDuckDBAsTheSource exports whole evidence files where
// it can, and every file rewritten by DuckDB: either way every table reads
// back row for row.
func TestExportReadsInDuckDBAsTheSource(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "rewrite"}[rewrite], func(t *testing.T) {
			defer fleet.SetForceRewrite(rewrite)()
			testReadsAsTheSource(t, rewrite)
		})
	}
}

func testReadsAsTheSource(t *testing.T, rewrite bool) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	res := export(t, p, dir, "--include-sensitive")
	if res.UpToDate || len(res.Written) == 0 {
		t.Fatalf("first export wrote nothing: %+v", res)
	}
	snap, err := corpus.PinCommit(p.ws.Root, res.CommitID)
	if err != nil {
		t.Fatal(err)
	}
	evidence := map[string]bool{}
	for _, g := range snap.Generations {
		for _, f := range g.Files {
			evidence[f.SHA256] = true
		}
	}
	for _, f := range res.Written {
		if evidence[f.SHA256] == rewrite {
			t.Errorf("rewrite=%v, but %s is byte for byte an evidence file: %v", rewrite, f.Path, evidence[f.SHA256])
		}
	}
	src := sourceFingerprints(t, p.ws.Root, res.CommitID)
	got := exportFingerprints(t, dir, res.WorkspaceID, keys(src))
	if len(src) < 5 {
		t.Fatalf("the fixture corpus has only tables %v", keys(src))
	}
	for table, want := range src {
		if got[table] != want {
			t.Errorf("%s: export has (rows, digest) %v, the corpus %v", table, got[table], want)
		}
	}
	// The manifest lists exactly the files on disk, with their digests.
	man, err := fleet.ReadManifest(dir, res.WorkspaceID)
	if err != nil || man == nil {
		t.Fatal(man, err)
	}
	checkManifest(t, dir, man)
	for table, want := range src {
		if n := strconv.FormatInt(man.Tables[table].Rows, 10); n != want[0] {
			t.Errorf("manifest counts %s rows of %s, the corpus %s", n, table, want[0])
		}
		if man.Tables[table].Schema == "" || len(man.Tables[table].Generations) == 0 {
			t.Errorf("manifest table %s lacks its schema or generations: %+v", table, man.Tables[table])
		}
	}
	// The date partition of a run is its start (or creation) day.
	r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bad := scan(t, r, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/runs/**/*.parquet', hive_partitioning = true) WHERE date <> CAST(coalesce(started_at, created_at) AS DATE)`, dir))
	if bad[0][0] != "0" {
		t.Errorf("%s runs sit in another date partition than their start", bad[0][0])
	}
}

// checkManifest: every visible file is listed, every listed file has its
// digest, size and row count.
func checkManifest(t testing.TB, dir string, man *fleet.Manifest) {
	t.Helper()
	listed := map[string]fleet.ManifestFile{}
	for _, f := range man.Files {
		listed[f.Path] = f
	}
	visible := visibleFiles(t, dir, man.WorkspaceID)
	if len(visible) != len(listed) {
		t.Errorf("%d visible files, %d in the manifest", len(visible), len(listed))
	}
	r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, rel := range visible {
		f, ok := listed[rel]
		if !ok {
			t.Errorf("%s is not in the manifest", rel)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != f.ByteLength || digestOf(b) != f.SHA256 {
			t.Errorf("%s: size or digest differ from the manifest", rel)
		}
		n := scan(t, r, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s')`, filepath.Join(dir, rel)))[0][0]
		if n != strconv.FormatInt(f.Rows, 10) {
			t.Errorf("%s has %s rows, the manifest says %d", rel, n, f.Rows)
		}
	}
}

// visibleFiles lists the files an engine's glob over DIR/<table> sees for
// one workspace (nothing under a dot-prefixed name).
func visibleFiles(t testing.TB, dir, wsID string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") || d.Name() == "manifests" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() && strings.Contains(rel, "/workspace_id="+wsID+"/") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestExportIsIncrementalAndIdempotent(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	first := export(t, p, dir)
	before := snapshotDir(t, dir)

	again := export(t, p, dir)
	if !again.UpToDate || len(again.Written) != 0 {
		t.Fatalf("a second export of the same commit wrote %d files (up_to_date %v)", len(again.Written), again.UpToDate)
	}
	if after := snapshotDir(t, dir); !maps(before, after) {
		t.Fatalf("a second export of the same commit changed the directory:\nbefore %v\nafter  %v", before, after)
	}

	p.importMore(t, 1)
	third := export(t, p, dir)
	if third.UpToDate || len(third.Written) == 0 || third.PreviousCommitID != first.CommitID {
		t.Fatalf("export after a new capture: %+v", third)
	}
	after := snapshotDir(t, dir)
	for path, st := range before {
		if after[path] != st && !strings.HasPrefix(path, "manifests/") {
			t.Errorf("%s changed (%s → %s): generations are immutable, an export only adds parts", path, st, after[path])
		}
	}
	for _, f := range third.Written {
		if !strings.Contains(f.Path, "/part-"+corpus.Short(third.CommitID)+"-") {
			t.Errorf("new part %s is not named after the commit %s", f.Path, third.CommitID)
		}
	}
	// Compaction rewrites the corpus's files, but its rows keep their
	// generations: nothing is exported twice.
	run(t, p.dir, "catalog", "compact")
	fourth := export(t, p, dir)
	if len(fourth.Written) != 0 {
		t.Errorf("export after compaction wrote %d files again", len(fourth.Written))
	}
	man, _ := fleet.ReadManifest(dir, first.WorkspaceID)
	checkManifest(t, dir, man)
	src := sourceFingerprints(t, p.ws.Root, fourth.CommitID)
	for table, want := range src {
		if table == "runs" || table == "artifacts" || table == "measurements" || table == "observations" {
			continue // sensitive rows and columns are left out here
		}
		if got := strconv.FormatInt(man.Tables[table].Rows, 10); got != want[0] {
			t.Errorf("%s: %s rows exported after compaction, the corpus has %s", table, got, want[0])
		}
	}
}

// snapshotDir maps every file under dir (dot names included, except the
// lock) to its size and modification time.
func snapshotDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") {
			return err
		}
		fi, _ := d.Info()
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return out
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestExportLeavesSensitiveOut exports before and after a compaction that
// mixes the sensitive artifact's rows with others in one file (which the
// export then rewrites, dropping some rows).
func TestExportLeavesSensitiveOut(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	checkSensitive(t, p, dir)
	run(t, p.dir, "catalog", "compact")
	checkSensitive(t, p, filepath.Join(t.TempDir(), "export-after-compaction"))
}

func checkSensitive(t *testing.T, p *project, dir string) {
	// A pyperf suite whose metadata records its command line (pyperf's
	// "command"), beside the host name every suite has.
	var suite map[string]any
	b, err := os.ReadFile(testdata(t, "pyperf.json"))
	if err != nil || json.Unmarshal(b, &suite) != nil {
		t.Fatal(err)
	}
	suite["metadata"].(map[string]any)["command"] = "python3 bench.py --token=s3cr3t"
	b, _ = json.Marshal(suite)
	withArgv := filepath.Join(t.TempDir(), "argv.json")
	os.WriteFile(withArgv, b, 0o644)
	if !strings.Contains(dir, "after-compaction") {
		run(t, p.dir, "import", withArgv)
	}
	res := export(t, p, dir)
	r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src, err := catalog.OpenHead(context.Background(), p.ws.Root, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sensitive := scan(t, src, `SELECT DISTINCT artifact_id FROM artifacts WHERE sensitivity = 'sensitive'`)
	if len(sensitive) != 1 {
		t.Fatalf("fixture: %d sensitive artifacts", len(sensitive))
	}
	for _, table := range []string{"artifacts", "measurements"} {
		n := scan(t, r, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/%s/**/*.parquet', hive_partitioning = true) WHERE artifact_id = '%s'`, dir, table, sensitive[0][0]))
		if n[0][0] != "0" {
			t.Errorf("%s: %s rows of the sensitive artifact exported", table, n[0][0])
		}
		want := scan(t, src, fmt.Sprintf(`SELECT count(*) FROM %s WHERE artifact_id IS NULL OR artifact_id <> '%s'`, table, sensitive[0][0]))
		if got := strconv.FormatInt(res.Tables[table].Rows, 10); got != want[0][0] {
			t.Errorf("%s: %s rows exported, want the %s that are not the sensitive artifact's", table, got, want[0][0])
		}
	}
	n := scan(t, r, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/runs/**/*.parquet', hive_partitioning = true) WHERE execution_identity_json IS NOT NULL`, dir))
	if n[0][0] != "0" {
		t.Errorf("%s runs carry their execution identity (argv, env)", n[0][0])
	}
	for _, name := range []string{"pyperf.metadata.command", "pyperf.metadata.hostname"} {
		had := scan(t, src, fmt.Sprintf(`SELECT count(*) FROM observations WHERE name = '%s'`, name))[0][0]
		got := scan(t, r, fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/observations/**/*.parquet', hive_partitioning = true) WHERE name = '%s'`, dir, name))[0][0]
		if had == "0" || got != "0" {
			t.Errorf("observations %s: the corpus has %s, the export %s (want some, then none)", name, had, got)
		}
	}
	// The sensitive setting of a directory cannot change under it.
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv, Environ: os.Environ, Dir: p.dir, Now: time.Now}
	if err := flameox.Run(context.Background(), env, []string{"export", "corpus", "--to", dir, "--include-sensitive"}); err == nil || !strings.Contains(err.Error(), "include-sensitive") {
		t.Errorf("mixing --include-sensitive into a directory exported without it: %v", err)
	}
}

func TestTwoWorkspacesExportIntoOneDirectory(t *testing.T) {
	a, b := newProject(t), newProject(t)
	b.importMore(t, 7)
	dir := filepath.Join(t.TempDir(), "export")
	ra := export(t, a, dir, "--include-sensitive")
	rb := export(t, b, dir, "--include-sensitive")
	if ra.WorkspaceID == rb.WorkspaceID {
		t.Fatal("fixture: one workspace id")
	}
	for _, pr := range []struct {
		p   *project
		res *fleet.ExportResult
	}{{a, ra}, {b, rb}} {
		src := sourceFingerprints(t, pr.p.ws.Root, pr.res.CommitID)
		got := exportFingerprints(t, dir, pr.res.WorkspaceID, keys(src))
		for table, want := range src {
			if got[table] != want {
				t.Errorf("workspace %s, %s: export %v, corpus %v", pr.res.WorkspaceID, table, got[table], want)
			}
		}
		man, _ := fleet.ReadManifest(dir, pr.res.WorkspaceID)
		checkManifest(t, dir, man)
	}
	// A second export of either changes nothing of the other's.
	if again := export(t, a, dir, "--include-sensitive"); !again.UpToDate {
		t.Errorf("re-export of workspace a after b wrote %d files", len(again.Written))
	}
}

// TestKilledExportLeavesNoPartialFile SIGKILLs an export at random moments:
// no visible file is ever partial (every one reads whole), and the next
// export completes the directory.
func TestKilledExportLeavesNoPartialFile(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal([]string{"export", "corpus", "--to", dir, "--include-sensitive"})
	child := func() *exec.Cmd {
		c := exec.Command(exe, "-test.run=^$")
		c.Dir = p.dir
		c.Env = append(os.Environ(), childEnv+"="+string(argv))
		return c
	}
	// One complete run into a scratch directory sizes the window.
	start := time.Now()
	scratch := child()
	scratch.Env = append(os.Environ(), childEnv+`=["export","corpus","--to",`+strconv.Quote(filepath.Join(t.TempDir(), "x"))+`]`)
	if out, err := scratch.CombinedOutput(); err != nil {
		t.Fatalf("child export: %v\n%s", err, out)
	}
	window := time.Since(start)
	rng := rand.New(rand.NewPCG(23, uint64(time.Now().UnixNano())))
	killed := 0
	for trial := range 20 {
		p.importMore(t, 100+trial)
		c := child()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(window))))
		c.Process.Kill()
		c.Wait()
		if st, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			killed++ // else it had finished
		}
		checkNoPartial(t, dir)
		if trial%2 == 1 {
			continue // the next trial's export starts from what this one left
		}
		res := export(t, p, dir, "--include-sensitive")
		man, _ := fleet.ReadManifest(dir, res.WorkspaceID)
		checkManifest(t, dir, man)
		src := sourceFingerprints(t, p.ws.Root, res.CommitID)
		got := exportFingerprints(t, dir, res.WorkspaceID, keys(src))
		for table, want := range src {
			if got[table] != want {
				t.Fatalf("trial %d, %s: after the kill and a complete export, export %v, corpus %v", trial, table, got[table], want)
			}
		}
	}
	t.Logf("%d of 20 exports killed within a %s window", killed, window)
}

// checkNoPartial: every visible Parquet file reads whole.
func checkNoPartial(t testing.TB, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		return
	}
	r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "manifests" {
			continue
		}
		filepath.WalkDir(filepath.Join(dir, e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasPrefix(d.Name(), ".") || !strings.HasSuffix(d.Name(), ".parquet") {
				t.Errorf("visible non-part file %s", p)
				return nil
			}
			scan(t, r, fmt.Sprintf(`SELECT count(*), bit_xor(hash(CAST(s AS VARCHAR))) FROM read_parquet('%s') s`, p))
			return nil
		})
	}
}

// TestExportWhileCapturesPublish exports while imports publish: each
// export reads one pinned commit, and its manifest's counts are that
// commit's and equal the files.
func TestExportWhileCapturesPublish(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 6 {
			p.importMore(t, 200+i)
		}
	}()
	var results []*fleet.ExportResult
	for busy := true; busy; {
		select {
		case <-done:
			busy = false
		default:
		}
		results = append(results, export(t, p, dir, "--include-sensitive"))
		man, err := fleet.ReadManifest(dir, results[len(results)-1].WorkspaceID)
		if err != nil {
			t.Fatal(err)
		}
		checkManifest(t, dir, man)
		src := sourceFingerprints(t, p.ws.Root, man.CommitID)
		for table, want := range src {
			if got := strconv.FormatInt(man.Tables[table].Rows, 10); got != want[0] {
				t.Errorf("manifest at commit %s: %s rows of %s, the commit has %s", corpus.Short(man.CommitID), got, table, want[0])
			}
		}
	}
	if len(results) < 2 {
		t.Logf("only %d exports ran during the captures", len(results))
	}
}

// TestExportSince leaves out the rows an earlier commit held.
func TestExportSince(t *testing.T) {
	p := newProject(t)
	head, err := corpus.HeadID(p.ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	p.importMore(t, 3)
	dir := filepath.Join(t.TempDir(), "export")
	res := export(t, p, dir, "--since", corpus.Short(head), "--tables", "runs,artifacts")
	if res.Tables["runs"].Rows != 1 || len(res.Tables) != 2 {
		t.Errorf("--since exported %+v, want the one new run in runs and artifacts only", res.Tables)
	}
	full := export(t, p, dir, "--tables", "runs")
	if full.Tables["runs"].RowsWritten == 0 {
		t.Error("a later export without --since did not add the older runs")
	}
}

func keys(m map[string][2]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestExportCrashAtEachStep kills a faultinject build of flameox at each
// of the export's steps (pkg/faultpoint): after the files are staged,
// after the first rename into place, after all are placed, after the
// manifest. Nothing visible is ever partial, a part renamed before the
// crash is not counted twice, and the next export completes the
// directory.
func TestExportCrashAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds flameox with -tags faultinject")
	}
	bin := filepath.Join(t.TempDir(), "flameox")
	if out, err := exec.Command("go", "build", "-tags", "faultinject", "-o", bin, "github.com/flameox/flameox/cmd/flameox").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	for i, point := range []string{"export.staged", "export.file_renamed", "export.placed", "export.manifest_written"} {
		p.importMore(t, 300+i)
		c := exec.Command(bin, "export", "corpus", "--to", dir, "--include-sensitive")
		c.Dir = p.dir
		c.Env = append(os.Environ(), "FLAMEOX_FAULTPOINT="+point)
		out, _ := c.CombinedOutput()
		if st, ok := c.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() {
			t.Fatalf("%s: the export was not killed there: %s\n%s", point, c.ProcessState, out)
		}
		checkNoPartial(t, dir)
		res := export(t, p, dir, "--include-sensitive")
		if point == "export.file_renamed" && len(res.Removed) == 0 {
			t.Errorf("%s: the part renamed before the crash was not removed", point)
		}
		man, _ := fleet.ReadManifest(dir, res.WorkspaceID)
		checkManifest(t, dir, man)
		src := sourceFingerprints(t, p.ws.Root, res.CommitID)
		got := exportFingerprints(t, dir, res.WorkspaceID, keys(src))
		for table, want := range src {
			if got[table] != want {
				t.Errorf("%s, %s: after the crash and a complete export, export %v, corpus %v", point, table, got[table], want)
			}
		}
	}
}

// TestExportRefusesAChangedDirectory: a part the manifest lists that was
// deleted is reported, never silently re-counted.
func TestExportRefusesAChangedDirectory(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	res := export(t, p, dir)
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(res.Written[0].Path))); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv, Environ: os.Environ, Dir: p.dir, Now: time.Now}
	err := flameox.Run(context.Background(), env, []string{"export", "corpus", "--to", dir})
	if err == nil || !strings.Contains(err.Error(), "missing or changed") {
		t.Errorf("export over a directory missing a listed part: %v", err)
	}
}

// TestExportRedactsCommandLines: hyperfine names each result by its
// command; credentials in it are redacted as workload argv are, unless
// --include-sensitive.
func TestExportRedactsCommandLines(t *testing.T) {
	p := newProject(t)
	var suite map[string]any
	b, err := os.ReadFile(testdata(t, "hyperfine.json"))
	if err != nil || json.Unmarshal(b, &suite) != nil {
		t.Fatal(err)
	}
	results := suite["results"].([]any)
	results[0].(map[string]any)["command"] = "./target/mycat2 --token=abc123 https://user:pw@example.com/x"
	b, _ = json.Marshal(suite)
	f := filepath.Join(t.TempDir(), "hyperfine.json")
	os.WriteFile(f, b, 0o644)
	run(t, p.dir, "import", f)
	for _, include := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "export")
		args := []string{}
		if include {
			args = append(args, "--include-sensitive")
		}
		export(t, p, dir, args...)
		r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rows := scan(t, r, fmt.Sprintf(`SELECT DISTINCT subject FROM read_parquet('%s/measurements/**/*.parquet', hive_partitioning = true) WHERE subject LIKE './target/%%' ORDER BY 1`, dir))
		r.Close()
		var subjects []string
		for _, row := range rows {
			subjects = append(subjects, row[0])
		}
		secret, redacted := "./target/mycat2 --token=abc123 https://user:pw@example.com/x", "./target/mycat2 --token=<redacted> https://user:<redacted>@example.com/x"
		want, absent := redacted, secret
		if include {
			want, absent = secret, redacted
		}
		if !slices.Contains(subjects, want) || slices.Contains(subjects, absent) || !slices.Contains(subjects, "./target/mycat3 test.txt") {
			t.Errorf("include-sensitive=%v: subjects %q, want %q and not %q", include, subjects, want, absent)
		}
	}
}
