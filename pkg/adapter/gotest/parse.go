package gotest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// maxLine is the longest input line handed to benchfmt (whose scanner
// stops the whole file at a line of 64 KiB); longer lines are skipped and
// counted.
const maxLine = 60 << 10

// event is one test2json event (cmd/test2json, `go test -json`).
type event struct {
	Action     string `json:"Action"`
	Package    string `json:"Package"`
	ImportPath string `json:"ImportPath"`
	Test       string `json:"Test"`
	Output     string `json:"Output"`
	Time       string `json:"Time"` // RFC 3339; parsed only where used
}

// suite counts one package's test events.
type suite struct {
	pkg                     string
	passed, failed, skipped int64
	outcome                 string // the package's own pass | fail | skip, if reported
	// start is the Time of the package's "start" event (go test is about
	// to run its test binary), end that of its own pass, fail or skip.
	start, end time.Time
}

// tally is what a parse found, beside the rows it emitted.
type tally struct {
	results    int // benchmark results emitted
	values     int // values emitted (one row each)
	syntax     int // benchfmt syntax errors
	firstErr   string
	badIters   int // results with an iteration count < 1, skipped
	nonFinite  int // NaN or ±Inf values, skipped
	dupUnits   int // a unit repeated within one result, skipped
	longLines  int // lines over maxLine, skipped
	notEvents  int // lines of a test2json stream that are not events
	runTimes   int // packages with a gotest.run_time row
	buildTimes int // packages with a gotest.build_time row
	suites     []*suite
}

// result is one benchmark result, as emitted to the row writer.
type result struct {
	worker string // pkg config, or the test2json package
	rec    *benchfmt.Result
	// config is the configuration in force at the result's line, as
	// sorted "key=value" strings.
	config []string
	// index is the repetition of the series (worker, full name with its
	// GOMAXPROCS suffix, config) in file order: -count N gives 0..N-1,
	// and a config line that changes mid-file (a second toolchain, say)
	// starts another series, as benchstat keeps them apart.
	index  int
	values []benchfmt.Value
}

// configOf returns the configuration in force at rec's line (benchfmt
// keeps it: every key: value line seen so far, an empty value deleting
// its key), sorted, as "key=value".
func configOf(rec *benchfmt.Result) []string {
	out := make([]string, 0, len(rec.Config))
	for _, c := range rec.Config {
		out = append(out, clean(c.Key)+"="+clean(string(c.Value)))
	}
	sort.Strings(out)
	return out
}

// parser reads go test output and calls emit for every valid result.
type parser struct {
	ctx  context.Context
	emit func(result) error
	t    tally
	seen map[string]int
}

func newParser(ctx context.Context, emit func(result) error) *parser {
	return &parser{ctx: ctx, emit: emit, seen: map[string]int{}}
}

// isStream reports whether head starts like a test2json event stream: its
// first line is a JSON object with an Action and a Package or ImportPath.
func isStream(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	var ev event
	return json.Unmarshal(line, &ev) == nil && ev.Action != "" && (ev.Package != "" || ev.ImportPath != "")
}

// stream reads a test2json stream: output events are concatenated per
// package (in order of appearance) and parsed as benchmark text; pass,
// fail and skip events of tests are counted per package.
func (p *parser) stream(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	texts := map[string]*bytes.Buffer{}
	suites := map[string]*suite{}
	for n := 0; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ev event
			if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
				p.t.notEvents++
			} else if ev.Action != "build-output" && ev.Action != "build-fail" {
				s := suites[ev.Package]
				if s == nil {
					s = &suite{pkg: ev.Package}
					suites[ev.Package], texts[ev.Package] = s, &bytes.Buffer{}
					p.t.suites = append(p.t.suites, s)
				}
				p.count(s, ev)
				if ev.Action == "output" {
					texts[ev.Package].WriteString(ev.Output)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if n%1024 == 0 && p.ctx.Err() != nil {
			return p.ctx.Err()
		}
	}
	for _, s := range p.t.suites {
		if err := p.text(bytes.NewReader(texts[s.pkg].Bytes()), s.pkg, s.pkg); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) count(s *suite, ev event) {
	outcome := map[string]string{"pass": "passed", "fail": "failed", "skip": "skipped"}[ev.Action]
	switch {
	case ev.Action == "start" && ev.Test == "" && s.start.IsZero():
		s.start = eventTime(ev.Time)
	case outcome == "":
	case ev.Test == "":
		s.outcome, s.end = outcome, eventTime(ev.Time)
	case outcome == "passed":
		s.passed++
	case outcome == "failed":
		s.failed++
	default:
		s.skipped++
	}
}

// eventTime parses a test2json Time, or returns the zero time.
func eventTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// text parses plain benchmark text with benchfmt; pkg is the default
// worker when the text has no "pkg:" line.
func (p *parser) text(r io.Reader, name, pkg string) error {
	br := benchfmt.NewReader(&lineFilter{r: bufio.NewReaderSize(r, 64<<10), long: &p.t.longLines}, name)
	for n := 0; br.Scan(); n++ {
		if n%1024 == 0 && p.ctx.Err() != nil {
			return p.ctx.Err()
		}
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			if p.t.syntax++; p.t.firstErr == "" {
				p.t.firstErr = rec.Error()
			}
		case *benchfmt.Result:
			if err := p.result(rec, pkg); err != nil {
				return err
			}
		}
	}
	return br.Err()
}

func (p *parser) result(rec *benchfmt.Result, pkg string) error {
	if rec.Iters < 1 {
		p.t.badIters++
		return nil
	}
	units := map[string]bool{}
	var vals []benchfmt.Value
	for _, v := range rec.Values {
		switch {
		case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
			p.t.nonFinite++
		case units[v.Unit]:
			p.t.dupUnits++
		default:
			units[v.Unit] = true
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	worker := clean(rec.GetConfig("pkg"))
	if worker == "" {
		worker = clean(pkg)
	}
	config := configOf(rec)
	key := worker + "\x00" + clean(rec.Name.String()) + "\x00" + strings.Join(config, "\x00")
	res := result{worker: worker, rec: rec, config: config, index: p.seen[key], values: vals}
	p.seen[key]++
	p.t.results++
	p.t.values += len(vals)
	return p.emit(res)
}

// clean makes a string valid UTF-8 for the evidence tables.
func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// lineFilter passes lines through, dropping (and counting) lines longer
// than maxLine so one huge line cannot stop benchfmt's scanner.
type lineFilter struct {
	r    *bufio.Reader
	long *int
	buf  []byte
	err  error
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		var line []byte
		line, f.err = f.r.ReadSlice('\n')
		if errors.Is(f.err, bufio.ErrBufferFull) || len(line) > maxLine {
			*f.long++
			for errors.Is(f.err, bufio.ErrBufferFull) {
				_, f.err = f.r.ReadSlice('\n')
			}
			continue
		}
		f.buf = append(f.buf[:0], line...)
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}
