package heaptrack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity. ExtractorVersion 2: the leaked, allocations and
// temporary flame graphs are sample types of the stacks beside the peak
// one, and the massif export is the timeline (memory.snapshot.heap).
const (
	ExtractorName    = "heaptrack"
	ExtractorVersion = "2"
)

// adapterLimits are the limits Validate applies (the defaults).
var adapterLimits config.Limits

// Report options: how many entries heaptrack_print prints per section,
// and how many backtraces per entry.
const (
	peakLimit    = 20
	subPeakLimit = 5
	reportLimit  = 64 << 20
	printTimeout = 10 * time.Minute
)

func (*Adapter) Version() string { return ExtractorVersion }

// Strict: a file Accepts recognised by heaptrack's version record and
// Extract refuses is a broken heaptrack file.
func (*Adapter) Strict() bool { return true }

// ArtifactKind: an import that names no kind registers heaptrack files as
// memory profiles.
func (*Adapter) ArtifactKind() string { return KindMemory }

// Accepts decides by content: gzip or zstd (or no compression) around a
// stream whose first record is heaptrack's "v TOOL FORMAT" line.
func (*Adapter) Accepts(in adapter.ExtractInput) bool {
	if validHeader(in.Head) {
		return true
	}
	if len(in.Head) > 0 && !bytes.HasPrefix(in.Head, gzipMagic) && !bytes.HasPrefix(in.Head, zstdMagic) {
		return false
	}
	if Sniff(in.Head) {
		return true
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	r, done, err := open(f)
	if err != nil {
		return false
	}
	defer done()
	b := make([]byte, 32)
	n, err := io.ReadFull(r, b)
	if n == 0 && err != nil && !errors.Is(err, io.EOF) {
		// A compressed file too short to yield its first block (a zstd
		// capture cut off early) cannot be told apart by content; it is
		// claimed so that the import names what is wrong with it.
		return true
	}
	return validHeader(b[:n])
}

// Extract checks the file's envelope while heaptrack_print runs on it
// through the broker, and writes the summary as measurements, the flame
// graphs as frames and stacks and the massif export as the timeline.
func (a *Adapter) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type envelope struct {
		header string
		err    error
	}
	envc := make(chan envelope, 1)
	go func() {
		h, err := Envelope(in.Path, in.Limits)
		if err != nil {
			cancel() // heaptrack_print's output of a broken file is not used
		}
		envc <- envelope{h, err}
	}()
	ev, err := a.Evidence(ctx, in.Path, in.Limits)
	env := <-envc
	if env.err != nil {
		if errors.Is(env.err, ErrEnvelope) {
			return nil, parseFault(env.err, in)
		}
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, env.err, "open %s", in.ArtifactID)
	}
	if err != nil {
		return nil, err
	}
	rep := ev.Report
	exact := exactPeak(rep, ev.Flame)
	w := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	if err := writeSummary(w, rep, env.header, exact); err != nil {
		return nil, err
	}
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion,
		Rows: map[string]int64{}, Limitations: limitations(ev, exact)}
	if ev.Timeline != nil {
		lim, err := writeTimeline(w, ev.Timeline, env.header)
		if err != nil {
			return nil, err
		}
		res.Limitations = append(res.Limitations, lim...)
	}
	if err := stackRows(ctx, ev.Flame, in, sink, res); err != nil {
		return nil, err
	}
	res.Rows["measurements"] += w.N
	return res, nil
}

// Evidence is what heaptrack_print wrote for one file.
type Evidence struct {
	Report *Report
	// Flame holds the flame graphs of every cost type read (CostPeak and
	// CostLeaked always; CostAllocs and CostTemporary unless Skipped says
	// why not), merged by backtrace.
	Flame *FlameGraphs
	// Timeline is the massif export, nil when Skipped says why.
	Timeline *Timeline
	// Skipped says which outputs were not asked for or could not be
	// read, and why (limitations).
	Skipped []string
}

