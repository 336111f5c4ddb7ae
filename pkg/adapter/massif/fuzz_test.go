package massif

import (
	"bytes"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzParse: any input parses or fails without panicking, within small
// limits, and what parses is consistent: snapshots numbered in order, at
// most one peak, a tree whose root holds its snapshot's heap and whose
// nodes hold at least their children's bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(tiny))
	f.Add([]byte("desc: x\ncmd: y\ntime_unit: ms\n"))
	if b, err := os.ReadFile("testdata/massif-visualizer__massif.out.stack"); err == nil {
		f.Add(b)
	}
	lim := config.Limits{MaxDecompressedBytes: 1 << 20, MaxSamples: 1000, MaxLocations: 1000, MaxStringBytes: 1 << 16, MaxStackDepth: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(bytes.NewReader(data), lim)
		if err != nil {
			return
		}
		peaks := 0
		for i, s := range m.Snapshots {
			if s.Num != i {
				t.Fatalf("snapshot %d numbered %d", i, s.Num)
			}
			if s.HeapTree == "peak" {
				peaks++
			}
		}
		if peaks > 1 {
			t.Fatal("two peaks")
		}
		if len(m.Tree) > 0 {
			if m.Tree[0].Bytes != m.Snapshots[m.TreeOf].Heap {
				t.Fatal("root is not the heap")
			}
			child := make([]int64, len(m.Tree))
			for _, n := range m.Tree[1:] {
				child[n.Parent] += n.Bytes
			}
			for i, n := range m.Tree {
				if child[i] > n.Bytes {
					t.Fatalf("node %d holds less than its children", i)
				}
			}
			Profile(m)
		}
	})
}
