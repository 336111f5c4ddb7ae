package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fleet"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// addNewerMinorPart simulates a newer flameox minor: one more runs part
// whose files carry an extra optional column, extra_note (one row, a copy
// of a run's revision). It returns that row's run_id.
func addNewerMinorPart(t *testing.T, p *project, dir string, res *fleet.ExportResult) string {
	t.Helper()
	snap, err := corpus.PinCommit(p.ws.Root, res.CommitID)
	if err != nil {
		t.Fatal(err)
	}
	stage := t.TempDir()
	r, err := catalog.OpenExport(context.Background(), snap, catalog.Options{}, stage)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	files, err := r.CopyPartitioned(context.Background(), catalog.PartitionedCopy{
		Table: "runs", Paths: snap.Files["runs"],
		SQL: fmt.Sprintf(`SELECT * EXCLUDE (rn), 'from a newer minor' AS extra_note, '%s' AS workspace_id, CAST(coalesce(started_at, created_at) AS DATE) AS date
		       FROM (SELECT *, row_number() OVER (ORDER BY run_id, revision) AS rn FROM new_rows) WHERE rn = 1`, res.WorkspaceID),
		PartitionBy: []string{"workspace_id", "date"}, Dir: filepath.Join(stage, "runs"), Pattern: "part-ffffffffffff-{i}",
	})
	if err != nil || len(files) != 1 {
		t.Fatalf("newer minor part: %v, %v", files, err)
	}
	rel, _ := filepath.Rel(filepath.Join(stage, "runs"), files[0].Path)
	final := filepath.Join(dir, "runs", rel)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(files[0].Path, final); err != nil {
		t.Fatal(err)
	}
	src, err := catalog.Open(context.Background(), snap, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return scan(t, src, `SELECT run_id FROM runs ORDER BY run_id, revision LIMIT 1`)[0][0]
}

// TestSchemaEvolutionReadsInDuckDB: a part with an extra optional column
// reads beside the older parts with union_by_name (docs/fleet.md).
func TestSchemaEvolutionReadsInDuckDB(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(t.TempDir(), "export")
	res := export(t, p, dir, "--include-sensitive")
	runID := addNewerMinorPart(t, p, dir, res)
	r, err := catalog.OpenDirectory(context.Background(), dir, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := scan(t, r, fmt.Sprintf(`SELECT count(*), count(extra_note), max(CASE WHEN extra_note IS NOT NULL THEN run_id END)
		FROM read_parquet('%s/runs/**/*.parquet', hive_partitioning = true, union_by_name = true)`, dir))[0]
	want := []string{fmt.Sprint(res.Tables["runs"].Rows + 1), "1", runID}
	if !slices.Equal(got, want) {
		t.Errorf("runs with a newer minor's part: (rows, extra_note values, its run) = %v, want %v", got, want)
	}
}

// sparkPython returns a python3 that imports pyspark, with a java beside
// it (scripts/install-collectors.sh installs both).
func sparkPython(t *testing.T) string {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	testenv.LookPath(t, "java")
	if out, err := exec.Command(py, "-c", "import pyspark").CombinedOutput(); err != nil {
		testenv.Unable(t, "pyspark", "not installed", "%s", strings.TrimSpace(string(out)))
	}
	return py
}

// TestSparkReadsTheExport runs Apache Spark in local mode over an export
// of two workspaces, one exported with whole evidence files, the other
// rewritten by DuckDB: every table's row count and values equal flameox's
// on the source corpus, the partitions are discovered with their types,
// and a newer minor's extra column reads with mergeSchema.
func TestSparkReadsTheExport(t *testing.T) {
	if testing.Short() {
		t.Skip("Spark starts a JVM")
	}
	py := sparkPython(t)
	dir := filepath.Join(t.TempDir(), "export")
	a, b := newProject(t), newProject(t)
	resA := export(t, a, dir, "--include-sensitive")
	restore := fleet.SetForceRewrite(true)
	resB := export(t, b, dir, "--include-sensitive")
	restore()
	runID := addNewerMinorPart(t, a, dir, resA)

	tables := map[string]bool{}
	for _, res := range []*fleet.ExportResult{resA, resB} {
		for table := range res.Tables {
			tables[table] = true
		}
	}
	names := make([]string, 0, len(tables))
	for table := range tables {
		names = append(names, table)
	}
	slices.Sort(names)
	cmd := exec.Command(py, append([]string{testdata(t, "spark_read.py"), dir, resA.WorkspaceID + "," + resB.WorkspaceID}, names...)...)
	cmd.Env = append(os.Environ(), "PYSPARK_PYTHON="+py, "SPARK_LOCAL_IP=127.0.0.1")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("spark: %v\n%s", err, msg)
	}
	var got map[string]map[string]struct {
		Rows           int64             `json:"rows"`
		Column         string            `json:"column"`
		Sample         []string          `json:"sample"`
		PartitionTypes map[string]string `json:"partition_types"`
		Values         []string          `json:"values"`
		ExtraNote      *int64            `json:"extra_note"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("spark output %q: %v", out, err)
	}
	for _, c := range []struct {
		p     *project
		res   *fleet.ExportResult
		extra string // the run the newer minor's part copies, or ""
	}{{a, resA, runID}, {b, resB, ""}} {
		snap, err := corpus.PinCommit(c.p.ws.Root, c.res.CommitID)
		if err != nil {
			t.Fatal(err)
		}
		src, err := catalog.Open(context.Background(), snap, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		mine := got[c.res.WorkspaceID]
		for _, table := range snap.Tables() {
			g := mine[table]
			var sample []string
			for _, w := range scan(t, src, fmt.Sprintf(`SELECT CAST(%s AS VARCHAR) FROM %s`, g.Column, table)) {
				sample = append(sample, w[0])
			}
			if table == "runs" && c.extra != "" {
				sample = append(sample, c.extra)
			}
			slices.Sort(sample)
			if g.Rows != int64(len(sample)) || !slices.Equal(g.Sample, sample) {
				t.Errorf("workspace %s, %s: Spark reads %d rows (%s: %.5v), flameox %d (%.5v)", c.res.WorkspaceID, table, g.Rows, g.Column, g.Sample, len(sample), sample)
			}
			if g.PartitionTypes["workspace_id"] != "string" || g.PartitionTypes["date"] != "date" {
				t.Errorf("%s: Spark's partition types %v, want workspace_id string and date date", table, g.PartitionTypes)
			}
		}
		var values []string
		for _, r := range scan(t, src, `SELECT run_id, revision, execution_status, coalesce(CAST(wall_time_ns AS VARCHAR), 'None') FROM runs ORDER BY run_id, revision`) {
			values = append(values, strings.Join(r, "|"))
		}
		if c.extra != "" {
			for _, v := range values {
				if strings.HasPrefix(v, c.extra+"|") {
					values = append(values, v) // the newer minor's copy
					break
				}
			}
		}
		slices.Sort(values)
		if !slices.Equal(mine["runs"].Values, values) {
			t.Errorf("workspace %s: runs values in Spark:\n%v\nflameox:\n%v", c.res.WorkspaceID, mine["runs"].Values, values)
		}
		want := int64(0)
		if c.extra != "" {
			want = 1
		}
		if n := mine["runs"].ExtraNote; n == nil || *n != want {
			t.Errorf("workspace %s: Spark with mergeSchema: extra_note has %v values, want %d", c.res.WorkspaceID, n, want)
		}
	}
}
