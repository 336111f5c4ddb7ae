package pyperf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// The pyperf JSON format, as pyperf's own loader reads it
// (pyperf/_bench.py: BenchmarkSuite._json_load, Benchmark._json_load,
// Run._json_load and pyperf/_metadata.py: parse_metadata):
//
//	{"version": "1.0" | 6 | 5,
//	 "metadata": {...},                  // suite metadata (version >= 6)
//	 "benchmarks": [
//	   {"metadata": {...},               // "common_metadata" in version 5
//	    "runs": [
//	      {"metadata": {...},
//	       "warmups": [[loops, value], ...],
//	       "values": [value, ...]}]}]}    // "samples" in version 5
//
// A run's metadata is the suite's, overridden by the benchmark's, overridden
// by its own. Values are per loop iteration: the raw timing divided by
// loops × inner_loops; so are the warm-ups of version 1.0 files, while
// older files store a warm-up's raw timing (divided here, as pyperf does).
// A run without values is a calibration run (its warm-ups calibrate the
// loops or the warm-ups). pyperf writes keys sorted, so "version" comes
// last, after every benchmark: the file is read whole before its values
// are interpreted.
//
// The reader is written here rather than taken from a library because no
// Go library reads pyperf files; it streams tokens with encoding/json so
// that every value is counted against the caps before it is kept.

// MaxValues caps the values and warm-ups of one file, whatever
// limits.max_samples allows: a real pyperf file (a pyperformance suite, a
// --rigorous run) holds tens of thousands, and each becomes a row.
const MaxValues = 1 << 18

// MaxMetadata caps the metadata entries (suite, benchmark and run levels
// together, tags one each) and unknown keys of one file, whatever
// limits.max_strings allows; each entry becomes an observation.
const MaxMetadata = 1 << 18

// Units as pyperf names them (pyperf/_formatter.py UNIT_FORMATTERS) and
// as the measurements table stores them.
var units = map[string]string{"second": "sec", "byte": "bytes", "integer": "count"}

// Meta is one metadata entry, in file order.
type Meta struct {
	Key string
	// JSON is the value's canonical JSON (strings stripped, as pyperf
	// strips them).
	JSON string
	// Str and Int are the value as a string (for string values) and as
	// an integer (for integer values, ok set).
	Str   string
	Int   int64
	IsInt bool
}

// Warmup is one warm-up value and the loops it ran.
type Warmup struct {
	Loops uint64
	Value float64
}

// Run is one pyperf run: the values one worker process measured.
type Run struct {
	Metadata []Meta
	Warmups  []Warmup
	Values   []float64
	// Loops and InnerLoops are the run's effective outer and inner loops.
	Loops, InnerLoops uint64
	// Calibration names what a run without values calibrated: "loops",
	// "recalibrate_loops", "warmups" or "recalibrate_warmups"; "" for a
	// run with values.
	Calibration string

	samples    []float64 // version 5's name for values
	hasSamples bool
}

// Benchmark is one named benchmark and its runs.
type Benchmark struct {
	Name     string
	Unit     string // pyperf's spelling: second, byte, integer
	Metadata []Meta
	Runs     []Run

	commonMeta []Meta // version 5's name for metadata
	hasMeta    bool
}

// Suite is a whole pyperf file.
type Suite struct {
	Version    string // "1.0", "6" or "5"
	Metadata   []Meta
	Benchmarks []Benchmark
	// Skipped counts keys pyperf does not read, by name.
	Skipped map[string]int
	// Values and Warmups count them over the whole file.
	Values, Warmups int
}

// tooLarge is a cap that the input exceeds.
type tooLarge struct {
	limit    string // the [limits] key, or "" for a cap of this package
	max, n   int64
	counting string
}

func (e *tooLarge) Error() string {
	s := fmt.Sprintf("more than %d %s", e.max, e.counting)
	if e.limit != "" {
		s += " (limit " + e.limit + ")"
	}
	return s
}

// capped fails a read past left bytes with a tooLarge.
type capped struct {
	r    io.Reader
	left int64
	max  int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, &tooLarge{limit: "max_decompressed_bytes", max: c.max, n: c.max + 1, counting: "bytes of JSON"}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// isGzip reports the gzip magic.
func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// open returns the JSON text of r, gunzipped when it starts with the gzip
// magic, capped at max bytes after decompression.
func open(r io.Reader, max int64) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(2)
	if !isGzip(magic) {
		return &capped{r: br, left: max, max: max}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("gzip header: %w", err)
	}
	return &capped{r: gzipErrors{zr}, left: max, max: max}, nil
}

