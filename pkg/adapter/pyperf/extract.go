package pyperf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity.
const (
	ExtractorName    = "pyperf"
	ExtractorVersion = "1"
)

// sniffBytes bounds what Accepts reads (after gunzip) to decide.
const sniffBytes = 1 << 20

// Extractor reads pyperf JSON files (plain or gzipped) into measurements,
// one row per value and warm-up, and their metadata into observations.
type Extractor struct{}

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Strict: a file Accepts recognised as pyperf's and Extract refuses is a
// broken pyperf file, so publication fails with the error rather than
// skipping it.
func (*Extractor) Strict() bool { return true }

// ArtifactKind: an import of a pyperf file that names no kind registers
// it as benchmark samples.
func (*Extractor) ArtifactKind() string { return KindBenchmark }

// Accepts decides by content, never by name: gzip is looked through, and
// the JSON must be an object whose top-level keys are pyperf's own
// ("benchmarks", "metadata", "version") with either a version pyperf
// writes or a first benchmark holding "runs", within the first MiB.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	if len(in.Head) > 0 && !isGzip(in.Head) && !startsObject(in.Head) {
		return false // the common case (text, protobuf, other binaries) costs no read
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return looksPyperf(in.Head)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); isGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		r = zr
	}
	body := bufio.NewReader(io.LimitReader(r, sniffBytes))
	if first, _ := body.Peek(64); !startsObject(first) {
		return false
	}
	head, _ := io.ReadAll(body)
	return looksPyperf(head)
}

// startsObject reports whether b, after white space, opens a JSON object.
func startsObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '{'
}

// looksPyperf reads the top of a JSON prefix as tokens (a cut-off prefix
// is fine) and reports whether it is shaped like a pyperf file.
func looksPyperf(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case "version":
			v, err := dec.Token()
			if err != nil {
				return false
			}
			return v == "1.0" || v == json.Number("6") || v == json.Number("5")
		case "metadata":
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false
			}
		case "benchmarks":
			return firstHasRuns(dec)
		default:
			return false
		}
	}
	return false
}

// firstHasRuns reports whether the benchmarks array's first object has a
// "runs" array (after its metadata, which pyperf sorts first).
func firstHasRuns(dec *json.Decoder) bool {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return false
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case "runs":
			t, err := dec.Token()
			return err == nil && t == json.Delim('[')
		case "metadata", "common_metadata":
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false
			}
		default:
			return false
		}
	}
	return false
}

// Extract decodes and checks the whole file first, then writes its rows:
// a file pyperf would refuse, or one over a limit, fails with
// ARTIFACT_PARSE_FAILED or ARTIFACT_TOO_LARGE having written nothing.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "open the pyperf file")
	}
	defer f.Close()
	s, err := Decode(f, in.Limits)
	if err != nil {
		return nil, decodeFault(err, in.ArtifactID)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &rows{Measurements: adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}}
	if err := w.suite(s); err != nil {
		return nil, err
	}
	return &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion,
		Rows: map[string]int64{"measurements": w.N, "observations": w.obs}, Limitations: limitations(s)}, nil
}

// decodeFault maps a Decode error to its fault.
func decodeFault(err error, artifactID string) *fault.Error {
	var tl *tooLarge
	if errors.As(err, &tl) {
		fe := fault.Wrap(fault.ArtifactTooLarge, err, "pyperf file %s", artifactID).With("limit", strconv.FormatInt(tl.max, 10)).
			With("observed", strconv.FormatInt(tl.n, 10)).With("observed_is_lower_bound", "true").With("counted", tl.counting)
		if artifactID != "" {
			fe = fe.With("artifact_id", artifactID)
		}
		if tl.limit == "" {
			return fe.Fix(fmt.Sprintf("A pyperf file holds at most %d values and warm-ups and %d metadata entries (docs/adapters.md): split the suite (`python3 -m pyperf convert --include-benchmark NAME`) and import the parts.", MaxValues, MaxMetadata))
		}
		key := "limits." + tl.limit
		return fe.With("limit_key", key).
			Fix(fmt.Sprintf("If the file is genuine, raise %s in .diagnostics/config.toml above %d, then import it again (`flameox import`). The limit bounds the memory decoding may use.", key, tl.max))
	}
	fe := fault.Wrap(fault.ArtifactParseFailed, err, "read the pyperf file").
		Fix("Check the file with `python3 -m pyperf show FILE`; flameox refuses what pyperf refuses, and NaN, infinite, zero or negative values, duplicate keys, benchmark names and runs.")
	if artifactID != "" {
		fe = fe.With("artifact_id", artifactID)
	}
	return fe
}

