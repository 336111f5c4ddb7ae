package memray

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/stacks"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity.
const (
	ExtractorName = "memray"
	// ExtractorVersion 2: memory.snapshot.heap and memory.snapshot.rss
	// rows from memray's memory snapshots (the timeline). 3: captures of
	// older header versions through the memray release that reads them,
	// named by the reader_version dimension.
	ExtractorVersion = "3"
)

// reporterTimeout bounds one memray reporter run on one capture.
const reporterTimeout = 10 * time.Minute

// Extractor reads memray captures through memray's own reporters:
// `memray stats --json` for the totals and the peak, `memray transform
// csv` (at the peak, and with --leaks at exit) for the allocation stacks,
// and memray's public memray.FileReader(...).get_memory_snapshots() for
// the heap and resident set over time (at most MaxSnapshots of them).
// It never decodes memray's binary format, which changes with every
// header version; a capture the installed memray cannot read is refused
// with memray's reason.
type Extractor struct{ Sys System }

// NewExtractor returns the extractor running memray on the real machine.
func NewExtractor() *Extractor { return &Extractor{Sys: RealSystem()} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Strict: a file with memray's signature that memray refuses is a broken
// (or foreign-version) memray capture; publication fails with its reason.
func (*Extractor) Strict() bool { return true }

// ArtifactKind: an import of a memray capture registers a memory profile.
func (*Extractor) ArtifactKind() string { return Kind }

// Accepts recognises memray's signature: the magic "memray\0" at the
// start of an uncompressed capture, or inside the first block of the LZ4
// frame (magic 04 22 4D 18) `memray run` compresses it into.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	head := in.Head
	if len(head) == 0 {
		f, err := os.Open(in.Path)
		if err != nil {
			return false
		}
		defer f.Close()
		b := make([]byte, 64)
		n, _ := f.Read(b)
		head = b[:n]
	}
	return looksMemray(head)
}

var (
	memrayMagic = []byte("memray\x00")
	lz4Magic    = []byte{0x04, 0x22, 0x4d, 0x18}
)

func looksMemray(head []byte) bool {
	if bytes.HasPrefix(head, memrayMagic) {
		return true
	}
	if !bytes.HasPrefix(head, lz4Magic) {
		return false
	}
	if len(head) > 64 {
		head = head[:64]
	}
	return bytes.Contains(head, memrayMagic[:6])
}

// Extract reads the capture's header version, picks the installed memray
// release that reads it (FindReader), runs its reporters and writes
// measurements and the stacks.
func (e *Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	sys := e.Sys
	if sys.LookPath == nil {
		sys = RealSystem()
	}
	rd, header, missing, err := chooseReader(sys, in)
	if err != nil {
		return nil, err
	}
	rep, err := runReporters(ctx, sys, rd, in)
	if err != nil {
		var fe *fault.Error
		if missing != nil && errors.As(err, &fe) && fe.Code == fault.ArtifactParseFailed {
			// The default memray refused a capture no installed reader
			// reads: its reason, and the release to install.
			fe.With("header_version", strconv.Itoa(missing.header)).With("reader_needed", "memray "+missing.pin)
			fix := readerRemedy(sys.getenv, missing.header) + "."
			if ov, _ := overrides(sys); ov[missing.header].Python != "" {
				fix = fmt.Sprintf("%s names %s for memray %s, which is not an executable; ", ReadersEnv, ov[missing.header].Python, ov[missing.header].Release) + fix
			}
			fe.Remediation = []string{fix}
		}
		return nil, err
	}
	rep.header = header
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion, Rows: map[string]int64{}, Limitations: rep.limitations()}
	m := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	if err := writeMeasurements(m, in.ArtifactID, rep); err != nil {
		return nil, err
	}
	if err := writeSnapshots(m, in.ArtifactID, rep); err != nil {
		return nil, err
	}
	res.Rows[schema.Measurements.Name] = m.N
	if len(rep.peak)+len(rep.leaks) > 0 {
		sx, err := writeStacks(ctx, in, rep, sink)
		if err != nil {
			return nil, err
		}
		for k, v := range sx.Rows {
			res.Rows[k] += v
		}
	}
	return res, nil
}

