package compare

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// importRuns imports each file as a run and publishes them.
func importRuns(t *testing.T, files ...string) (*workspace.Workspace, []string) {
	t.Helper()
	ctx := context.Background()
	res, err := workspace.Init(ctx, t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	svc := &capture.Service{WS: res.Workspace, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	var refs []publish.RunRef
	var ids []string
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		imp, err := svc.Import(ctx, capture.ImportRequest{Path: abs, Kind: "benchmark_samples"})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, publish.RunRef{RunID: imp.Run.RunID, Revision: imp.Run.Revision})
		ids = append(ids, imp.Run.RunID)
	}
	pub := publish.New(res.Workspace, publish.Options{Extractors: all.Registry().Extractors()})
	if _, err := pub.PublishRuns(ctx, refs); err != nil {
		t.Fatal(err)
	}
	return res.Workspace, ids
}

// TestCompareRunsAgreesWithBenchstat: two imported go test files, read
// back from the catalog and compared, give benchstat's delta on every
// row benchstat compares (the stored rows rebuild the same results).
func TestCompareRunsAgreesWithBenchstat(t *testing.T) {
	for _, pair := range [][2]string{{"golang-perf__crc-old.txt", "golang-perf__crc-new.txt"}, {"golang-perf__old.txt", "golang-perf__new.txt"}} {
		t.Run(pair[0], func(t *testing.T) {
			oldFile, _ := filepath.Abs(filepath.Join("testdata", pair[0]))
			newFile, _ := filepath.Abs(filepath.Join("testdata", pair[1]))
			want := BenchstatDeltas(t, []string{"-ignore", "note"}, oldFile, newFile)
			ws, ids := importRuns(t, oldFile, newFile)
			v, err := CompareRuns(context.Background(), ws, BenchRequest{RunA: ids[0], RunB: ids[1], Ignore: "note", Limit: query.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			if v.Truncated || v.Total != len(v.Rows) {
				t.Fatalf("total %d, %d rows, truncated %v", v.Total, len(v.Rows), v.Truncated)
			}
			got := 0
			for _, r := range v.Rows {
				if r.Old == nil || r.New == nil {
					t.Errorf("%s %s: one side missing", r.Benchmark, r.Unit)
					continue
				}
				got++
				d, ok := want[benchstatKey{tableKey(r.Table), r.Benchmark, r.Unit}]
				if !ok {
					t.Errorf("%s %s [%s]: benchstat has no such comparison", r.Benchmark, r.Unit, r.Table)
				} else if d != r.Delta {
					t.Errorf("%s %s: delta %q, benchstat %q", r.Benchmark, r.Unit, r.Delta, d)
				}
			}
			if got != len(want) {
				t.Errorf("%d comparisons, benchstat has %d", got, len(want))
			}
			if v.Validity.Status != validityExploratory || !strings.Contains(strings.Join(v.Validity.Reasons, ";"), "unpaired") {
				t.Errorf("validity %+v", v.Validity)
			}
		})
	}
}

// TestCompareRunsErrors: bad input is a structured error.
func TestCompareRunsErrors(t *testing.T) {
	ws, ids := importRuns(t, "testdata/golang-perf__old.txt")
	for _, req := range []BenchRequest{
		{RunA: ids[0]},
		{RunA: ids[0], RunB: ids[0]},
		{RunA: ids[0], RunB: "not-a-run"},
		{RunA: ids[0], RunB: "00000000-0000-4000-8000-000000000000"},
		{RunA: ids[0], RunB: "00000000-0000-4000-8000-000000000000", Filter: "("},
		{RunA: ids[0], RunB: "00000000-0000-4000-8000-000000000000", Limit: 5000},
	} {
		if _, err := CompareRuns(context.Background(), ws, req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
}