func limitations(s *Suite) []string {
	lim := []string{
		"values are pyperf's: each a mean per loop iteration over loop_count = loops × inner_loops iterations (track_memory files: the worker's peak memory, in bytes); single iterations are not observed",
		"pyperf runs each run in its own worker process: worker_id names that process by its run (worker-N), worker_run_index is the run's index within its benchmark, value_index counts the run's warm-ups first, then its values, in the order the worker measured them",
		"calibration runs (no values) are kept: their warm-ups, flagged is_warmup, carry dimensions.calibration (loops, recalibrate_loops, warmups, recalibrate_warmups); summaries leave warm-ups out, as pyperf does",
		"pyperf metadata is kept as observations (kind configuration, name pyperf.metadata.KEY, context suite, benchmark/NAME or run/N/NAME), at the level the file gives it",
	}
	if s.Version != "1.0" {
		lim = append(lim, "the file is of format version "+s.Version+" (pyperf < 1.0): its warm-ups were stored as raw timings and are divided by loops × inner_loops, as pyperf does")
	}
	if len(s.Skipped) > 0 {
		keys := make([]string, 0, len(s.Skipped))
		for k := range s.Skipped {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 10 {
			keys = append(keys[:10], fmt.Sprintf("and %d more", len(keys)-10))
		}
		lim = append(lim, "keys pyperf does not read were skipped: "+strings.Join(keys, ", "))
	}
	return lim
}

// rows writes measurements and observations.
type rows struct {
	adapter.Measurements
	o   *schema.Writer
	obs int64
}

func (r *rows) suite(s *Suite) error {
	if err := r.metadata("suite", s.Metadata); err != nil {
		return err
	}
	for _, b := range s.Benchmarks {
		if err := r.metadata("benchmark/"+b.Name, b.Metadata); err != nil {
			return err
		}
		unit := units[b.Unit]
		agg := "mean"
		switch b.Unit {
		case "byte":
			agg = "max"
		case "integer":
			agg = "value"
		}
		for ri, run := range b.Runs {
			if err := r.metadata("run/"+strconv.Itoa(ri)+"/"+b.Name, run.Metadata); err != nil {
				return err
			}
			base := map[string]string{"loops": strconv.FormatUint(run.Loops, 10), "inner_loops": strconv.FormatUint(run.InnerLoops, 10),
				"orig_unit": b.Unit}
			if run.Calibration != "" {
				base["calibration"] = run.Calibration
			}
			worker, idx := "worker-"+strconv.Itoa(ri), int32(ri)
			vi := 0
			write := func(v float64, loops uint64, warm bool, dims map[string]string) error {
				id, err := digest.Of(map[string]any{"run_id": r.RunID, "artifact_id": r.ArtifactID, "benchmark": b.Name, "run": ri, "value_index": vi})
				if err != nil {
					return err
				}
				val, pos, lc := v, int32(vi), loops*run.InnerLoops
				vi++
				return r.write(schema.Measurement{ID: id, Name: "pyperf." + unit, Unit: unit, Aggregation: agg, Scope: "benchmark",
					Subject: b.Name, WorkerID: worker, WorkerRunIndex: &idx, ValueIndex: &pos, LoopCount: &lc, IsWarmup: warm,
					Float: &val, Dimensions: dims})
			}
			for _, w := range run.Warmups {
				dims := base
				if w.Loops != run.Loops {
					dims = make(map[string]string, len(base))
					for k, v := range base {
						dims[k] = v
					}
					dims["loops"] = strconv.FormatUint(w.Loops, 10)
				}
				if err := write(w.Value, w.Loops, true, dims); err != nil {
					return err
				}
			}
			for _, v := range run.Values {
				if err := write(v, run.Loops, false, base); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r *rows) write(x schema.Measurement) error { return r.Write(x) }

// metadata writes one observation per entry of one level.
func (r *rows) metadata(context string, ms []Meta) error {
	for _, m := range ms {
		if r.o == nil {
			w, err := r.Sink.Table(schema.Observations)
			if err != nil {
				return err
			}
			r.o = w
		}
		id, err := digest.Of(map[string]any{"run_id": r.RunID, "artifact_id": r.ArtifactID, "context": context, "key": m.Key})
		if err != nil {
			return err
		}
		var art any
		if r.ArtifactID != "" {
			art = r.ArtifactID
		}
		// observation_id, run_id, artifact_id, kind, name, value_json, file,
		// line_from, line_to, context, evidence_level
		if err := r.o.AppendRow([]any{id, r.RunID, art, "configuration", "pyperf.metadata." + m.Key, m.JSON,
			nil, nil, nil, context, "observed"}); err != nil {
			return err
		}
		r.obs++
	}
	return nil
}

var _ adapter.Extractor = (*Extractor)(nil)