// chooseReader is the reader of the capture's header version; where none
// is installed (or the header cannot be read), the default python3's
// memray, which gives its own reason if it cannot read the capture, and
// missing names the header line whose release would. header is the
// capture's header version, 0 where it could not be read.
func chooseReader(sys System, in adapter.ExtractInput) (r Reader, header int, missing *headerLine, err error) {
	h, herr := HeaderVersion(in.Path)
	if herr != nil {
		h = 0
	}
	if herr == nil {
		r, ok, err := FindReader(sys, h)
		if err != nil || ok {
			return r, h, nil, err
		}
	}
	r, ok, err := FindReader(sys, defaultHeader)
	if err != nil {
		return r, h, nil, err
	}
	if !ok {
		return r, h, nil, fault.New(fault.CapabilityUnavailable, "extracting a memray capture needs memray's reporters, and python3 was not found on PATH").
			With("artifact_id", in.ArtifactID).With("missing", "python3").Fix("Install Python 3, then " + installRemedy + ".")
	}
	if l, known := lineOfHeader(h); herr == nil && known && h != defaultHeader {
		missing = &l
	} else if herr == nil && h != defaultHeader {
		missing = &headerLine{header: h, pin: "release that wrote it"}
	}
	return r, h, missing, nil
}

// report is what memray's reporters said about one capture.
type report struct {
	// reader is the memray release that read the capture (Release as
	// the interpreter reports it).
	reader Reader
	// header is the capture's header version, 0 where unread.
	header int
	// stats is nil for a pre-aggregated capture (`memray run
	// --aggregate`), which memray stats refuses.
	stats       *Stats
	peak, leaks []Record
	// snapshots are memray's memory snapshots, nil with snapshotsErr
	// saying why when there are none to read.
	snapshots    *Snapshots
	snapshotsErr string
}

// errAggregated is memray stats' refusal of a pre-aggregated capture.
const errAggregated = "Can't compute statistics using a pre-aggregated capture file"

func (r *report) retained() (n, bytes int64) {
	for _, x := range r.leaks {
		n, bytes = n+x.Count, bytes+x.Size
	}
	return
}

func (r *report) limitations() []string {
	lim := []string{"numbers and stacks are memray's own reporters' (memray stats --json, memray transform csv), run on the stored capture",
		fmt.Sprintf("read by memray %s (%s, from %s), for the capture's header version %d: a capture is readable only by the memray release line that wrote it; flameox captures with memray %s", r.reader.Release, r.reader.Python, r.reader.From, r.header, Version)}
	lim = append(lim, r.snapshotLimitations()...)
	if r.stats == nil {
		return append(lim, "a pre-aggregated capture (memray run --aggregate): memray stats refuses it, so the peak is the sum of memray transform csv at the high-water mark, and the total allocated, the allocation count and the allocator breakdown are unknown")
	}
	if !r.stats.Metadata.HasNativeTraces {
		lim = append(lim, "captured without --native: allocations are attributed to Python frames only, C/C++ callers are hidden")
	}
	if !r.stats.Metadata.TracePythonAllocators {
		lim = append(lim, "captured without --trace-python-allocators: pymalloc's small objects are seen only as the arenas it maps")
	}
	return lim
}

