package heaptrack

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity.
const (
	ExtractorName    = "heaptrack"
	ExtractorVersion = "1"
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

// Extract checks the file's envelope, runs heaptrack_print on it through
// the broker and writes the summary as measurements.
func (a *Adapter) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	header, err := Envelope(in.Path, in.Limits)
	if err != nil {
		if errors.Is(err, ErrEnvelope) {
			return nil, parseFault(err, in)
		}
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", in.ArtifactID)
	}
	rep, ps, err := a.Report(ctx, in.Path, in.Limits)
	if err != nil {
		return nil, err
	}
	exact := exactPeak(rep, ps)
	w := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	if err := writeSummary(w, rep, header, exact); err != nil {
		return nil, err
	}
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion,
		Rows: map[string]int64{}, Limitations: limitations(rep, exact)}
	if err := stackRows(ctx, ps, in, sink, res); err != nil {
		return nil, err
	}
	res.Rows["measurements"] += w.N
	return res, nil
}

// Report runs heaptrack_print on path (no envelope check) and parses its
// report and, written in the same run, its flame-graph file of the bytes
// each backtrace held at the peak.
func (a *Adapter) Report(ctx context.Context, path string, lim config.Limits) (*Report, []PeakStack, error) {
	exe := a.look("heaptrack_print")
	if exe == "" {
		return nil, nil, fault.New(fault.CapabilityUnavailable, "heaptrack_print is not installed: flameox reads heaptrack files only through it (the data format is private to heaptrack)").
			Fix(installRemedy)
	}
	named, cleanup, err := nameByContent(path)
	if err != nil {
		return nil, nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "prepare %s for heaptrack_print", path)
	}
	defer cleanup()
	flame := filepath.Join(filepath.Dir(named), "peak.stacks")
	out, err := a.Sys.Output(ctx, append(PrintArgv(exe, named), "--flamegraph-cost-type", "peak", "--print-flamegraph", flame), reportLimit, printTimeout)
	if err != nil {
		return nil, nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print %s", path)
	}
	rep, err := ParseReport(bytes.NewReader(out), lim)
	if err != nil {
		return nil, nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print's report of %s", path)
	}
	f, err := os.Open(flame)
	if err != nil {
		return nil, nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print wrote no flame-graph file for %s", path)
	}
	defer f.Close()
	ps, err := ParsePeakStacks(f, lim)
	if err != nil {
		return nil, nil, fault.Wrap(fault.ArtifactParseFailed, err, "heaptrack_print's flame-graph file of %s", path)
	}
	return rep, ps, nil
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
func exactPeak(rep *Report, ps []PeakStack) *int64 {
	var sum int64
	for _, s := range ps {
		sum += s.Bytes
	}
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

func limitations(rep *Report, exact *int64) []string {
	lim := []string{
		"read through heaptrack_print (heaptrack's data format is private): byte figures are its rounded ones (two decimals, 1000-based units above 1000 B); dimensions.printed keeps the text and dimensions.precision_bytes the bound",
		"frames and stacks are the bytes each backtrace held at the peak (heaptrack_print's flame graph, peak cost type), exact, under sample type " + SampleType,
		"memory.peak_rss includes heaptrack's own overhead (dimensions.includes_collector)",
		"memory.leaked excludes the leaks heaptrack's suppressions matched",
	}
	if exact != nil {
		lim = append(lim, "memory.peak_heap is exact: the sum of the peak stacks, which heaptrack_print's rounded summary agrees with")
	}
	if rep.Summary.PeakRSS == nil {
		lim = append(lim, "heaptrack_print reported no peak RSS for this file")
	}
	return lim
}

var (
	_ adapter.Extractor = (*Adapter)(nil)
	_ adapter.Strict    = (*Adapter)(nil)
	_ adapter.Kinded    = (*Adapter)(nil)
)