// gzipErrors names a truncated or corrupt gzip stream as such.
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("truncated gzip stream")
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		err = fmt.Errorf("corrupt gzip stream: %w", err)
	}
	return n, err
}

// limits are the caps of one read.
type limits struct {
	values, metas, strBytes, depth int64
	valuesKey, metasKey            string
}

func limitsOf(l config.Limits) limits {
	d := config.DefaultLimits()
	pick := func(v, def int64) int64 {
		if v <= 0 {
			return def
		}
		return v
	}
	out := limits{values: MaxValues, metas: MaxMetadata, strBytes: pick(l.MaxStringBytes, d.MaxStringBytes), depth: pick(l.MaxJSONDepth, d.MaxJSONDepth)}
	if s := pick(l.MaxSamples, d.MaxSamples); s < out.values {
		out.values, out.valuesKey = s, "max_samples"
	}
	if s := pick(l.MaxStrings, d.MaxStrings); s < out.metas {
		out.metas, out.metasKey = s, "max_strings"
	}
	return out
}

// decoder reads the token stream of one file.
type decoder struct {
	dec          *json.Decoder
	lim          limits
	values, meta int64
	strBytes     int64
	suite        *Suite
}

// Decode reads a whole pyperf file (plain or gzipped JSON) and checks it
// as pyperf's loader does. Decompressed bytes are capped by
// l.MaxDecompressedBytes, values and warm-ups by MaxValues (or
// l.MaxSamples if lower), metadata entries by MaxMetadata (or
// l.MaxStrings), the bytes of metadata strings by l.MaxStringBytes. A cap
// exceeded is an error wrapping a *tooLarge; anything pyperf would refuse,
// and NaN, infinite, zero or negative values, duplicate keys, benchmark
// names and runs (runIdentity), is an error.
func Decode(r io.Reader, l config.Limits) (*Suite, error) {
	max := l.MaxDecompressedBytes
	if max <= 0 {
		max = config.DefaultLimits().MaxDecompressedBytes
	}
	in, err := open(r, max)
	if err != nil {
		return nil, err
	}
	d := &decoder{dec: json.NewDecoder(in), lim: limitsOf(l), suite: &Suite{Skipped: map[string]int{}}}
	d.dec.UseNumber()
	if err := d.top(); err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("offset %d: data after the top-level object", d.dec.InputOffset())
		}
		return nil, d.wrap(err)
	}
	if err := d.suite.resolve(); err != nil {
		return nil, err
	}
	return d.suite, nil
}

// wrap adds the input offset to a syntax error.
func (d *decoder) wrap(err error) error {
	var tl *tooLarge
	if errors.As(err, &tl) {
		return err
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("offset %d: the JSON ends early (a truncated file)", d.dec.InputOffset())
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		hint := ""
		if strings.Contains(se.Error(), "'N'") || strings.Contains(se.Error(), "'I'") {
			hint = " (NaN and Infinity, which Python's json writes, are not numbers; pyperf refuses such values)"
		}
		return fmt.Errorf("offset %d: not valid JSON: %v%s", se.Offset, se, hint)
	}
	return err
}

func (d *decoder) token() (json.Token, error) {
	t, err := d.dec.Token()
	if err != nil {
		return nil, d.wrap(err)
	}
	return t, nil
}

// object reads one JSON object, calling field for each key (refusing a
// key given twice: Python's json keeps only the last, silently). With
// nullOK, a null stands for an absent object.
func (d *decoder) object(what string, nullOK bool, field func(key string) error) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if t == nil && nullOK {
		return nil
	}
	if t != json.Delim('{') {
		return fmt.Errorf("%s: want an object, got %s", what, describe(t))
	}
	seen := map[string]bool{}
	for d.dec.More() {
		t, err := d.token()
		if err != nil {
			return err
		}
		key := t.(string)
		if seen[key] {
			return fmt.Errorf("%s: the key %q is given twice", what, clip(key))
		}
		seen[key] = true
		if err := d.countString(key); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
	_, err = d.token() // '}'
	return err
}

