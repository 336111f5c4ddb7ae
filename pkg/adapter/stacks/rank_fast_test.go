package stacks

import (
	"cmp"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
)

// TestRankShortcutMatchesMerge: a profile whose frame ids are all distinct
// skips rank's merge of nodes that share an id; every table the extraction
// writes is the same as with the merge (alwaysMerge), on fixtures with and
// without shared ids.
func TestRankShortcutMatchesMerge(t *testing.T) {
	tables := []string{"frames", "frame_measurements", "measurements", "stacks", "call_edges"}
	for _, name := range []string{"google-pprof__sample.cpu.pb.gz", "parca__alloc_objects.pb.gz", "parca__fgprof.pb.gz",
		"parca__profile-with-labels.pb.gz", "speedscope__rust-mangled.linux-perf.txt", "self-driving-sim__py-spy-0.4.1.speedscope.json",
		"google-pprof/profile__java.cpu", "google-pprof/profile__go.crc32.cpu", "google-pprof__large.cpu.pb.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "profile", "testdata", name)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			extract := func(merge bool) map[string][]map[string]any {
				alwaysMerge = merge
				defer func() { alwaysMerge = false }()
				s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
				if _, err := (&Extractor{}).Extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: path}, s); err != nil {
					t.Fatal(err)
				}
				out := map[string][]map[string]any{}
				for _, tb := range tables {
					out[tb] = s.Rows(t, tb)
				}
				return out
			}
			short, merged := extract(false), extract(true)
			for _, tb := range tables {
				if len(merged[tb]) == 0 && tb != "call_edges" {
					t.Fatalf("%s: no rows", tb)
				}
				if !reflect.DeepEqual(short[tb], merged[tb]) {
					t.Errorf("%s differs between the shortcut (%d rows) and the merge (%d rows)", tb, len(short[tb]), len(merged[tb]))
				}
			}
		})
	}
}

// TestCanonicalNodes: frame ids matched by their digests' first 8 bytes
// give the canonical nodes the ids themselves give, also when two
// different digests share those bytes.
func TestCanonicalNodes(t *testing.T) {
	d := func(prefix, rest byte) (out [32]byte) {
		out[0], out[31] = prefix, rest
		return out
	}
	for name, digests := range map[string][][32]byte{
		"distinct":       {d(1, 0), d(2, 0), d(3, 0), d(4, 0)},
		"shared ids":     {d(1, 0), d(2, 0), d(1, 0), d(2, 0)},
		"prefix clashes": {d(1, 0), d(1, 1), d(1, 0), d(2, 0)},
	} {
		t.Run(name, func(t *testing.T) {
			ids := make([]string, len(digests))
			for i, g := range digests {
				ids[i] = digestID(g)
			}
			used := []bool{true, true, true, false}
			run := func(f func(*extraction, *ranking, []bool, []string) ([]int32, int)) ([]int32, int, []int32) {
				x := &extraction{digests: digests}
				r := &ranking{canon: make([]int32, len(ids)), index: make([]int32, len(ids))}
				c, n := f(x, r, used, ids)
				return c, n, r.canon
			}
			byID := func(_ *extraction, r *ranking, used []bool, ids []string) ([]int32, int) {
				c, n, _ := canonicalBy(r, used, func(i int) string { return ids[i] }, nil)
				return c, n
			}
			gc, gn, gcanon := run((*extraction).canonicalNodes)
			wc, wn, wcanon := run(byID)
			if !reflect.DeepEqual(gc, wc) || gn != wn || !reflect.DeepEqual(gcanon, wcanon) {
				t.Errorf("by prefix: %v %d %v; by id: %v %d %v", gc, gn, gcanon, wc, wn, wcanon)
			}
		})
	}
}

// TestSortNodes: the two-halves sort of a large node set is the one sort.
func TestSortNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 1000, 1 << 15, 1<<16 + 7} {
		keys := make([]uint64, n)
		nodes := make([]int32, n)
		for i := range nodes {
			keys[i], nodes[i] = rng.Uint64()%1000<<32|uint64(i), int32(i) // ties in the high bits
		}
		rng.Shuffle(n, func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		compare := func(a, b int32) int { return cmp.Compare(keys[a], keys[b]) }
		want := slices.Clone(nodes)
		slices.SortFunc(want, compare)
		sortNodes(nodes, compare)
		if !slices.Equal(nodes, want) {
			t.Errorf("%d nodes: the halves' sort differs", n)
		}
	}
}

// TestSortRankKeys: keys placed by tail (those without self) and sorted
// (the rest) come in rankKey.compare's order, with runs of one name, ties
// of self and inclusive values, a subset of the tails, and all or none of
// the keys without self.
func TestSortRankKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(n int) { minPlaced = n }(minPlaced)
	minPlaced = 0
	for _, tc := range []struct {
		n         int
		zeroShare float64
		nameRun   int
		keepShare float64
	}{{0, 0.5, 1, 1}, {1, 1, 1, 1}, {5000, 0.7, 3, 1}, {5000, 0.99, 1, 0.5}, {5000, 1, 4, 0.8}, {5000, 0, 2, 1}} {
		var keys []rankKey
		for tail := range tc.n {
			if rng.Float64() >= tc.keepShare {
				continue
			}
			k := rankKey{name: int32(tail / tc.nameRun), tail: int32(tail), incl: rng.Int64N(5), e: int32(len(keys))}
			if rng.Float64() >= tc.zeroShare {
				k.self = 1 + rng.Int64N(20)
			}
			keys = append(keys, k)
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		want := slices.Clone(keys)
		slices.SortFunc(want, rankKey.compare)
		sortRankKeys(keys, tc.n)
		if !slices.Equal(keys, want) {
			t.Errorf("%+v: placed by tail, the keys differ from a sort", tc)
		}
	}
}

// TestHeaviest: the heap's k heaviest are a stable sort's first k, ties
// included, for every k around the number of keys.
func TestHeaviest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 100, 5000} {
		weights := make([]int64, n)
		keys := make([]int32, n)
		for i := range keys {
			keys[i], weights[i] = int32(i), int64(rng.IntN(20)) // many ties
		}
		weight := func(i int32) int64 { return weights[i] }
		want := slices.Clone(keys)
		slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(weight(b), weight(a)) })
		for _, k := range []int{1, 5, n / 2, n - 1, n, n + 3} {
			if k < 1 {
				continue
			}
			got := heaviest(slices.Clone(keys), k, weight)
			if w := want[:min(k, n)]; !slices.Equal(got, w) {
				t.Fatalf("n %d, k %d: %v, want %v", n, k, got, w)
			}
		}
	}
}

// TestEdgeIndex: the edge index answers as a map does, across its growth.
func TestEdgeIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, want := newEdgeIndex(), map[uint64]int32{}
	for i := range 50_000 {
		k := uint64(rng.IntN(1<<20))<<32 | uint64(rng.IntN(1<<20))
		if i%7 == 0 {
			k = uint64(i) // dense keys too
		}
		got, ok := x.get(k)
		if w, wok := want[k]; ok != wok || got != w {
			t.Fatalf("get(%#x) = %d, %v; want %d, %v", k, got, ok, w, wok)
		}
		if !ok {
			x.put(k, int32(i))
			want[k] = int32(i)
		}
	}
	for k, w := range want {
		if got, ok := x.get(k); !ok || got != w {
			t.Fatalf("get(%#x) = %d, %v; want %d", k, got, ok, w)
		}
	}
}
