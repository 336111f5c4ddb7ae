package coverage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
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
	ExtractorName    = "coverage"
	ExtractorVersion = "1"
)

// Observation kinds and names, shared with Go coverage (pkg/adapter/gotest).
const (
	KindLine    = "line_hit"
	KindArc     = "branch_arc"
	KindSummary = "summary"
	NameLine    = "coverage.line"
	NameArc     = "coverage.arc"
	NameFile    = "coverage.file"
)

// sniffBytes bounds what Accepts reads to decide.
const sniffBytes = 64 << 10

// Extractor reads coverage.py JSON reports (`coverage json`) into
// observations (lines, branch arcs, per-file summaries) and run totals
// (measurements).
type Extractor struct{}

// NewExtractor returns the coverage.py JSON extractor.
func NewExtractor() *Extractor { return &Extractor{} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Strict: a file Accepts recognised as a coverage.py report and Extract
// refuses is a broken report: publication fails with the reason.
func (*Extractor) Strict() bool { return true }

// ArtifactKind: an import of a coverage.py report that names no kind
// registers execution coverage.
func (*Extractor) ArtifactKind() string { return Kind }

// Accepts decides by content, never by name: a JSON object whose "meta"
// object holds a "version" string (and a numeric "format" when it has
// one), followed by a "files" object, within the first bytes.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	head := in.Head
	if len(head) > 0 && !startsObject(head) {
		return false // the common case (text, protobuf, other binaries) costs no read
	}
	if len(head) < sniffBytes {
		f, err := os.Open(in.Path)
		if err == nil {
			defer f.Close()
			b := make([]byte, sniffBytes)
			n, _ := f.Read(b)
			head = b[:n]
		}
	}
	return looksCoverage(head)
}

func startsObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{' || c == 0xef // '{' or a UTF-8 byte order mark
	}
	return false
}

// Extract decodes and checks the whole report first, then writes its
// rows: a report coverage.py could not have written, or one over a
// limit, fails with ARTIFACT_PARSE_FAILED or ARTIFACT_TOO_LARGE having
// written nothing.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "open the coverage.py report")
	}
	defer f.Close()
	rep, err := Decode(bufio.NewReaderSize(f, 256<<10), in.Limits)
	if err != nil {
		return nil, decodeFault(err, in.ArtifactID)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &writer{sink: sink, run: in.RunID, art: in.ArtifactID, m: adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}}
	if err := w.report(ctx, rep); err != nil {
		return nil, err
	}
	return &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion,
		Rows: map[string]int64{schema.Observations.Name: w.obs, schema.Measurements.Name: w.m.N}, Limitations: Limitations(rep)}, nil
}

// decodeFault maps a Decode error to its fault.
func decodeFault(err error, artifactID string) *fault.Error {
	var tl *tooLarge
	if errors.As(err, &tl) {
		key := "limits." + tl.limit
		fe := fault.Wrap(fault.ArtifactTooLarge, err, "coverage.py report").With("limit", strconv.FormatInt(tl.max, 10)).
			With("observed", strconv.FormatInt(tl.n, 10)).With("observed_is_lower_bound", strconv.FormatBool(tl.lowerBound)).
			With("counted", tl.what).With("limit_key", key).
			Fix(fmt.Sprintf("If the report is genuine, raise %s in .diagnostics/config.toml above %d, then import it again (`flameox import`); or report part of the code (`coverage json --include PATTERN`). The limit bounds the memory decoding may use.", key, tl.max))
		if artifactID != "" {
			fe = fe.With("artifact_id", artifactID)
		}
		return fe
	}
	fe := fault.Wrap(fault.ArtifactParseFailed, err, "read the coverage.py report").With("reason", err.Error()).
		Fix("Check the report with `python3 -m json.tool FILE`, or write it again with `python3 -m coverage json --show-contexts -o coverage.json` from the .coverage data file; flameox refuses what coverage.py could not have written (a truncated file, lines listed twice, totals that are not the sum of the files).")
	if artifactID != "" {
		fe = fe.With("artifact_id", artifactID)
	}
	return fe
}

