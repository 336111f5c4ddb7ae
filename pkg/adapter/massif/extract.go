package massif

import (
	"bufio"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/stacks"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	gprof "github.com/google/pprof/profile"
)

// Extractor identity.
const (
	ExtractorName    = "massif"
	ExtractorVersion = "1"
	// KindMemory is the artifact kind of massif files.
	KindMemory = "memory_profile"
	// SampleType names the peak tree's bytes in frames and stacks, as Go
	// heap profiles name live bytes.
	SampleType = "inuse_space"
)

// Extractor reads massif.out files into measurements (the peak, the
// retained end, every snapshot) and the peak snapshot's allocation tree
// into frames, frame_measurements, call_edges and stacks.
type Extractor struct{}

// NewExtractor returns the massif extractor.
func NewExtractor() *Extractor { return &Extractor{} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Strict: a file whose header is massif's and that does not parse is a
// broken massif file; publication fails rather than skipping it.
func (*Extractor) Strict() bool { return true }

// ArtifactKind: an import of a massif file that names no kind registers
// it as a memory profile.
func (*Extractor) ArtifactKind() string { return KindMemory }

// Accepts decides by content, never by name: the desc:, cmd: and
// time_unit: header massif writes first, looked for through bzip2.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	h := in.Head
	if len(h) == 0 { // a caller that only names the file (the viewer's)
		h, _ = readHead(in.Path, 4096)
	}
	if LooksMassif(h) {
		return true
	}
	if !IsBzip2(h) {
		return false
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(bzip2.NewReader(bufio.NewReader(f)), head)
	return LooksMassif(head[:n])
}

// Extract parses the file and writes its rows.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", in.ArtifactID)
	}
	defer f.Close()
	m, err := Parse(f, in.Limits)
	if err != nil {
		return nil, parseFault(err, in.ArtifactID)
	}
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion, Rows: map[string]int64{},
		Limitations: []string{"massif samples the heap at snapshots: a peak between two snapshots is missed unless massif marked it (--peak-inaccuracy); only detailed snapshots have allocation trees, and only the peak snapshot's tree is stored as stacks (ms_print shows the others)"}}
	if err := measurements(m, in, sink, res); err != nil {
		return nil, err
	}
	if len(m.Tree) > 1 {
		if err := treeRows(ctx, m, in, sink, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// parseFault is ARTIFACT_PARSE_FAILED (ARTIFACT_TOO_LARGE over a limit)
// with the parser's reason.
func parseFault(err error, artifactID string) *fault.Error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Limit != "" {
		key := "limits." + pe.Limit
		return fault.Wrap(fault.ArtifactTooLarge, err, "massif file %s", artifactID).With("artifact_id", artifactID).
			With("limit_key", key).With("limit", strconv.FormatInt(pe.Max, 10)).With("observed", strconv.FormatInt(pe.Observed, 10)).
			Fix(fmt.Sprintf("If the file is genuine, raise %s in .diagnostics/config.toml, then import it again (`flameox import`).", key))
	}
	fe := fault.Wrap(fault.ArtifactParseFailed, err, "massif file %s", artifactID).With("artifact_id", artifactID)
	if pe != nil {
		fe = fe.With("reason", pe.Reason)
		if pe.Line > 0 {
			fe = fe.With("line", strconv.Itoa(pe.Line))
		}
	}
	return fe.Fix("Check that the file is a complete massif.out written by `valgrind --tool=massif` (plain or bzip2); ms_print FILE reads the same format.")
}

func measurements(m *File, in adapter.ExtractInput, sink adapter.Sink, res *adapter.Extraction) error {
	mw := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	write := func(name string, v int64, agg, subject string, idx *int32, dims map[string]string) error {
		id := digest.Bytes([]byte("measurement/v1\x00" + in.RunID + "\x00" + in.ArtifactID + "\x00" + name + "\x00" + subject))
		dims["collector"] = "massif"
		return mw.Write(schema.Measurement{ID: id, Name: name, Int: &v, Unit: "bytes", Aggregation: agg, Scope: "process",
			Subject: subject, ValueIndex: idx, Dimensions: dims})
	}
	peak := m.Peak
	if peak < 0 { // no peak marked: the largest total, as ms_print draws it
		peak = 0
		for i, s := range m.Snapshots {
			if s.Total() > m.Snapshots[peak].Total() {
				peak = i
			}
		}
	}
	p := m.Snapshots[peak]
	for _, s := range m.Snapshots {
		if s.Total() > p.Total() {
			res.Limitations = append(res.Limitations, fmt.Sprintf("snapshot %d holds more (%d bytes in all) than the peak massif marked (snapshot %d, %d bytes): massif marks a peak only when the heap shrinks, so memory still held at exit can exceed it; the memory.snapshot.* rows hold every snapshot", s.Num, s.Total(), p.Num, p.Total()))
			break
		}
	}
	pd := func() map[string]string {
		return map[string]string{"snapshot": strconv.Itoa(p.Num), "time": strconv.FormatInt(p.Time, 10), "time_unit": m.TimeUnit}
	}
	last := m.Snapshots[len(m.Snapshots)-1]
	for _, r := range []struct {
		name string
		v    int64
	}{{"memory.peak_heap", p.Heap + p.HeapExtra}, {"memory.peak_heap.useful", p.Heap}, {"memory.peak_heap.extra", p.HeapExtra},
		{"memory.peak_stacks", p.Stacks}, {"memory.peak_total", p.Total()}} {
		if err := write(r.name, r.v, "max", "", nil, pd()); err != nil {
			return err
		}
	}
	ld := map[string]string{"snapshot": strconv.Itoa(last.Num), "time": strconv.FormatInt(last.Time, 10), "time_unit": m.TimeUnit}
	if err := write("memory.retained_end", last.Heap, "value", "", nil, ld); err != nil {
		return err
	}
	for _, s := range m.Snapshots {
		idx := int32(s.Num)
		for _, r := range []struct {
			name string
			v    int64
		}{{"memory.snapshot.heap", s.Heap}, {"memory.snapshot.heap_extra", s.HeapExtra}, {"memory.snapshot.stacks", s.Stacks}} {
			d := map[string]string{"snapshot": strconv.Itoa(s.Num), "time": strconv.FormatInt(s.Time, 10), "time_unit": m.TimeUnit, "heap_tree": s.HeapTree}
			if err := write(r.name, r.v, "value", "snapshot "+strconv.Itoa(s.Num), &idx, d); err != nil {
				return err
			}
		}
	}
	res.Rows["measurements"] += mw.N
	return nil
}

// treeRows turns the peak tree into a heap profile (one sample per node
// with bytes of its own, its stack up to the allocation functions) and
// hands it to the profile extractor, so that hotspots, callers and stacks
// read massif's bytes exactly as they read a Go heap profile's.
func treeRows(ctx context.Context, m *File, in adapter.ExtractInput, sink adapter.Sink, res *adapter.Extraction) error {
	p := Profile(m)
	tmp, err := os.CreateTemp("", "flameox-massif-*.pb.gz")
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "massif tree of %s", in.ArtifactID)
	}
	defer os.Remove(tmp.Name())
	err = p.Write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "massif tree of %s", in.ArtifactID)
	}
	sub := in
	sub.Path = tmp.Name()
	sub.Head, err = readHead(tmp.Name(), 64<<10)
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "massif tree of %s", in.ArtifactID)
	}
	x, err := stacks.NewExtractor().Extract(ctx, sub, sink)
	if err != nil {
		return err
	}
	for k, v := range x.Rows {
		res.Rows[k] += v
	}
	res.Limitations = append(res.Limitations, x.Limitations...)
	return nil
}

