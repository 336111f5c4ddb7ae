package stacks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/profile"
)

// extractRows extracts path and reads every profile table back.
func extractRows(t *testing.T, path string) (map[string][]map[string]any, *adapter.Extraction) {
	t.Helper()
	s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	res, err := (&Extractor{}).Extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: path}, s)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]map[string]any{}
	for _, table := range []string{"frames", "frame_measurements", "measurements", "call_edges", "stacks"} {
		rows[table] = s.Rows(t, table)
	}
	return rows, res
}

// sameExtraction extracts path, then again with *threshold set to 0, and
// fails where a table's rows or the extraction result differ; it returns
// the first extraction's rows. with and without name the two in errors.
func sameExtraction(t *testing.T, path string, threshold *int, with, without string) map[string][]map[string]any {
	t.Helper()
	before, beforeRes := extractRows(t, path)
	defer func(n int) { *threshold = n }(*threshold)
	*threshold = 0
	after, afterRes := extractRows(t, path)
	for table, want := range before {
		if !reflect.DeepEqual(after[table], want) {
			t.Errorf("%s: %d rows %s differ from %d %s", table, len(after[table]), with, len(want), without)
		}
	}
	if !reflect.DeepEqual(afterRes, beforeRes) {
		t.Errorf("extraction result %s %+v, %s %+v", with, afterRes, without, beforeRes)
	}
	return before
}

// TestConcurrentTablesSame: the call edges and stacks written on their own
// goroutine, beside the other tables (a profile with concurrentEdges call
// edges or more), are the rows written one table after another, and so
// are the other tables' rows, the row counts and the limitations.
func TestConcurrentTablesSame(t *testing.T) {
	for _, name := range []string{"google-pprof__large.cpu.pb.gz", "parca__alloc_objects.pb.gz", "parca__profile-with-labels.pb.gz"} {
		t.Run(name, func(t *testing.T) {
			serial := sameExtraction(t, "../../profile/testdata/"+name, &concurrentEdges, "written beside the others", "written alone")
			if len(serial["call_edges"]) == 0 || len(serial["stacks"]) == 0 {
				t.Fatalf("no call edges or stacks to compare")
			}
		})
	}
}

// TestFirstRanksGroups: each metric's first firstRows ranks, then the rest
// of its topRows ranks, come in row groups of their own, and so do the
// firstRows and then topRows hottest frames: the first page of hotspots
// reads a few dozen rows of each table, not a thousand.
func TestFirstRanksGroups(t *testing.T) {
	s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	in := adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: "../../profile/testdata/google-pprof__large.cpu.pb.gz"}
	if _, err := (&Extractor{}).Extract(context.Background(), in, s); err != nil {
		t.Fatal(err)
	}
	groups := func(table string) (rows []map[string]any, sizes []int) {
		rows = s.Rows(t, table)
		pf, err := file.OpenParquetFile(s.Path(table), false)
		if err != nil {
			t.Fatal(err)
		}
		defer pf.Close()
		for g := range pf.NumRowGroups() {
			sizes = append(sizes, int(pf.MetaData().RowGroup(g).NumRows()))
		}
		return rows, sizes
	}
	frames, sizes := groups("frames")
	if len(sizes) < 3 || sizes[0] != firstRows || sizes[1] != topRows-firstRows {
		t.Errorf("frames row groups %v, want %d, %d, then the rest", sizes, firstRows, topRows-firstRows)
	}
	for i, r := range frames {
		if r["frame_index"] != int32(i) {
			t.Fatalf("frames row %d has frame_index %v", i, r["frame_index"])
		}
	}
	meas, sizes := groups("frame_measurements")
	if len(sizes) < 3 {
		t.Fatalf("frame_measurements row groups %v: no first ranks apart", sizes)
	}
	start := 0
	for g, tier := range [][2]int32{{1, firstRows}, {firstRows + 1, topRows}, {topRows + 1, 1 << 30}} {
		n := len(meas) - start
		if g < 2 {
			n = sizes[g]
		}
		perMetric := map[any]int32{}
		for _, r := range meas[start : start+n] {
			rank := r["rank"].(int32)
			if rank < tier[0] || rank > tier[1] {
				t.Fatalf("group %d holds rank %d, outside %v", g, rank, tier)
			}
			perMetric[r["metric"]]++
		}
		if len(perMetric) != 2 {
			t.Errorf("group %d holds %d metrics, want both", g, len(perMetric))
		}
		for m, k := range perMetric {
			if g < 2 && k != tier[1]-tier[0]+1 {
				t.Errorf("group %d: %d ranks of %v, want %d", g, k, m, tier[1]-tier[0]+1)
			}
		}
		start += n
	}
}

