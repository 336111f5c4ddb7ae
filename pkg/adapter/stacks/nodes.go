package stacks

import (
	"math"
	"unsafe"

	"github.com/flameox/flameox/pkg/profile"
)

// nodeTable is what the ranking and the frames table read of the graph's
// nodes. A large graph's nodes are copied into it without pointers, and
// the graph is dropped before the write starts.
//
// Why: the collector scans every pointer of the live heap in every cycle,
// and a 10^6-node graph is 10^6 Node structs of five strings each. While
// it lived, through the ranking and the frames table, each cycle of a
// deep 10^6-location import cost 80–100 ms of CPU; once it was dropped,
// 10–30 ms (docs/performance.md, "Profiles with 10^6 locations"). Strings
// here are views into one byte slice, and the module and build id (a
// profile has few mappings) indices into small dictionaries.
type nodeTable struct {
	nodes []profile.Node // a small graph's own nodes (or one whose text is over 4 GiB); nil when copied
	text  []byte
	name  []span
	sys   []span // sys[i] == name[i] when they are the same string
	file  []span
	mod   []int32 // index into mods, -1 for none
	build []int32 // index into bids, -1 for none
	mods  []string
	bids  []string
	start []int64
	unsym []bool
}

// span is a string of nodeTable.text.
type span struct{ off, n uint32 }

// flatNodes is the fewest nodes that newNodeTable copies (a variable for
// tests).
var flatNodes = 1 << 14

// newNodeTable copies nodes when there are flatNodes or more, else keeps
// them.
func newNodeTable(nodes []profile.Node) nodeTable {
	if len(nodes) < flatNodes {
		return nodeTable{nodes: nodes}
	}
	size := 0
	for i := range nodes {
		n := &nodes[i]
		size += len(n.Name) + len(n.File)
		if n.SystemName != n.Name {
			size += len(n.SystemName)
		}
	}
	if size > math.MaxUint32 {
		return nodeTable{nodes: nodes}
	}
	t := nodeTable{
		text: make([]byte, 0, size),
		name: make([]span, len(nodes)), sys: make([]span, len(nodes)), file: make([]span, len(nodes)),
		mod: make([]int32, len(nodes)), build: make([]int32, len(nodes)),
		start: make([]int64, len(nodes)), unsym: make([]bool, len(nodes)),
	}
	add := func(s string) span {
		sp := span{off: uint32(len(t.text)), n: uint32(len(s))}
		t.text = append(t.text, s...)
		return sp
	}
	// Files, modules and build ids repeat across nodes: each distinct one
	// is held once. The graph's strings for one file are most often one
	// string (pprof decodes each string-table entry once), so they are
	// matched by their bytes' address first.
	files := map[*byte]span{}
	mods, bids := map[string]int32{}, map[string]int32{}
	index := func(m map[string]int32, dict *[]string, s string) int32 {
		if s == "" {
			return -1
		}
		k, ok := m[s]
		if !ok {
			k = int32(len(*dict))
			m[s] = k
			*dict = append(*dict, s)
		}
		return k
	}
	for i := range nodes {
		n := &nodes[i]
		t.name[i] = add(n.Name)
		if n.SystemName == n.Name {
			t.sys[i] = t.name[i]
		} else {
			t.sys[i] = add(n.SystemName)
		}
		if n.File != "" {
			sp, ok := files[unsafe.StringData(n.File)]
			if !ok || sp.n != uint32(len(n.File)) {
				sp = add(n.File)
				files[unsafe.StringData(n.File)] = sp
			}
			t.file[i] = sp
		}
		t.mod[i], t.build[i] = index(mods, &t.mods, n.Module), index(bids, &t.bids, n.BuildID)
		t.start[i], t.unsym[i] = n.StartLine, n.Unsymbolized
	}
	return t
}

func (t *nodeTable) len() int {
	if t.nodes != nil {
		return len(t.nodes)
	}
	return len(t.name)
}

func (t *nodeTable) str(s span) string {
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&t.text[s.off], int(s.n)) // text is never written after newNodeTable
}

func (t *nodeTable) nameOf(i int32) string {
	if t.nodes != nil {
		return t.nodes[i].Name
	}
	return t.str(t.name[i])
}

func (t *nodeTable) systemName(i int32) string {
	if t.nodes != nil {
		return t.nodes[i].SystemName
	}
	return t.str(t.sys[i])
}

func (t *nodeTable) fileOf(i int32) string {
	if t.nodes != nil {
		return t.nodes[i].File
	}
	return t.str(t.file[i])
}

func (t *nodeTable) module(i int32) string {
	if t.nodes != nil {
		return t.nodes[i].Module
	}
	if k := t.mod[i]; k >= 0 {
		return t.mods[k]
	}
	return ""
}

func (t *nodeTable) buildID(i int32) string {
	if t.nodes != nil {
		return t.nodes[i].BuildID
	}
	if k := t.build[i]; k >= 0 {
		return t.bids[k]
	}
	return ""
}

func (t *nodeTable) startLine(i int32) int64 {
	if t.nodes != nil {
		return t.nodes[i].StartLine
	}
	return t.start[i]
}

func (t *nodeTable) unsymbolized(i int32) bool {
	if t.nodes != nil {
		return t.nodes[i].Unsymbolized
	}
	return t.unsym[i]
}