// Limitations says what the observations of rep are and are not.
func Limitations(rep *Report) []string {
	lim := []string{
		"coverage.py records whether a line ran, not how often: an executed line is hits 1, a missing one hits 0",
		"executed lines are coverage.py's executed_lines, which may hold lines that are not statements (a docstring, a decorator's line): the count of executed line rows can exceed coverage.statements' covered count; the totals are the report's own",
		"excluded lines (pragma: no cover) make no line rows; each file's summary counts them",
	}
	if rep.BranchCoverage {
		lim = append(lim, "branch arcs are the report's executed_branches and missing_branches; a negative target -N is an exit from the code object that starts at line N")
	} else {
		lim = append(lim, "the data was measured without --branch: no branch arcs and no branch totals")
	}
	if rep.ShowContexts {
		lim = append(lim, fmt.Sprintf("contexts are in each executed line's value_json (at most %d per line, contexts_total counting them all); the context column holds a line's context when it has exactly one", MaxContextsPerLine))
	} else {
		lim = append(lim, "the report was written without --show-contexts: no contexts")
	}
	if rep.CutContexts > 0 {
		lim = append(lim, fmt.Sprintf("%d lines had more than %d contexts: their lists were cut (contexts_cut)", rep.CutContexts, MaxContextsPerLine))
	}
	if rep.Unlisted > 0 {
		lim = append(lim, fmt.Sprintf("%d lines have contexts but are not among the report's executed lines (a module docstring, a line that is not a statement): they make no row", rep.Unlisted))
	}
	if rep.Replaced > 0 {
		lim = append(lim, fmt.Sprintf("%d file names or contexts held invalid UTF-8 or lone surrogates, stored with U+FFFD", rep.Replaced))
	}
	if rep.Format > 3 {
		lim = append(lim, fmt.Sprintf("meta.format %d is newer than the formats this reader knows (none, 2, 3): the keys it knows were read", rep.Format))
	}
	if p := rep.Totals.Percent(); rep.Totals.HasPercent && math.Abs(p-rep.Totals.PercentCovered) > 1e-9*math.Max(1, p) {
		lim = append(lim, fmt.Sprintf("totals.percent_covered %v is not what the counts give (%v); the report's value is kept", rep.Totals.PercentCovered, p))
	}
	if len(rep.Skipped) > 0 {
		keys := make([]string, 0, len(rep.Skipped))
		for k := range rep.Skipped {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 10 {
			keys = append(keys[:10], fmt.Sprintf("and %d more", len(keys)-10))
		}
		lim = append(lim, "keys not kept (per-function and per-class regions are the files' lines again): "+strings.Join(keys, ", "))
	}
	return lim
}

// writer writes one report's rows.
type writer struct {
	sink     adapter.Sink
	run, art string
	m        adapter.Measurements
	obs      int64
	// the canonical JSON of the id's strings, and the id being built
	runJ, artJ, fileJ []byte
	fileName          string
	buf               []byte

	w                                      *schema.Writer
	id, runC, artC, kind, name, value, fil schema.StringCol
	ctxC, level                            schema.StringCol
	from, to                               schema.Int32Col
}

func (w *writer) open() error {
	if w.w != nil {
		return nil
	}
	t, err := w.sink.Table(schema.Observations)
	if err != nil {
		return err
	}
	w.w = t
	w.id, w.runC, w.artC = t.StringCol("observation_id"), t.StringCol("run_id"), t.StringCol("artifact_id")
	w.kind, w.name, w.value = t.StringCol("kind"), t.StringCol("name"), t.StringCol("value_json")
	w.fil, w.ctxC, w.level = t.StringCol("file"), t.StringCol("context"), t.StringCol("evidence_level")
	w.from, w.to = t.Int32Col("line_from"), t.Int32Col("line_to")
	return nil
}

// row appends one observation; hasLines false leaves the lines null.
func (w *writer) row(kind, name, value, file string, hasLines bool, from, to int32, ctx string) error {
	id, err := w.obsID(kind, name, file, hasLines, from, to, ctx)
	if err != nil {
		return err
	}
	w.id.Append(id)
	w.runC.Append(w.run)
	w.artC.AppendOrNull(w.art)
	w.kind.Append(kind)
	w.name.Append(name)
	w.value.Append(value)
	w.fil.Append(file)
	if hasLines {
		w.from.Append(from)
		w.to.Append(to)
	} else {
		w.from.AppendNull()
		w.to.AppendNull()
	}
	w.ctxC.AppendOrNull(ctx)
	w.level.Append("observed")
	w.obs++
	return w.w.EndRow()
}

// obsID is the observation's id, the one Go coverage's rows have too
// (pkg/adapter/gotest): the digest of the canonical JSON (RFC 8785) of
// {"artifact_id", "context", "file", "kind", "line_from", "line_to",
// "name", "run_id"}, context and lines null when absent, exactly what
// digest.Of gives for that map. The strings are canonicalized once (the
// file's once per file) and the line numbers spliced in, because
// canonicalizing a map per line costs more than the rest of the
// extraction.
func (w *writer) obsID(kind, name, file string, hasLines bool, from, to int32, ctx string) (string, error) {
	if w.runJ == nil {
		var err error
		if w.runJ, err = digest.Canonical(w.run); err != nil {
			return "", err
		}
		if w.artJ, err = digest.Canonical(w.art); err != nil {
			return "", err
		}
	}
	if file != w.fileName || w.fileJ == nil {
		b, err := digest.Canonical(file)
		if err != nil {
			return "", err
		}
		w.fileName, w.fileJ = file, b
	}
	b := append(append(w.buf[:0], `{"artifact_id":`...), w.artJ...)
	b = append(b, `,"context":`...)
	if ctx == "" {
		b = append(b, "null"...)
	} else {
		c, err := digest.Canonical(ctx)
		if err != nil {
			return "", err
		}
		b = append(b, c...)
	}
	b = append(append(append(b, `,"file":`...), w.fileJ...), `,"kind":"`...)
	b = append(append(b, kind...), `","line_from":`...)
	if hasLines {
		b = strconv.AppendInt(b, int64(from), 10)
		b = strconv.AppendInt(append(b, `,"line_to":`...), int64(to), 10)
	} else {
		b = append(b, `null,"line_to":null`...)
	}
	b = append(append(append(b, `,"name":"`...), name...), `","run_id":`...)
	b = append(append(b, w.runJ...), '}')
	w.buf = b
	return digest.Bytes(b), nil
}

func (w *writer) report(ctx context.Context, rep *Report) error {
	if err := w.open(); err != nil {
		return err
	}
	for i, f := range rep.Files {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := w.file(f); err != nil {
			return err
		}
	}
	return w.totals(rep)
}

func (w *writer) file(f File) error {
	sum, err := digest.Canonical(f.Summary.Raw)
	if err != nil {
		return err
	}
	if err := w.row(KindSummary, NameFile, string(sum), f.Name, false, 0, 0, ""); err != nil {
		return err
	}
	for _, l := range f.Executed {
		value, ctx := `{"hits":1}`, ""
		if c, ok := f.Contexts[l]; ok {
			v := map[string]any{"hits": 1, "contexts": c.Labels}
			if c.Total > len(c.Labels) {
				v["contexts_cut"], v["contexts_total"] = true, c.Total
			}
			b, err := digest.Canonical(v)
			if err != nil {
				return err
			}
			value = string(b)
			if len(c.Labels) == 1 {
				ctx = c.Labels[0]
			}
		}
		if err := w.row(KindLine, NameLine, value, f.Name, true, l, l, ctx); err != nil {
			return err
		}
	}
	for _, l := range f.Missing {
		if err := w.row(KindLine, NameLine, `{"hits":0}`, f.Name, true, l, l, ""); err != nil {
			return err
		}
	}
	for _, a := range f.ExecutedArcs {
		if err := w.row(KindArc, NameArc, `{"executed":true}`, f.Name, true, a.From, a.To, ""); err != nil {
			return err
		}
	}
	for _, a := range f.MissingArcs {
		if err := w.row(KindArc, NameArc, `{"executed":false}`, f.Name, true, a.From, a.To, ""); err != nil {
			return err
		}
	}
	return nil
}

// Measurement names of the run totals.
const (
	MStatements         = "coverage.statements"
	MCoveredStatements  = "coverage.covered_statements"
	MMissingStatements  = "coverage.missing_statements"
	MExcludedStatements = "coverage.excluded_statements"
	MPercentCovered     = "coverage.percent_covered"
	MBranches           = "coverage.branches"
	MCoveredBranches    = "coverage.covered_branches"
	MMissingBranches    = "coverage.missing_branches"
	MPartialBranches    = "coverage.partial_branches"
	MFiles              = "coverage.files"
)

// totals writes the report's totals as run measurements, as `coverage
// report` prints them on its TOTAL line.
func (w *writer) totals(rep *Report) error {
	t := rep.Totals
	dims := map[string]string{"coverage_version": rep.Version}
	if rep.Format > 0 {
		dims["format"] = strconv.Itoa(rep.Format)
	}
	count := func(name string, v int64) error {
		x := v
		id := digest.Bytes([]byte(w.run + "/" + w.art + "/" + name))
		return w.m.Write(schema.Measurement{ID: id, Name: name, Int: &x, Unit: "count", Aggregation: "count", Scope: "run",
			Dimensions: dims, EvidenceLevel: "observed"})
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{MStatements, t.NumStatements}, {MCoveredStatements, t.CoveredLines}, {MMissingStatements, t.MissingLines},
		{MExcludedStatements, t.ExcludedLines}, {MFiles, int64(len(rep.Files))}} {
		if err := count(c.name, c.v); err != nil {
			return err
		}
	}
	if t.HasBranches || rep.BranchCoverage {
		for _, c := range []struct {
			name string
			v    int64
		}{{MBranches, t.NumBranches}, {MCoveredBranches, t.CoveredBranches}, {MMissingBranches, t.MissingBranches},
			{MPartialBranches, t.NumPartialBranches}} {
			if err := count(c.name, c.v); err != nil {
				return err
			}
		}
	}
	pc := t.Percent()
	if t.HasPercent {
		pc = t.PercentCovered
	}
	id := digest.Bytes([]byte(w.run + "/" + w.art + "/" + MPercentCovered))
	return w.m.Write(schema.Measurement{ID: id, Name: MPercentCovered, Float: &pc, Unit: "percent", Aggregation: "value", Scope: "run",
		Dimensions: dims, EvidenceLevel: "observed"})
}

var _ adapter.Extractor = (*Extractor)(nil)
