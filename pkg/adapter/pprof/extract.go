package pprof

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
	gprof "github.com/google/pprof/profile"
)

// maxStacks bounds the distinct stacks aggregated; keptStacks is how many
// of the heaviest are stored per sample type as representative examples
// (callers, callees and hotspots are always complete; examples of rarely
// sampled frames may need the native viewer).
const (
	maxStacks  = 1000000
	keptStacks = 5000
)

// Extract parses a profile and writes its evidence rows.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", in.ArtifactID)
	}
	defer f.Close()
	prof, err := profile.Parse(f, profile.Options{})
	if err != nil {
		var pe *profile.ParseError
		if errors.As(err, &pe) && errors.Is(err, profile.ErrTooLarge) {
			return nil, fault.Wrap(fault.ArtifactTooLarge, err, "profile %s", in.ArtifactID)
		}
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "profile %s", in.ArtifactID).With("artifact_id", in.ArtifactID)
	}
	x := newExtraction(in, prof)
	if err := x.aggregate(ctx); err != nil {
		return nil, err
	}
	x.release()
	return x.write(sink)
}

// key identifies an aggregate: a node (or an edge) in one thread and
// process (tp indexes extraction.tps).
type key struct {
	a, b int // node, or parent/child for edges
	tp   int
}

type agg struct {
	self, incl []int64 // per sample type
	count      []uint64
}

type extraction struct {
	in       adapter.ExtractInput
	prof     *profile.Profile
	p        *gprof.Profile
	g        *profile.Graph
	nodes    map[key]*agg
	edges    map[key]*agg
	stacks   map[string]*stackAgg
	totals   map[[2]string][]int64 // (thread, process) -> total per type
	nsamples map[[2]string][]int64
	tps      [][2]string // thread/process pairs by index
	tpIndex  map[[2]string]int
	lim      []string
	digests  [][sha256.Size]byte // per node: the digest its frame id shows
}

type stackAgg struct {
	nodes           []int // root first
	tp              int
	thread, process string
	value           []int64
	count           []uint64
}

func newExtraction(in adapter.ExtractInput, prof *profile.Profile) *extraction {
	g, p := profile.NewGraph(prof.P)
	return &extraction{in: in, prof: prof, p: p, g: g, nodes: map[key]*agg{}, edges: map[key]*agg{},
		stacks: map[string]*stackAgg{}, totals: map[[2]string][]int64{}, nsamples: map[[2]string][]int64{},
		tpIndex: map[[2]string]int{}, lim: append([]string{}, prof.Limitations...)}
}

func (x *extraction) get(m map[key]*agg, k key) *agg {
	a := m[k]
	if a == nil {
		n := len(x.p.SampleType)
		a = &agg{self: make([]int64, n), incl: make([]int64, n), count: make([]uint64, n)}
		m[k] = a
	}
	return a
}