// TestStackRowsAdjacent: a stack kept for several sample types has its
// rows, one per type in type order, next to each other, so that its frame
// ids repeat within one row group and page.
func TestStackRowsAdjacent(t *testing.T) {
	rows, _ := extractRows(t, "../../profile/testdata/google-pprof__large.cpu.pb.gz")
	stacks := rows["stacks"]
	key := func(r map[string]any) string { return fmt.Sprint(r["frame_ids"], r["thread"], r["process"]) }
	metrics := map[any]bool{}
	seen := map[string]int{} // stack -> its last row
	for i, r := range stacks {
		metrics[r["metric"]] = true
		k := key(r)
		if last, ok := seen[k]; ok && last != i-1 {
			t.Fatalf("row %d: stack %.60s… last seen at row %d, not adjacent", i, k, last)
		}
		seen[k] = i
	}
	if len(metrics) < 2 || len(seen) == len(stacks) {
		t.Fatalf("%d sample types, %d stacks in %d rows: no stack kept for two types", len(metrics), len(seen), len(stacks))
	}
	// The first type's kept stacks come heaviest first.
	var first []int64
	for _, r := range stacks {
		if r["metric"] == stacks[0]["metric"] {
			v := r["value"].(int64)
			first = append(first, -abs(v))
		}
	}
	if !slices.IsSorted(first) {
		t.Errorf("the first type's stacks are not heaviest first")
	}
}

// TestFrameIDsText: the ids frameIDs lays out in one buffer are
// "sha256:" and the hex of each node's digest, each over its own bytes.
func TestFrameIDsText(t *testing.T) {
	prof, err := profile.Parse(openFile(t, "../../profile/testdata/google-pprof__large.cpu.pb.gz"), profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := newExtraction(adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00"}, prof)
	ids := x.frameIDs()
	if len(ids) < 4096 {
		t.Fatalf("%d ids: too few to hash on two goroutines", len(ids))
	}
	for i, id := range ids {
		if want := digestID(x.digests[i]); id != want {
			t.Fatalf("id %d = %q, want %q", i, id, want)
		}
	}
}

// digestID is the id "sha256:<hex>" of a digest, formatted the plain way.
func digestID(d [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(d[:]) }

// TestNodeTableSame: the nodes copied into a nodeTable (a graph of
// flatNodes nodes or more) give the rows, row counts and limitations of
// the graph's own nodes, on pprof, perf-script and speedscope input.
func TestNodeTableSame(t *testing.T) {
	for _, name := range []string{"google-pprof__large.cpu.pb.gz", "parca__alloc_objects.pb.gz", "parca__profile-with-labels.pb.gz",
		"parca__fgprof.pb.gz", "speedscope__rust-mangled.linux-perf.txt", "self-driving-sim__py-spy-0.4.1.speedscope.json"} {
		t.Run(name, func(t *testing.T) {
			kept := sameExtraction(t, "../../profile/testdata/"+name, &flatNodes, "from copied nodes", "from the graph's")
			if len(kept["frames"]) == 0 {
				t.Fatal("no frames to compare")
			}
		})
	}
}

// TestNewNodeTable: every field of every node reads back from the copy,
// with system names apart from or equal to names, files shared by
// address or only by value, a substring of another file, and nodes
// without file, module or build id.
func TestNewNodeTable(t *testing.T) {
	file := "src/pkg/a.go"
	nodes := []profile.Node{
		{Name: "main", SystemName: "main", File: file, StartLine: 3, Module: "/bin/a", BuildID: "b1"},
		{Name: "f", SystemName: "_Z1fv", File: file, Module: "/bin/a", BuildID: "b1"},
		{Name: "g", File: string([]byte(file)), StartLine: 9, Module: "/lib/c.so"},
		{Name: "h", File: file[:7]},
		{Name: "[c.so]", Module: "/lib/c.so", Unsymbolized: true},
		{Name: "<unknown>", Unsymbolized: true},
		{Name: "", SystemName: "x"},
	}
	defer func(n int) { flatNodes = n }(flatNodes)
	for _, limit := range []int{1 << 30, 0} {
		flatNodes = limit
		tab := newNodeTable(nodes)
		if copied := tab.nodes == nil; copied != (limit == 0) {
			t.Fatalf("flatNodes %d: copied = %v", limit, copied)
		}
		if tab.len() != len(nodes) {
			t.Fatalf("len %d, want %d", tab.len(), len(nodes))
		}
		for i, n := range nodes {
			i := int32(i)
			got := profile.Node{Name: tab.nameOf(i), SystemName: tab.systemName(i), File: tab.fileOf(i), StartLine: tab.startLine(i),
				Module: tab.module(i), BuildID: tab.buildID(i), Unsymbolized: tab.unsymbolized(i)}
			if got != n {
				t.Errorf("flatNodes %d, node %d: %+v, want %+v", limit, i, got, n)
			}
		}
	}
}