// snapshotLimitations say what the timeline (memory.snapshot.* rows) is,
// or why there is none.
func (r *report) snapshotLimitations() []string {
	switch {
	case r.snapshots == nil:
		return []string{"no timeline (memory.snapshot.* rows): " + r.snapshotsErr}
	case r.snapshots.Total == 0:
		return []string{"no timeline (memory.snapshot.* rows): memray recorded no memory snapshots in this capture"}
	}
	lim := []string{"memory.snapshot.heap is the heap memray had tracked when its background thread took the snapshot (every 10 ms unless the capture chose otherwise), so it never exceeds memory.peak_heap and a peak between two snapshots is missed; memory.snapshot.rss is the process's resident set at that moment, which includes what memray does not track (the interpreter, memray itself, freed memory the allocator keeps)"}
	if n := len(r.snapshots.Kept); n < r.snapshots.Total {
		lim = append(lim, fmt.Sprintf("%d of memray's %d memory snapshots are kept as memory.snapshot.* rows: evenly spaced, with the first, the last and the one with the largest heap (snapshot %d)", n, r.snapshots.Total, r.snapshots.MaxHeap))
	}
	return lim
}

// driverScript runs memray's command-line entry point
// (memray.commands.main, what `python3 -m memray` calls) once per
// reporter, and writes memray's memory snapshots, through memray's
// public memray.FileReader(path).get_memory_snapshots(), as
// "time_ms,rss,heap" lines (ParseSnapshots). Each of these reads the
// whole capture, so they run side by side, one forked process each (up
// to the CPUs this process may use), which pays Python's and memray's
// start-up once. Each reporter's stderr and status (an exception is
// status 1 with its message) come back as one JSON object on the last
// line of stdout, with the memray release that read the capture; where
// memray refuses the snapshots, the reason comes back as snapshots_error
// and the extraction goes on without them.
const driverScript = `import contextlib, io, json, os, sys
import memray
from memray.commands import main
spec = json.loads(sys.argv[1])

def reporter(args):
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = main(args) or 0
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except Exception as e:
        rc = 1
        err.write("%s: %s\n" % (type(e).__name__, e))
    return {"rc": rc, "stderr": err.getvalue()[-4096:]}

def snapshots(snap):
    try:
        with memray.FileReader(snap["capture"], max_memory_records=snap["max_records"]) as r, open(snap["out"], "w") as f:
            f.write("time_ms,rss,heap\n")
            for s in r.get_memory_snapshots():
                f.write("%d,%d,%d\n" % (s.time, s.rss, s.heap))
    except Exception as e:
        return ("%s: %s" % (type(e).__name__, e))[:1024]
    return ""

jobs = [(reporter, a) for a in spec["reporters"]] + [(snapshots, spec["snapshots"])]
try:
    cpus = len(os.sched_getaffinity(0))
except Exception:
    cpus = os.cpu_count() or 1
out = []
if cpus > 1:
    import concurrent.futures as cf, multiprocessing as mp
    with cf.ProcessPoolExecutor(min(cpus, len(jobs)), mp_context=mp.get_context("fork")) as pool:
        futs = [pool.submit(f, a) for f, a in jobs]
        for (f, a), fut in zip(jobs, futs):
            try:
                out.append(fut.result())
            except Exception as e:
                msg = "memray's reader process failed: %s: %s" % (type(e).__name__, e)
                out.append({"rc": 1, "stderr": msg} if f is reporter else msg[:1024])
else:
    out = [f(a) for f, a in jobs]
try:
    import importlib.metadata as md
    version = md.version("memray")
except Exception:
    version = getattr(memray, "__version__", "")
sys.stdout.write("\n" + json.dumps({"memray_version": version, "reporters": out[:-1], "snapshots_error": out[-1]}) + "\n")
`