// Bounds of the outputs that cost heaptrack_print another pass over the
// file, decided from the first pass's output so that they are the same on
// every machine:
//   - countFlameBytes: the count cost types (allocations, temporary) are
//     read when the peak flame graph is at most this large. Each is a
//     whole heaptrack_print run, and heaptrack_print's time is mostly
//     writing the flame graph, so this bounds what they add.
//   - massifWork: the massif export is read when calls to allocation
//     functions times backtraces is at most this. heaptrack_print copies
//     its table of every backtrace's costs at each new high of the heap
//     while it writes the export (heaptrack_print.cpp, handleAllocation),
//     so its time grows with that product, not with the file.
const (
	countFlameBytes = 16 << 20
	massifWork      = 250_000_000
)

// Evidence runs heaptrack_print on path (no envelope check): the report
// and the peak flame graph in one run and, at the same time, the leaked
// flame graph; then, where the bounds above allow, the allocations and
// temporary flame graphs and the massif export, at the same time.
// heaptrack_print writes one flame graph (one cost type) per run, hence
// the runs.
func (a *Adapter) Evidence(ctx context.Context, path string, lim config.Limits) (*Evidence, error) {
	exe := a.look("heaptrack_print")
	if exe == "" {
		return nil, fault.New(fault.CapabilityUnavailable, "heaptrack_print is not installed: flameox reads heaptrack files only through it (the data format is private to heaptrack)").
			Fix(installRemedy)
	}
	named, cleanup, err := nameByContent(path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "prepare %s for heaptrack_print", path)
	}
	defer cleanup()
	dir := filepath.Dir(named)
	flamePath := func(c Cost) string { return filepath.Join(dir, c.Flag+".stacks") }
	quiet := []string{exe, "--file", named, "--print-peaks=0", "--print-allocators=0", "--print-temporary=0", "--print-leaks=0"}
	flameRun := func(c Cost) []string {
		return append(slices.Clone(quiet), "--flamegraph-cost-type", c.Flag, "--print-flamegraph", flamePath(c))
	}
	ctx, cancel := context.WithCancel(ctx)
	var runs []*printRun
	start := func(argv []string, limit int64) *printRun {
		r := a.start(ctx, argv, limit)
		runs = append(runs, r)
		return r
	}
	defer func() { // before cleanup removes their files
		cancel()
		for _, r := range runs {
			r.wait()
		}
	}()
	main := start(append(PrintArgv(exe, named), "--flamegraph-cost-type", CostPeak.Flag, "--print-flamegraph", flamePath(CostPeak)), reportLimit)
	leaked := start(flameRun(CostLeaked), 1<<20)
	out, err := main.wait()
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print %s", path)
	}
	rep, err := ParseReport(bytes.NewReader(out), lim)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print's report of %s", path)
	}
	ev := &Evidence{Report: rep}
	costs := []Cost{CostPeak, CostLeaked}
	fi, err := os.Stat(flamePath(CostPeak))
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print wrote no flame-graph file for %s", path)
	}
	counts := fi.Size() <= countFlameBytes
	var more []*printRun
	if counts {
		costs = append(costs, CostAllocs, CostTemporary)
		more = append(more, start(flameRun(CostAllocs), 1<<20), start(flameRun(CostTemporary), 1<<20))
	} else {
		ev.Skipped = append(ev.Skipped, fmt.Sprintf("no %s or %s stacks: heaptrack_print's peak flame graph of this file is %d bytes, over the %d for which flameox runs heaptrack_print twice more (once per cost type); `heaptrack_print --flamegraph-cost-type allocations -F OUT FILE` writes them",
			CostAllocs.SampleType, CostTemporary.SampleType, fi.Size(), countFlameBytes))
	}
	ev.Flame = NewFlameGraphs(costs, lim)
	if err := readFlame(ev.Flame, 0, flamePath(CostPeak)); err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print's peak flame graph of %s", path)
	}
	var massifRun *printRun
	massifOut := filepath.Join(dir, "heaptrack.massif")
	if calls, traces := *rep.Summary.Allocations, ev.Flame.Lines[0]; calls <= massifWork && traces <= massifWork && calls*traces <= massifWork {
		massifRun = start(append(slices.Clone(quiet), "--massif-detailed-freq", "0", "--print-massif", massifOut), 1<<20)
	} else {
		ev.Skipped = append(ev.Skipped, fmt.Sprintf("no timeline (memory.snapshot.heap): heaptrack_print's massif export takes time in proportion to calls to allocation functions times backtraces, %d × %d for this file, over the %d flameox allows; `heaptrack_print --print-massif OUT FILE` writes it",
			*rep.Summary.Allocations, ev.Flame.Lines[0], int64(massifWork)))
	}
	for i, r := range append([]*printRun{leaked}, more...) {
		c := costs[i+1]
		if _, err := r.wait(); err != nil {
			return nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print --flamegraph-cost-type %s %s", c.Flag, path)
		}
		if err := readFlame(ev.Flame, i+1, flamePath(c)); err != nil {
			return nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print's %s flame graph of %s", c.Flag, path)
		}
	}
	if massifRun != nil {
		// The timeline is the one output whose failure leaves the rest
		// whole: heaptrack_print's massif export is its least used (see
		// ParseTimeline), so a file it cannot write, or one over the
		// limits, is a limitation rather than a refused import.
		if ev.Timeline, err = readTimeline(massifRun, massifOut, lim); err != nil {
			ev.Skipped = append(ev.Skipped, "no timeline (memory.snapshot.heap): "+err.Error())
		}
	}
	return ev, nil
}