// aggregate applies pprof's rules per sample: flat for the leaf node, cum
// once per distinct node on the stack, an edge once per distinct
// (caller, callee) pair, and the exact stack.
//
// This loop runs once per stack frame of every sample (millions for a
// large profile), so its state is indexed, not hashed by struct: nodes in
// slices by node index, edges by a packed 64-bit key, and stacks by a
// 64-bit hash of their nodes (checked on a hit); each is stamped with the
// sample that last counted it. The maps write.go reads are built once at
// the end.
func (x *extraction) aggregate(ctx context.Context) error {
	nt := len(x.p.SampleType)
	nn := len(x.g.Nodes)
	type edgeAgg struct {
		agg
		seen uint32
	}
	var (
		buf      []int
		seenNode = make([]uint32, nn)
		nodes    [][]*agg              // [tp][node]
		edges    []map[uint64]*edgeAgg // [tp][caller<<32|callee]
		stacks   = map[uint64][]*stackAgg{}
		nstacks  int
		gen      uint32
	)
	newAgg := func() agg {
		return agg{self: make([]int64, nt), incl: make([]int64, nt), count: make([]uint64, nt)}
	}
	for i, s := range x.p.Sample {
		if i%4096 == 0 && ctx.Err() != nil {
			return fault.Wrap(fault.ProcessCancelled, ctx.Err(), "extraction cancelled")
		}
		c := x.prof.Count(i) // samples this record stands for
		thread, process := profile.Labels(s)
		tp := [2]string{thread, process}
		tpi, ok := x.tpIndex[tp]
		if !ok {
			tpi = len(x.tps)
			x.tpIndex[tp] = tpi
			x.tps = append(x.tps, tp)
			x.totals[tp], x.nsamples[tp] = make([]int64, nt), make([]int64, nt)
			nodes = append(nodes, make([]*agg, nn))
			edges = append(edges, map[uint64]*edgeAgg{})
		}
		nonzero := false
		for t := 0; t < nt && t < len(s.Value); t++ {
			if v := s.Value[t]; v != 0 {
				x.totals[tp][t] += abs(v)
				x.nsamples[tp][t] += c
				nonzero = true
			}
		}
		if !nonzero || len(s.Location) == 0 {
			continue
		}
		buf = x.g.Stack(s, buf)
		gen++
		tnodes, tedges := nodes[tpi], edges[tpi]
		leaf := tnodes[buf[0]]
		if leaf == nil {
			a := newAgg()
			leaf = &a
			tnodes[buf[0]] = leaf
		}
		for t := 0; t < nt && t < len(s.Value); t++ {
			if v := s.Value[t]; v != 0 {
				leaf.self[t] += v
			}
		}
		h := uint64(14695981039346656037) ^ uint64(tpi) // FNV-1a over tp and the nodes, root first
		for j, n := range buf {
			if seenNode[n] != gen {
				seenNode[n] = gen
				a := tnodes[n]
				if a == nil {
					na := newAgg()
					a = &na
					tnodes[n] = a
				}
				addValues(a, s.Value, nt, c)
			}
			if j+1 < len(buf) {
				k := uint64(buf[j+1])<<32 | uint64(n) // caller -> callee
				e := tedges[k]
				if e == nil {
					e = &edgeAgg{agg: newAgg()}
					tedges[k] = e
				}
				if e.seen != gen {
					e.seen = gen
					addValues(&e.agg, s.Value, nt, c)
				}
			}
		}
		for j := len(buf) - 1; j >= 0; j-- {
			h = (h ^ uint64(buf[j])) * 1099511628211
		}
		var st *stackAgg
		for _, cand := range stacks[h] {
			if cand.tp == tpi && sameReversed(cand.nodes, buf) {
				st = cand
				break
			}
		}
		if st == nil {
			if nstacks >= maxStacks {
				continue
			}
			root := make([]int, len(buf))
			for j := range buf {
				root[j] = buf[len(buf)-1-j]
			}
			st = &stackAgg{nodes: root, tp: tpi, thread: thread, process: process, value: make([]int64, nt), count: make([]uint64, nt)}
			stacks[h] = append(stacks[h], st)
			nstacks++
		}
		for t := 0; t < nt && t < len(s.Value); t++ {
			if v := s.Value[t]; v != 0 {
				st.value[t] += v
				st.count[t] += uint64(c)
			}
		}
	}
	for tpi := range nodes {
		for n, a := range nodes[tpi] {
			if a != nil {
				x.nodes[key{a: n, tp: tpi}] = a
			}
		}
		for k, e := range edges[tpi] {
			x.edges[key{a: int(k >> 32), b: int(k & 0xffffffff), tp: tpi}] = &e.agg
		}
	}
	var sk []byte
	for _, list := range stacks {
		for _, st := range list {
			sk = strconv.AppendInt(sk[:0], int64(st.tp), 10)
			for _, n := range st.nodes {
				sk = strconv.AppendInt(append(sk, ';'), int64(n), 10)
			}
			x.stacks[string(sk)] = st
		}
	}
	if nstacks >= maxStacks {
		x.lim = append(x.lim, fmt.Sprintf("Only the first %d distinct stacks are kept as examples; hotspots, callers and callees are complete.", maxStacks))
	}
	return nil
}