func readHead(path string, size int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	n, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:n], err
}

// Profile is the tree of m's peak snapshot as a pprof heap profile.
// massif's tree is inverted: the root's children are the functions that
// called malloc, their children those functions' callers, out to main.
// Each node holding bytes its children do not (a leaf, or a chain cut at
// --depth) is a sample whose stack runs from the allocating function
// (pprof's leaf, Location[0]) out to that node, so the samples sum to
// the snapshot's mem_heap_B and flat bytes are what a function
// allocated itself.
func Profile(m *File) *gprof.Profile {
	p := &gprof.Profile{SampleType: []*gprof.ValueType{{Type: SampleType, Unit: "bytes"}}, DefaultSampleType: SampleType,
		PeriodType: &gprof.ValueType{Type: "space", Unit: "bytes"}, Period: 1}
	type fkey struct{ name, file string }
	type lkey struct {
		name, file string
		line       int64
	}
	funcs, locs := map[fkey]*gprof.Function{}, map[lkey]*gprof.Location{}
	loc := make([]*gprof.Location, len(m.Tree))
	child := make([]int64, len(m.Tree))
	for i, n := range m.Tree {
		if n.Parent >= 0 {
			child[n.Parent] += n.Bytes
		}
		name := n.Function
		if name == "???" && n.Module != "" {
			name = "??? (" + filepath.Base(n.Module) + ")"
		}
		fk := fkey{name, n.File}
		fn := funcs[fk]
		if fn == nil {
			fn = &gprof.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name, Filename: n.File}
			funcs[fk] = fn
			p.Function = append(p.Function, fn)
		}
		lk := lkey{name, n.File, n.Line}
		l := locs[lk]
		if l == nil {
			l = &gprof.Location{ID: uint64(len(locs) + 1), Line: []gprof.Line{{Function: fn, Line: n.Line}}}
			locs[lk] = l
			p.Location = append(p.Location, l)
		}
		loc[i] = l
	}
	for i, n := range m.Tree {
		self := n.Bytes - child[i]
		if self <= 0 {
			continue
		}
		var st []*gprof.Location
		for j := int32(i); j >= 0; j = m.Tree[j].Parent {
			if j == 0 && i != 0 {
				break // the root is massif's name for the allocation functions
			}
			st = append(st, loc[j])
		}
		slices.Reverse(st) // massif's tree starts at the allocating function: pprof's leaf
		p.Sample = append(p.Sample, &gprof.Sample{Location: st, Value: []int64{self}})
	}
	return p
}