func readTimeline(r *printRun, path string, lim config.Limits) (*Timeline, error) {
	if _, err := r.wait(); err != nil {
		return nil, fmt.Errorf("heaptrack_print --print-massif: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("heaptrack_print wrote no massif export: %w", err)
	}
	defer f.Close()
	return ParseTimeline(f, lim)
}

func readFlame(g *FlameGraphs, col int, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return g.Read(col, f)
}

// printRun is a heaptrack_print started in the background.
type printRun struct {
	out  []byte
	err  error
	done chan struct{}
}

func (a *Adapter) start(ctx context.Context, argv []string, limit int64) *printRun {
	r := &printRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.out, r.err = a.Sys.Output(ctx, argv, limit, printTimeout)
	}()
	return r
}

func (r *printRun) wait() ([]byte, error) {
	<-r.done
	return r.out, r.err
}

// nameByContent returns a path to the file that heaptrack_print reads
// as what it is: heaptrack_print chooses gzip or zstd decompression by
// the file name's suffix, and a stored payload (or a file imported under
// another name) has none, so a symbolic link with the suffix its
// compression magic calls for is made in a temporary directory.
func nameByContent(path string) (string, func(), error) {
	head, err := readHead(path, 4)
	if err != nil {
		return "", nil, err
	}
	suffix := ""
	switch {
	case bytes.HasPrefix(head, zstdMagic):
		suffix = ".zst"
	case bytes.HasPrefix(head, gzipMagic):
		suffix = ".gz"
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "flameox-heaptrack-")
	if err != nil {
		return "", nil, err
	}
	link := filepath.Join(dir, "heaptrack.data"+suffix)
	if err := os.Symlink(abs, link); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return link, func() { os.RemoveAll(dir) }, nil
}

// PrintArgv is the heaptrack_print command flameox runs on a file.
func PrintArgv(exe, path string) []string {
	return []string{exe, "--file", path, "--print-peaks=1", "--print-allocators=1", "--print-temporary=1", "--print-leaks=1",
		"--peak-limit=" + strconv.Itoa(peakLimit), "--sub-peak-limit=" + strconv.Itoa(subPeakLimit)}
}

func parseFault(err error, in adapter.ExtractInput) *fault.Error {
	fe := fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack file %s", in.ArtifactID)
	if in.ArtifactID != "" {
		fe = fe.With("artifact_id", in.ArtifactID)
	}
	return fe
}