// release drops what only aggregation needs (the samples, locations and
// the graph's location index), so the memory can be reused while the rows
// are written; the writers need only the nodes and the sample types.
func (x *extraction) release() {
	for _, p := range []*gprof.Profile{x.p, x.prof.P} {
		p.Sample, p.Location, p.Function, p.Mapping = nil, nil, nil, nil
	}
	x.prof.Counts = nil
	x.g.ReleaseLocations()
}

// sameReversed reports whether root (root first) is leafFirst reversed.
func sameReversed(root, leafFirst []int) bool {
	if len(root) != len(leafFirst) {
		return false
	}
	for j, n := range leafFirst {
		if root[len(root)-1-j] != n {
			return false
		}
	}
	return true
}

func addValues(a *agg, vals []int64, nt int, c int64) {
	for t := 0; t < nt && t < len(vals); t++ {
		if v := vals[t]; v != 0 {
			a.incl[t] += v
			a.count[t] += uint64(c)
		}
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// frameDigest names a node: named functions by language and name (stable
// across artifacts, as pprof merges them by name); unsymbolized nodes are
// local to their artifact.
//
// The id is "sha256:" + hex of SHA-256 over the fields joined by NUL
// bytes (fields never contain NUL): "frame/v1", language, name, and for
// unsymbolized nodes module base name, start line and artifact id. A plain
// hash is used instead of canonical JSON because profiles have tens of
// thousands of frames and stacks. frameDigest returns the SHA-256;
// digestID formats it.
func (x *extraction) frameDigest(n profile.Node) [sha256.Size]byte {
	parts := []string{"frame/v1", language(n), n.Name}
	if n.Unsymbolized {
		parts = append(parts, filepath.Base(n.Module), strconv.FormatInt(n.StartLine, 10), x.in.ArtifactID)
	}
	h := newHasher()
	h.reset(parts...)
	var d [sha256.Size]byte
	h.h.Sum(d[:0])
	return d
}

// digestID is the id "sha256:<hex>" of a digest.
func digestID(d [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(d[:]) }

// hashID is "sha256:" + hex(sha256(parts joined by NUL)).
func hashID(parts ...string) string {
	h := newHasher()
	h.reset(parts...)
	return h.id()
}

// hasher computes hashID incrementally, reusing its state: a stack's id
// hashes all its frame ids, for thousands of stacks.
type hasher struct {
	h   hash.Hash
	sum []byte
	hex []byte
	sep bool // the separator before the digests is written
}

func newHasher() *hasher { return &hasher{h: sha256.New()} }

// reset starts an id with parts, as hashID(parts...) would.
func (h *hasher) reset(parts ...string) {
	h.h.Reset()
	h.sep = false
	for i, p := range parts {
		if i > 0 {
			h.h.Write([]byte{0})
		}
		io.WriteString(h.h, p)
	}
}

// addDigest appends a digest's 32 bytes, with no separator: a stack id
// ("stack/v2") is SHA-256 over "stack/v2", artifact id, metric, thread and
// process joined by NUL bytes, then a NUL, then the binary digests of its
// frame ids, root first (fixed-length, so no separators are needed; half
// the bytes of the hex ids, which a large profile's 10,000 stacks hashed
// 18 MB of).
func (h *hasher) addDigest(d *[sha256.Size]byte) {
	if !h.sep {
		h.h.Write([]byte{0})
		h.sep = true
	}
	h.h.Write(d[:])
}

// id is hashID of the parts so far.
func (h *hasher) id() string {
	h.sum = h.h.Sum(h.sum[:0])
	h.hex = append(append(h.hex[:0], "sha256:"...), make([]byte, hex.EncodedLen(len(h.sum)))...)
	hex.Encode(h.hex[len("sha256:"):], h.sum)
	return string(h.hex)
}

func language(n profile.Node) string {
	switch strings.ToLower(filepath.Ext(n.File)) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".cxx", ".hpp":
		return "c++"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	case ".js", ".ts":
		return "javascript"
	}
	return ""
}

// sortedKeys orders aggregates deterministically (rows come out the same
// for the same input).
func sortedKeys(m map[key]*agg) []key {
	keys := make([]key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.a != b.a {
			return a.a < b.a
		}
		if a.b != b.b {
			return a.b < b.b
		}
		return a.tp < b.tp
	})
	return keys
}
