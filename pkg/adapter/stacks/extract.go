package stacks

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
	"slices"
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
	prof, err := profile.Parse(f, profile.Options{Limits: in.Limits})
	if err != nil {
		var pe *profile.ParseError
		if errors.As(err, &pe) && errors.Is(err, profile.ErrTooLarge) {
			return nil, tooLarge(err, in)
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

type extraction struct {
	in       adapter.ExtractInput
	prof     *profile.Profile
	p        *gprof.Profile
	g        *profile.Graph // until the write starts (nodes then)
	info     nodeTable      // the graph's nodes, from the write on
	nodes    aggTable       // key: node a in tp; entries in key order
	edges    aggTable       // key: caller a -> callee b in tp
	stacks   stackTable
	totals   map[[2]string][]int64 // (thread, process) -> total per type
	nsamples map[[2]string][]int64
	tps      [][2]string // thread/process pairs by index
	tpIndex  map[[2]string]int
	lim      []string
	digests  [][sha256.Size]byte // per node: the digest its frame id shows
	// Inline labels under the default sample type (see inlineLabels):
	// per edge entry, whether a sample with a value of that type has the
	// edge (1) and whether one reaches the callee by a call rather than
	// inlining (2); the signed sum of those samples' values.
	edgeInl []uint8
	inlSum  int64
}

func newExtraction(in adapter.ExtractInput, prof *profile.Profile) *extraction {
	g, p := profile.NewGraph(prof.P)
	nt := len(p.SampleType)
	return &extraction{in: in, prof: prof, p: p, g: g, nodes: newAggTable(nt), edges: newAggTable(nt),
		stacks: newStackTable(nt), totals: map[[2]string][]int64{}, nsamples: map[[2]string][]int64{},
		tpIndex: map[[2]string]int{}, lim: append([]string{}, prof.Limitations...)}
}

// aggregate applies pprof's rules per sample: flat for the leaf node, cum
// once per distinct node on the stack, an edge once per distinct
// (caller, callee) pair, and the exact stack.
//
// This loop runs once per stack frame of every sample (millions for a
// large profile), so its state is indexed, not hashed by struct: nodes in
// slices by node index, edges by a packed 64-bit key, and stacks by a
// 64-bit hash of their nodes (checked on a hit); each is stamped with the
// sample that last counted it.
func (x *extraction) aggregate(ctx context.Context) error {
	nt := len(x.p.SampleType)
	nn := len(x.g.Nodes)
	var (
		buf      []int
		seenNode = make([]uint32, nn)
		nodes    [][]int32    // [tp][node]: entry in x.nodes, -1 for none
		edges    []*edgeIndex // [tp][caller<<32|callee]: entry in x.edges
		seenEdge []uint32     // per edge entry
		gen      uint32
		ebuf     []int32  // per stack position j: the edge entry buf[j+1] -> buf[j]
		outer    []bool   // per stack position: the location's physical frame
		seenInl  []uint32 // per edge entry: the sample that last set edgeInl
		dt       = x.defaultType()
	)
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
			idx := make([]int32, nn)
			for n := range idx {
				idx[n] = -1
			}
			nodes = append(nodes, idx)
			edges = append(edges, newEdgeIndex())
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
		nidx, tedges := nodes[tpi], edges[tpi]
		for _, n := range buf { // every node on the stack has an entry
			if nidx[n] < 0 {
				nidx[n] = x.nodes.add(key{a: int32(n), tp: int32(tpi)})
			}
		}
		leaf := x.nodes.self(nidx[buf[0]])
		for t := 0; t < nt && t < len(s.Value); t++ {
			if v := s.Value[t]; v != 0 {
				leaf[t] += v
			}
		}
		h := uint64(14695981039346656037) ^ uint64(tpi) // FNV-1a over tp and the nodes, root first
		ebuf = ebuf[:0]
		for j, n := range buf {
			if seenNode[n] != gen {
				seenNode[n] = gen
				x.nodes.addValues(nidx[n], s.Value, c)
			}
			if j+1 < len(buf) {
				k := uint64(buf[j+1])<<32 | uint64(n) // caller -> callee
				e, ok := tedges.get(k)
				if !ok {
					e = x.edges.add(key{a: int32(buf[j+1]), b: int32(n), tp: int32(tpi)})
					tedges.put(k, e)
					seenEdge = append(seenEdge, 0)
				}
				if seenEdge[e] != gen {
					seenEdge[e] = gen
					x.edges.addValues(e, s.Value, c)
				}
				ebuf = append(ebuf, e)
			}
		}
		if dt < len(s.Value) && s.Value[dt] != 0 {
			// pprof's graph meets a sample's edges from the root, and the
			// first time it meets a pair decides the sample's say.
			outer = x.g.Outer(s, outer)
			for len(x.edgeInl) < x.edges.len() {
				x.edgeInl, seenInl = append(x.edgeInl, 0), append(seenInl, 0)
			}
			for j := len(ebuf) - 1; j >= 0; j-- {
				if e := ebuf[j]; buf[j] != buf[j+1] && seenInl[e] != gen {
					seenInl[e] = gen
					x.edgeInl[e] |= 1
					if outer[j] {
						x.edgeInl[e] |= 2
					}
				}
			}
			x.inlSum += s.Value[dt]
		}
		for j := len(buf) - 1; j >= 0; j-- {
			h = (h ^ uint64(buf[j])) * 1099511628211
		}
		st := x.stacks.find(h, int32(tpi), buf)
		if st < 0 {
			if x.stacks.len() >= maxStacks {
				continue
			}
			st = x.stacks.add(h, int32(tpi), buf)
		}
		value, count := x.stacks.value(st), x.stacks.count(st)
		for t := 0; t < nt && t < len(s.Value); t++ {
			if v := s.Value[t]; v != 0 {
				value[t] += v
				count[t] += c
			}
		}
	}
	x.stacks.head = nil // only aggregation looks stacks up
	if x.stacks.len() >= maxStacks {
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

// inlineLabels labels each node, under the default sample type, as `go
// tool pprof -top` does (profile.InlineEdges): an edge is inline when
// every sample with it reaches the callee by inlining, edges lighter than
// profile.EdgeFraction of the total are dropped, and a node is "inline"
// when all its remaining incoming edges are inline, "partial-inline" when
// some are. full says, per node, whether it is "inline"; into lists the
// callers each node is inlined into, sorted (see inlinedInto).
func (x *extraction) inlineLabels() (full []bool, into inlinedInto) {
	type pair struct{ a, b int32 }
	type agg struct {
		pair
		plain  bool
		weight int64
	}
	dt := x.defaultType()
	// One entry per caller -> callee pair, summed over threads/processes:
	// the edge entries themselves when there is one thread/process pair
	// (a deep profile has a million edges, and a map of them cost 0.3 s).
	var pairs []agg
	var at map[pair]int
	if len(x.tps) > 1 {
		at = map[pair]int{}
	}
	for e := range min(len(x.edgeInl), x.edges.len()) {
		bits := x.edgeInl[e]
		if bits&1 == 0 {
			continue
		}
		k := x.edges.keys[e]
		i := len(pairs)
		if at != nil {
			if j, ok := at[pair{k.a, k.b}]; ok {
				i = j
			} else {
				at[pair{k.a, k.b}] = i
			}
		}
		if i == len(pairs) {
			pairs = append(pairs, agg{pair: pair{k.a, k.b}})
		}
		p := &pairs[i]
		p.plain = p.plain || bits&2 != 0
		p.weight += x.edges.incl(int32(e))[dt]
	}
	n := x.info.len()
	full = make([]bool, n)
	plain := make([]bool, n)
	into.start = make([]int32, n+1)
	cutoff := abs(int64(float64(x.inlSum) * profile.EdgeFraction))
	kept := pairs[:0]
	for _, p := range pairs {
		if abs(p.weight) < cutoff {
			continue
		}
		if p.plain {
			plain[p.b] = true
		} else {
			full[p.b] = true
			into.start[p.b+1]++
			kept = append(kept, p)
		}
	}
	for i := range n {
		into.start[i+1] += into.start[i]
		if plain[i] {
			full[i] = false // partial-inline
		}
	}
	into.callers = make([]int32, into.start[n])
	next := slices.Clone(into.start[:n])
	for _, p := range kept {
		into.callers[next[p.b]] = p.a
		next[p.b]++
	}
	for i := range n {
		slices.Sort(into.of(i))
	}
	return full, into
}

// inlinedInto holds, per node, the callers it is inlined into: node i's
// are callers[start[i]:start[i+1]]. One slice for all rather than a slice
// per node: a 10^6-location profile's million slice headers were held
// while its frames were written.
type inlinedInto struct{ start, callers []int32 }

func (in inlinedInto) of(i int) []int32 { return in.callers[in.start[i]:in.start[i+1]] }

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
// frameIDs formats it.
func (x *extraction) frameDigest(h *hasher, n profile.Node) [sha256.Size]byte {
	parts := []string{"frame/v1", language(n), n.Name}
	if n.Unsymbolized {
		parts = append(parts, filepath.Base(n.Module), strconv.FormatInt(n.StartLine, 10), x.in.ArtifactID)
	}
	h.reset(parts...)
	var d [sha256.Size]byte
	h.h.Sum(d[:0])
	return d
}

// idPrefix starts every id: "sha256:<hex of the digest>".
const idPrefix = "sha256:"

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
// the bytes of the hex ids, which a large profile's stacks hashed many
// times over).
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

func language(n profile.Node) string { return languageOf(n.File) }

// languageOf is the language of a source file, by its extension.
func languageOf(file string) string {
	switch strings.ToLower(filepath.Ext(file)) {
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

// tooLarge is ARTIFACT_TOO_LARGE for a profile over one of the limits:
// details name the limit (limit_key, as config.toml spells it), its value
// and the count reached when decoding stopped (a lower bound of what the
// file holds), and the remedy says which key to raise.
func tooLarge(err error, in adapter.ExtractInput) *fault.Error {
	fe := fault.Wrap(fault.ArtifactTooLarge, err, "profile %s", in.ArtifactID).With("artifact_id", in.ArtifactID)
	le, ok := profile.AsLimit(err)
	if !ok {
		return fe.Fix("Raise limits.max_decompressed_bytes in .diagnostics/config.toml if this size is expected, then import the file again (`flameox import`).")
	}
	key := "limits." + le.Limit
	return fe.With("limit_key", key).With("limit", strconv.FormatInt(le.Max, 10)).
		With("observed", strconv.FormatInt(le.Observed, 10)).With("observed_is_lower_bound", "true").
		With("counted", le.What).
		Fix(fmt.Sprintf("If the file is genuine, raise %s in .diagnostics/config.toml above %d (the count reached when decoding stopped; the file may hold more), then import it again (`flameox import`, or the import_artifact MCP tool). The limit bounds the memory decoding may use.", key, le.Observed))
}