// array reads one JSON array, calling elem for each element. With
// nullOK, a null stands for an absent array.
func (d *decoder) array(what string, nullOK bool, elem func(i int) error) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if t == nil && nullOK {
		return nil
	}
	if t != json.Delim('[') {
		return fmt.Errorf("%s: want an array, got %s", what, describe(t))
	}
	for i := 0; d.dec.More(); i++ {
		if err := elem(i); err != nil {
			return err
		}
	}
	_, err = d.token() // ']'
	return err
}

// maxSkippedNames bounds the distinct unknown keys named in limitations.
const maxSkippedNames = 100

// skip reads and drops one value of a key pyperf does not read.
func (d *decoder) skip(key string) error {
	// Unknown keys count as metadata entries: each is remembered while its
	// object is read (to refuse a key given twice).
	if d.meta++; d.meta > d.lim.metas {
		return &tooLarge{limit: d.lim.metasKey, max: d.lim.metas, n: d.meta, counting: "metadata entries and unknown keys"}
	}
	if k := clip(key); d.suite.Skipped[k] > 0 || len(d.suite.Skipped) < maxSkippedNames {
		d.suite.Skipped[k]++
	} else {
		d.suite.Skipped["(other keys)"]++
	}
	depth := int64(0)
	for {
		t, err := d.token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > d.lim.depth {
				return &tooLarge{limit: "max_json_depth", max: d.lim.depth, n: depth, counting: "levels of JSON nesting"}
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func (d *decoder) countString(s string) error {
	d.strBytes += int64(len(s))
	if d.strBytes > d.lim.strBytes {
		return &tooLarge{limit: "max_string_bytes", max: d.lim.strBytes, n: d.strBytes, counting: "bytes of metadata keys and strings"}
	}
	return nil
}

func (d *decoder) countValue() error {
	if d.values++; d.values > d.lim.values {
		return &tooLarge{limit: d.lim.valuesKey, max: d.lim.values, n: d.values, counting: "values and warm-ups"}
	}
	return nil
}

func (d *decoder) top() error {
	s := d.suite
	var hasBench, hasVersion bool
	err := d.object("the file", false, func(key string) error {
		switch key {
		case "version":
			hasVersion = true
			t, err := d.token()
			if err != nil {
				return err
			}
			switch v := t.(type) {
			case string:
				s.Version = v
			case json.Number:
				s.Version = v.String()
			default:
				return fmt.Errorf("version: want a string or a number, got %s", describe(t))
			}
			if s.Version != "1.0" && s.Version != "6" && s.Version != "5" {
				return fmt.Errorf("file format version %q is not one pyperf reads (1.0, 6 or 5)", clip(s.Version))
			}
			return nil
		case "metadata":
			m, err := d.metadata("metadata")
			s.Metadata = m
			return err
		case "benchmarks":
			hasBench = true
			return d.array("benchmarks", false, func(i int) error {
				b, err := d.benchmark(i)
				if err != nil {
					return fmt.Errorf("benchmarks[%d]: %w", i, err)
				}
				s.Benchmarks = append(s.Benchmarks, b)
				return nil
			})
		}
		return d.skip(key)
	})
	if err != nil {
		return err
	}
	switch {
	case !hasVersion:
		return errors.New("no \"version\": not a pyperf file")
	case !hasBench:
		return errors.New("no \"benchmarks\": not a pyperf file")
	case len(s.Benchmarks) == 0:
		return errors.New("the file doesn't contain any benchmark")
	}
	return nil
}

func (d *decoder) benchmark(i int) (Benchmark, error) {
	var b Benchmark
	hasRuns := false
	err := d.object("benchmark", false, func(key string) error {
		switch key {
		case "metadata", "common_metadata":
			m, err := d.metadata(key)
			if key == "metadata" {
				b.Metadata, b.hasMeta = m, true
			} else {
				b.commonMeta = m
			}
			return err
		case "runs":
			hasRuns = true
			return d.array("runs", false, func(j int) error {
				r, err := d.run()
				if err != nil {
					return fmt.Errorf("runs[%d]: %w", j, err)
				}
				b.Runs = append(b.Runs, r)
				return nil
			})
		}
		return d.skip(key)
	})
	if err != nil {
		return b, err
	}
	if !hasRuns {
		return b, errors.New("no \"runs\"")
	}
	if len(b.Runs) == 0 {
		return b, errors.New("runs must be a non-empty sequence of runs")
	}
	return b, nil
}

func (d *decoder) run() (Run, error) {
	var r Run
	err := d.object("run", false, func(key string) error {
		switch key {
		case "metadata":
			m, err := d.metadata("metadata")
			r.Metadata = m
			return err
		case "warmups":
			return d.array("warmups", true, func(j int) error {
				w, err := d.warmup()
				if err != nil {
					return fmt.Errorf("warmups[%d]: %w", j, err)
				}
				r.Warmups = append(r.Warmups, w)
				return nil
			})
		case "values", "samples":
			if key == "samples" {
				r.hasSamples = true
			}
			return d.array(key, false, func(j int) error {
				v, err := d.value(false)
				if err != nil {
					return fmt.Errorf("%s[%d]: %w", key, j, err)
				}
				if key == "values" {
					r.Values = append(r.Values, v)
				} else {
					r.samples = append(r.samples, v)
				}
				return nil
			})
		}
		return d.skip(key)
	})
	if err == nil && len(r.Values) == 0 && len(r.samples) == 0 && len(r.Warmups) == 0 {
		// Refused at once, so that every run kept holds a counted value.
		err = errors.New("values and warmups are empty")
	}
	return r, err
}

// value reads one number: finite and > 0 (pyperf's Run refuses others),
// or >= 0 for a warm-up.
func (d *decoder) value(warmup bool) (float64, error) {
	if err := d.countValue(); err != nil {
		return 0, err
	}
	t, err := d.token()
	if err != nil {
		return 0, err
	}
	n, ok := t.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want a number, got %s", describe(t))
	}
	v, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("the value %s is not a finite number", clip(n.String()))
	}
	if v < 0 || (!warmup && v == 0) {
		want := "> 0"
		if warmup {
			want = ">= 0"
		}
		return 0, fmt.Errorf("the value %s is not %s (pyperf refuses it)", n, want)
	}
	return v, nil
}

// warmup reads [loops, value]: loops an integer >= 1, value >= 0.
func (d *decoder) warmup() (Warmup, error) {
	var w Warmup
	n := 0
	err := d.array("warm-up", false, func(i int) error {
		n++
		switch i {
		case 0:
			t, err := d.token()
			if err != nil {
				return err
			}
			num, ok := t.(json.Number)
			l, perr := strconv.ParseUint(string(num), 10, 64)
			if !ok || perr != nil || l < 1 {
				return fmt.Errorf("the loops of a warm-up must be an integer >= 1, got %s", describe(t))
			}
			w.Loops = l
			return nil
		case 1:
			v, err := d.value(true)
			w.Value = v
			return err
		}
		return errors.New("a warm-up is a pair [loops, value]")
	})
	if err == nil && n != 2 {
		err = errors.New("a warm-up is a pair [loops, value]")
	}
	return w, err
}

// metadata reads one metadata object, checking each entry as pyperf's
// parse_metadata does.
func (d *decoder) metadata(what string) ([]Meta, error) {
	var out []Meta
	err := d.object(what, true, func(key string) error {
		if d.meta++; d.meta > d.lim.metas {
			return &tooLarge{limit: d.lim.metasKey, max: d.lim.metas, n: d.meta, counting: "metadata entries"}
		}
		m, err := d.metaValue(key)
		if err != nil {
			return fmt.Errorf("%s %q: %w", what, clip(key), err)
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// metaInfo is pyperf's registry of typed metadata (pyperf/_metadata.py
// METADATA): the accepted kind of value and its check.
var metaInfo = map[string]string{
	"loops": "int>=1", "inner_loops": "int>=1",
	"duration": "num>=0", "uptime": "num>=0", "load_avg_1min": "num>=0",
	"mem_max_rss": "int>=1", "mem_peak_pagefile_usage": "int>=1", "command_max_rss": "int>=1",
	"unit": "unit", "date": "str", "boot_time": "str",
	"calibrate_loops": "int>=1", "recalibrate_loops": "int>=1",
	"calibrate_warmups": "int>=0", "recalibrate_warmups": "int>=0",
	"tags": "tags",
}

func (d *decoder) metaValue(key string) (Meta, error) {
	m := Meta{Key: key}
	info := metaInfo[key]
	t, err := d.token()
	if err != nil {
		return m, err
	}
	var canon any
	switch v := t.(type) {
	case string:
		s := strings.TrimSpace(v)
		if strings.ContainsAny(s, "\r\n") {
			return m, errors.New("newline characters are not allowed in metadata values")
		}
		if s == "" {
			return m, errors.New("the value is empty")
		}
		if info != "" && info != "str" && info != "unit" {
			return m, fmt.Errorf("want %s, got a string", info)
		}
		if info == "unit" {
			if _, ok := units[s]; !ok {
				return m, fmt.Errorf("the unit %q is not one of pyperf's (second, byte, integer)", clip(s))
			}
		}
		if err := d.countString(s); err != nil {
			return m, err
		}
		m.Str, canon = s, s
	case json.Number:
		i, ierr := strconv.ParseInt(v.String(), 10, 64)
		isInt := ierr == nil
		f, ferr := strconv.ParseFloat(v.String(), 64)
		switch info {
		case "": // any number, as written
		case "num>=0":
			if ferr != nil || math.IsInf(f, 0) || f < 0 {
				return m, fmt.Errorf("want a number >= 0, got %s", clip(v.String()))
			}
		case "int>=1", "int>=0":
			if !isInt || i < 1 && info == "int>=1" || i < 0 {
				return m, fmt.Errorf("want an integer %s, got %s", strings.Replace(info[3:], ">=", ">= ", 1), v)
			}
		default:
			return m, fmt.Errorf("want %s, got a number", info)
		}
		m.Int, m.IsInt, canon = i, isInt, v
	case bool:
		if info != "" {
			return m, fmt.Errorf("want %s, got %v", info, v)
		}
		canon = v
	case json.Delim:
		if v != '[' || info != "tags" {
			return m, errors.New("want a string or a number")
		}
		var tags []string
		for d.dec.More() {
			t, err := d.token()
			if err != nil {
				return m, err
			}
			s, ok := t.(string)
			if !ok || s == "" || s == "all" {
				return m, fmt.Errorf("a tag must be a string other than \"\" and \"all\", got %s", describe(t))
			}
			if err := d.countString(s); err != nil {
				return m, err
			}
			if d.meta++; d.meta > d.lim.metas {
				return m, &tooLarge{limit: d.lim.metasKey, max: d.lim.metas, n: d.meta, counting: "metadata entries"}
			}
			tags = append(tags, s)
		}
		if _, err := d.token(); err != nil { // ']'
			return m, err
		}
		if tags == nil {
			tags = []string{}
		}
		canon = tags
	default:
		return m, fmt.Errorf("want a string or a number, got %s", describe(t))
	}
	b, err := canonical(canon)
	if err != nil {
		return m, err
	}
	m.JSON = string(b)
	return m, nil
}

// canonical is the JSON of v without HTML escaping (strings, numbers as
// written, booleans, lists of strings).
func canonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checked are the metadata every run of a benchmark must share (pyperf's
// _CHECKED_METADATA, enforced by Benchmark.add_run).
var checked = []string{"aslr", "cpu_count", "cpu_model_name", "hostname", "inner_loops", "name", "platform",
	"python_executable", "python_implementation", "python_unicode", "python_version", "unit"}

// lookup finds key in the run's effective metadata: its own, then the
// benchmark's, then the suite's.
func lookup(key string, levels ...[]Meta) (Meta, bool) {
	for _, l := range levels {
		for i := len(l) - 1; i >= 0; i-- {
			if l[i].Key == key {
				return l[i], true
			}
		}
	}
	return Meta{}, false
}

// resolve applies the file's version and checks what pyperf checks once
// the whole file is known: names, units, loops and shared metadata.
func (s *Suite) resolve() error {
	old := s.Version != "1.0"
	v5 := s.Version == "5"
	if v5 && len(s.Metadata) > 0 {
		s.Skipped["metadata (ignored by pyperf in version 5 files)"]++
		s.Metadata = nil
	}
	names := map[string]int{}
	for bi := range s.Benchmarks {
		b := &s.Benchmarks[bi]
		if v5 {
			b.Metadata = b.commonMeta
		}
		var first []string
		seen := map[string]int{} // run identity -> index, for runs with a date
		for ri := range b.Runs {
			r := &b.Runs[ri]
			if v5 {
				if !r.hasSamples {
					return fmt.Errorf("benchmarks[%d].runs[%d]: a version 5 run needs \"samples\"", bi, ri)
				}
				r.Values = r.samples
			}
			r.samples = nil
			lv := [][]Meta{r.Metadata, b.Metadata, s.Metadata}
			if len(r.Values) == 0 && len(r.Warmups) == 0 {
				return fmt.Errorf("benchmarks[%d].runs[%d]: values and warmups are empty", bi, ri)
			}
			r.Loops, r.InnerLoops = 1, 1
			if m, ok := lookup("loops", lv...); ok {
				r.Loops = uint64(m.Int)
			}
			if m, ok := lookup("inner_loops", lv...); ok {
				r.InnerLoops = uint64(m.Int)
			}
			if hi, _ := bits.Mul64(r.Loops, r.InnerLoops); hi != 0 {
				return fmt.Errorf("benchmarks[%d].runs[%d]: loops × inner_loops overflows", bi, ri)
			}
			for wi := range r.Warmups {
				w := &r.Warmups[wi]
				if hi, _ := bits.Mul64(w.Loops, r.InnerLoops); hi != 0 {
					return fmt.Errorf("benchmarks[%d].runs[%d].warmups[%d]: loops × inner_loops overflows", bi, ri, wi)
				}
				if old { // the raw timing before version 1.0
					w.Value /= float64(w.Loops) * float64(r.InnerLoops)
				}
			}
			if len(r.Values) == 0 {
				r.Calibration = "loops" // pyperf 1.1 and older name none
				for _, k := range []string{"calibrate_loops", "recalibrate_loops", "calibrate_warmups", "recalibrate_warmups"} {
					if _, ok := lookup(k, lv...); ok {
						r.Calibration = strings.TrimPrefix(k, "calibrate_")
						break
					}
				}
			}
			if date, ok := lookup("date", lv...); ok {
				id := runIdentity(date.JSON, r)
				if j, dup := seen[id]; dup {
					return fmt.Errorf("benchmarks[%d].runs[%d]: the same run as runs[%d] (started %s, the same values and warm-ups): a run recorded twice", bi, ri, j, clip(date.Str))
				}
				seen[id] = ri
			}
			vals := make([]string, len(checked))
			for i, k := range checked {
				if m, ok := lookup(k, lv...); ok {
					vals[i] = m.JSON
				}
			}
			if ri == 0 {
				first = vals
				name, ok := lookup("name", lv...)
				if !ok || name.Str == "" {
					return fmt.Errorf("benchmarks[%d]: a benchmark must have a name: the first run has no name metadata", bi)
				}
				b.Name, b.Unit = name.Str, "second"
				if u, ok := lookup("unit", lv...); ok {
					b.Unit = u.Str
				}
				continue
			}
			for i, k := range checked {
				if vals[i] != first[i] {
					return fmt.Errorf("benchmarks[%d].runs[%d]: incompatible benchmark, metadata %s is different: first run %s, this run %s",
						bi, ri, k, orNone(first[i]), orNone(vals[i]))
				}
			}
		}
		if j, dup := names[b.Name]; dup {
			return fmt.Errorf("benchmarks[%d]: the suite already has a benchmark called %q (benchmarks[%d])", bi, clip(b.Name), j)
		}
		names[b.Name] = bi
		for _, r := range b.Runs {
			s.Values += len(r.Values)
			s.Warmups += len(r.Warmups)
		}
	}
	return nil
}

// runIdentity is what makes a run itself: a worker process started at
// one moment (its date, to the microsecond) and measured these values.
// pyperf gives runs no id; two runs of one benchmark with the same start
// and the same values are one run recorded twice (a file merged with
// itself), which would count its values twice.
func runIdentity(date string, r *Run) string {
	var b strings.Builder
	b.WriteString(date)
	for _, w := range r.Warmups {
		b.WriteString("|w" + strconv.FormatUint(w.Loops, 10) + ":" + strconv.FormatFloat(w.Value, 'g', -1, 64))
	}
	for _, v := range r.Values {
		b.WriteString("|" + strconv.FormatFloat(v, 'g', -1, 64))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return clip(s)
}

// describe names a token for an error.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '{' || v == '}' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "the number " + clip(v.String())
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", t)
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}