// lastLine is the last non-empty line of b.
func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// runReporters runs memray stats and the two csv transforms into a
// scratch directory and parses what they wrote.
func runReporters(ctx context.Context, sys System, rd Reader, in adapter.ExtractInput) (*report, error) {
	dir, err := os.MkdirTemp("", "flameox-memray-")
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "scratch directory for memray's reporters")
	}
	defer os.RemoveAll(dir)
	statsPath := filepath.Join(dir, "stats.json")
	jobs := []struct {
		what, out string
		args      []string
		err       error
	}{
		{what: "memray stats", out: statsPath, args: []string{"stats", "--json", "-n", "10", "-o", statsPath, "-f", in.Path}},
		{what: "memray transform csv", out: filepath.Join(dir, "peak.csv")},
		{what: "memray transform csv --leaks", out: filepath.Join(dir, "leaks.csv")},
	}
	jobs[1].args = []string{"transform", "csv", "-o", jobs[1].out, "-f", in.Path}
	jobs[2].args = []string{"transform", "csv", "-o", jobs[2].out, "-f", "--leaks", in.Path}
	all := make([][]string, len(jobs))
	for i, j := range jobs {
		all[i] = j.args
	}
	snapPath := filepath.Join(dir, "snapshots.csv")
	spec, _ := json.Marshal(map[string]any{"reporters": all,
		"snapshots": map[string]any{"capture": in.Path, "out": snapPath, "max_records": maxSnapshotRecords(in.Limits)}})
	out, err := sys.Output(ctx, []string{rd.Python, "-c", driverScript, string(spec)}, reporterTimeout)
	if err != nil {
		return nil, reporterFault(err, "memray", sys, rd, in)
	}
	var answer struct {
		MemrayVersion string `json:"memray_version"`
		Reporters     []struct {
			RC     int    `json:"rc"`
			Stderr string `json:"stderr"`
		} `json:"reporters"`
		SnapshotsError string `json:"snapshots_error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(lastLine(out)), &answer); err != nil || len(answer.Reporters) != len(jobs) {
		return nil, fault.New(fault.InternalError, "memray's reporters answered %q", string(out)).With("artifact_id", in.ArtifactID)
	}
	results := answer.Reporters
	for i, r := range results {
		if r.RC != 0 {
			jobs[i].err = fault.New(fault.ProcessFailed, "%s exited with status %d", jobs[i].what, r.RC).With("stderr", r.Stderr)
		}
	}
	rep := &report{reader: rd}
	if answer.MemrayVersion != "" {
		rep.reader.Release = answer.MemrayVersion
	}
	var fe *fault.Error
	aggregated := errors.As(jobs[0].err, &fe) && strings.Contains(fe.Details["stderr"], errAggregated)
	for i, j := range jobs {
		if i == 0 && aggregated {
			continue
		}
		if err := reporterFault(j.err, j.what, sys, rd, in); err != nil {
			return nil, err
		}
	}
	if !aggregated {
		f, err := os.Open(statsPath)
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactParseFailed, err, "memray stats wrote no report for %s", in.ArtifactID)
		}
		rep.stats, err = ParseStats(f)
		f.Close()
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactParseFailed, err, "memray capture %s", in.ArtifactID).With("artifact_id", in.ArtifactID)
		}
	}
	for i, dst := range []*[]Record{&rep.peak, &rep.leaks} {
		f, err := os.Open(jobs[i+1].out)
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactParseFailed, err, "%s wrote nothing for %s", jobs[i+1].what, in.ArtifactID)
		}
		*dst, err = ParseCSV(f, in.Limits)
		f.Close()
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactParseFailed, err, "memray capture %s", in.ArtifactID).With("artifact_id", in.ArtifactID)
		}
	}
	rep.snapshots, rep.snapshotsErr = readSnapshots(snapPath, answer.SnapshotsError, in.Limits)
	return rep, nil
}

// maxSnapshotRecords is the max_memory_records memray.FileReader is
// given: every snapshot up to limits.max_samples (memray keeps every
// Nth beyond it, and its own default, for its reporters, is far lower),
// within memray's C int, which also keeps every ordinal an int32 value
// index.
func maxSnapshotRecords(lim config.Limits) int64 {
	n := lim.MaxSamples
	if n <= 0 {
		n = config.DefaultLimits().MaxSamples
	}
	return min(n, math.MaxInt32)
}

// readSnapshots parses the snapshot file the driver wrote. memray
// refusing them (its reason in refused), or a file that does not parse,
// leaves the capture without a timeline, which is a limitation, never a
// failure of the extraction: the reason comes back instead.
func readSnapshots(path, refused string, lim config.Limits) (*Snapshots, string) {
	if refused != "" {
		return nil, "memray.FileReader(...).get_memory_snapshots() refused: " + refused
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "the driver wrote no snapshot file: " + err.Error()
	}
	defer f.Close()
	s, err := ParseSnapshots(f, lim, MaxSnapshots)
	if err != nil {
		return nil, err.Error()
	}
	return s, ""
}

// reporterFault turns a failed reporter into the user's answer: memray
// not installed is CAPABILITY_UNAVAILABLE naming it; memray refusing the
// file is ARTIFACT_PARSE_FAILED with memray's own "Reason:" line.
func reporterFault(err error, what string, sys System, rd Reader, in adapter.ExtractInput) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.ProcessFailed {
		return err
	}
	stderr := fe.Details["stderr"]
	if strings.Contains(stderr, "No module named memray") || strings.Contains(stderr, "No module named 'memray'") {
		if rd.Header != defaultHeader || rd.From == ReadersEnv {
			return fault.New(fault.CapabilityUnavailable, "extracting a memray capture needs memray %s, which %s (from %s) cannot import", rd.Release, rd.Python, rd.From).
				With("artifact_id", in.ArtifactID).With("missing", "memray").With("python", rd.Python).Fix(readerRemedy(sys.getenv, rd.Header) + ".")
		}
		return fault.New(fault.CapabilityUnavailable, "extracting a memray capture needs memray, which python3 cannot import").
			With("artifact_id", in.ArtifactID).With("missing", "memray").Fix(installRemedy + ".")
	}
	// memray's reason: its "Reason:" line, else the last line (the
	// exception of a traceback).
	reason := ""
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if r, ok := strings.CutPrefix(l, "Reason:"); ok {
			reason = strings.TrimSpace(r)
			break
		}
		if l != "" {
			reason = l
		}
	}
	if len(reason) > 512 {
		reason = reason[:512]
	}
	return fault.New(fault.ArtifactParseFailed, "%s cannot read %s: %s", what, in.ArtifactID, reason).
		With("artifact_id", in.ArtifactID).With("reason", reason).With("stderr", stderr).With("reader", "memray "+rd.Release+" ("+rd.Python+")").
		Fix("Read the capture with the memray release that wrote it (a capture's header version is tied to its release); flameox installs memray " + Version + ".")
}

// readerDim is the dimension naming the memray release that read the
// capture. It is not part of a row's id: one capture is one set of rows,
// whichever release read it.
const readerDim = "reader_version"

// writeMeasurements writes the totals as memray's stats report gives them.
func writeMeasurements(m *adapter.Measurements, art string, r *report) error {
	row := func(name, unit, agg string, v int64, dims map[string]string, level string) error {
		key := art + "/memray/" + name
		subject := dims["allocator"] // the allocator breakdown: one row per allocator
		for _, k := range sortedKeys(dims) {
			key += "/" + k + "=" + dims[k]
		}
		dims[readerDim] = r.reader.Release
		x := v
		return m.Write(schema.Measurement{ID: digest.Bytes([]byte(key)), Name: name, Int: &x, Unit: unit,
			Aggregation: agg, Scope: "run", Subject: subject, Dimensions: dims, EvidenceLevel: level})
	}
	s := r.stats
	if s == nil {
		var peak int64
		for _, x := range r.peak {
			peak += x.Size
		}
		if err := row("memory.peak_heap", "bytes", "max", peak, map[string]string{"source": "memray transform csv (pre-aggregated capture)"}, "derived"); err != nil {
			return err
		}
		n, b := r.retained()
		if err := row("memory.retained_end", "bytes", "sum", b, map[string]string{"source": "memray transform csv --leaks"}, "derived"); err != nil {
			return err
		}
		return row("memory.retained_allocations", "count", "sum", n, map[string]string{"source": "memray transform csv --leaks"}, "derived")
	}
	if err := row("memory.peak_heap", "bytes", "max", *s.Metadata.PeakMemory, map[string]string{"source": "memray stats: peak memory"}, "observed"); err != nil {
		return err
	}
	if err := row("memory.total_allocated", "bytes", "sum", s.TotalBytes, map[string]string{"source": "memray stats: total memory allocated"}, "observed"); err != nil {
		return err
	}
	if err := row("memory.allocations", "count", "sum", s.TotalAllocations, map[string]string{"source": "memray stats: total allocations"}, "observed"); err != nil {
		return err
	}
	n, b := r.retained()
	if err := row("memory.retained_end", "bytes", "sum", b, map[string]string{"source": "memray transform csv --leaks"}, "derived"); err != nil {
		return err
	}
	if err := row("memory.retained_allocations", "count", "sum", n, map[string]string{"source": "memray transform csv --leaks"}, "derived"); err != nil {
		return err
	}
	for _, a := range sortedKeys(s.Allocators) {
		if err := row("memory.allocations_by_allocator", "count", "sum", s.Allocators[a], map[string]string{"allocator": a, "source": "memray stats: allocator type distribution"}, "observed"); err != nil {
			return err
		}
	}
	return nil
}

// writeSnapshots writes memray's memory snapshots, one
// memory.snapshot.heap and one memory.snapshot.rss row each: subject and
// value index the snapshot's ordinal in memray's list, "time" the
// milliseconds since snapshot 0.
func writeSnapshots(m *adapter.Measurements, art string, r *report) error {
	if r.snapshots == nil {
		return nil
	}
	for _, s := range r.snapshots.Kept {
		n := strconv.Itoa(s.Ordinal)
		idx := int32(s.Ordinal)
		for _, x := range []struct {
			name string
			v    int64
		}{{"memory.snapshot.heap", s.Heap}, {"memory.snapshot.rss", s.RSS}} {
			dims := map[string]string{"snapshot": n, "time": strconv.FormatInt(s.Time-r.snapshots.First.Time, 10), "time_unit": "ms",
				"source": "memray FileReader.get_memory_snapshots"}
			key := art + "/memray/" + x.name
			for _, k := range sortedKeys(dims) {
				key += "/" + k + "=" + dims[k]
			}
			dims[readerDim] = r.reader.Release
			v := x.v
			if err := m.Write(schema.Measurement{ID: digest.Bytes([]byte(key)), Name: x.name, Int: &v, Unit: "bytes",
				Aggregation: "value", Scope: "run", Subject: "snapshot " + n, ValueIndex: &idx, Dimensions: dims, EvidenceLevel: "observed"}); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// writeStacks builds a pprof profile of the peak and retained stacks and
// hands it to the profile extractor, so frames, hotspots and stacks of a
// memray capture are those of every other profile.
func writeStacks(ctx context.Context, in adapter.ExtractInput, r *report, sink adapter.Sink) (*adapter.Extraction, error) {
	p := buildProfile(r.peak, r.leaks)
	f, err := os.CreateTemp("", "flameox-memray-*.pb.gz")
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "scratch profile for memray stacks")
	}
	defer os.Remove(f.Name())
	if err := p.Write(f); err != nil {
		f.Close()
		return nil, fault.Wrap(fault.InternalError, err, "write scratch profile for memray stacks")
	}
	if err := f.Close(); err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "write scratch profile for memray stacks")
	}
	sin := in
	sin.Path, sin.Head = f.Name(), nil
	return stacks.NewExtractor().Extract(ctx, sin, sink)
}

var _ adapter.Extractor = (*Extractor)(nil)