// Measurement names.
const (
	MetricPeakHeap  = "memory.peak_heap"
	MetricLeaked    = "memory.leaked"
	MetricAllocs    = "memory.allocations"
	MetricTemporary = "memory.temporary_allocations"
	MetricPeakRSS   = "memory.peak_rss"
)

// exactPeak returns the sum of the peak stacks' bytes when it is what
// the summary's rounded peak heap says (heaptrack's peak costs are the
// bytes each backtrace held at the peak, so they add up to it), else nil.
func exactPeak(rep *Report, g *FlameGraphs) *int64 {
	sum := g.Total(0)
	if rep.Summary.PeakHeap == nil || FormatBytes(sum) != rep.Summary.Text["peak_heap"] {
		return nil
	}
	return &sum
}

func writeSummary(w *adapter.Measurements, rep *Report, header string, exact *int64) error {
	s := rep.Summary
	if exact != nil {
		s.PeakHeap = exact
	}
	rows := []struct {
		name, unit, agg, key string
		v                    *int64
	}{
		{MetricPeakHeap, "bytes", "max", "peak_heap", s.PeakHeap},
		{MetricLeaked, "bytes", "value", "leaked", s.Leaked},
		{MetricAllocs, "count", "sum", "allocations", s.Allocations},
		{MetricTemporary, "count", "sum", "temporary_allocations", s.TemporaryAllocations},
		{MetricPeakRSS, "bytes", "max", "peak_rss", s.PeakRSS},
	}
	for _, r := range rows {
		if r.v == nil {
			continue
		}
		id, err := digest.Of(map[string]any{"run_id": w.RunID, "artifact_id": w.ArtifactID, "name": r.name})
		if err != nil {
			return err
		}
		v := *r.v
		dims := map[string]string{"source": "heaptrack_print", "printed": s.Text[r.key], "heaptrack_header": header}
		if r.unit == "bytes" {
			prec := Precision(s.Text[r.key])
			if r.name == MetricPeakHeap && exact != nil {
				prec = 0
				dims["source"] = "heaptrack_print flame graph (peak cost), summed"
			}
			dims["precision_bytes"] = strconv.FormatInt(prec, 10)
		}
		if r.name == MetricPeakRSS {
			dims["includes_collector"] = "true"
		}
		if err := w.Write(schema.Measurement{ID: id, Name: r.name, Int: &v, Unit: r.unit, Aggregation: r.agg,
			Scope: "process", Subject: rep.Debuggee, Dimensions: dims}); err != nil {
			return err
		}
	}
	return nil
}

func limitations(ev *Evidence, exact *int64) []string {
	rep := ev.Report
	var types []string
	for _, c := range ev.Flame.Costs {
		types = append(types, c.SampleType+" ("+c.Flag+")")
	}
	lim := []string{
		"read through heaptrack_print (heaptrack's data format is private): byte figures are its rounded ones (two decimals, 1000-based units above 1000 B); dimensions.printed keeps the text and dimensions.precision_bytes the bound",
		"frames and stacks are heaptrack_print's flame graphs, exact, one sample type per cost type: " + strings.Join(types, ", ") + "; " + SampleType + " (the bytes each backtrace held at the peak) is the default, retained_space the bytes not freed at exit (leaks heaptrack's suppressions matched excluded), alloc_objects the calls to allocation functions, temporary_objects the allocations freed right away",
		"memory.peak_rss includes heaptrack's own overhead (dimensions.includes_collector)",
		"memory.leaked excludes the leaks heaptrack's suppressions matched",
	}
	if exact != nil {
		lim = append(lim, "memory.peak_heap is exact: the sum of the peak stacks, which heaptrack_print's rounded summary agrees with")
	}
	if rep.Summary.PeakRSS == nil {
		lim = append(lim, "heaptrack_print reported no peak RSS for this file")
	}
	return append(lim, ev.Skipped...)
}

var (
	_ adapter.Extractor = (*Adapter)(nil)
	_ adapter.Strict    = (*Adapter)(nil)
	_ adapter.Kinded    = (*Adapter)(nil)
)
