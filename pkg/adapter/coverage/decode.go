package coverage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// The coverage.py JSON report, as `coverage json` writes it
// (coverage/jsonreport.py, JsonReporter.report and report_one_file):
//
//	{"meta": {"format": 3, "version": "7.6.8", "timestamp": "...",
//	          "branch_coverage": true, "show_contexts": false},
//	 "files": {"pkg/mod.py": {
//	     "executed_lines": [1, 2], "missing_lines": [5], "excluded_lines": [],
//	     "summary": {"covered_lines": 2, "num_statements": 3, ...},
//	     "executed_branches": [[2, 3], [2, -1]], "missing_branches": [[4, 5]],
//	     "contexts": {"2": ["test_a", "test_b"]},
//	     "functions": {...}, "classes": {...}}},
//	 "totals": {"covered_lines": 2, "num_statements": 3, ...}}
//
// meta.format is absent before coverage.py 7 (6.x reports), 2 from 7.0
// and 3 from 7.5 (which adds the per-function and per-class regions).
// Branch keys appear with --branch data, contexts with --show-contexts.
// A branch arc whose target is negative leaves the code object (an exit;
// -N names the code object starting at line N).
//
// The reader is written here because no Go library reads coverage.py
// reports; it streams tokens with encoding/json so that every line, arc,
// context and name is counted against the limits before it is kept.

// Formats are the meta.format values this reader knows (0: absent).
var Formats = []int{0, 2, 3}

// MaxContextsPerLine bounds the context labels kept for one line; the
// line's observation says how many there were when more are cut.
const MaxContextsPerLine = 64

// maxSummaryKeys bounds the entries of one summary object (coverage.py
// writes at most a dozen).
const maxSummaryKeys = 64

// Report is one decoded coverage.py JSON report.
type Report struct {
	// Format is meta.format, 0 when the report has none (coverage.py 6).
	Format                       int
	Version, Timestamp           string
	BranchCoverage, ShowContexts bool
	Files                        []File
	Totals                       Summary
	// Rows counts the observations the report makes (lines, arcs, files).
	Rows int64
	// Replaced counts file names and contexts that held invalid UTF-8 or
	// lone surrogates, stored with U+FFFD.
	Replaced int
	// CutContexts counts the lines whose contexts were cut to
	// MaxContextsPerLine.
	CutContexts int
	// Unlisted counts the lines with contexts but not in executed_lines.
	Unlisted int
	// Skipped counts the keys this reader does not keep, by name
	// (functions and classes regions, unknown keys).
	Skipped map[string]int
}

// File is one measured file.
type File struct {
	// Name is the report's key, backslashes turned into slashes.
	Name                        string
	Executed, Missing, Excluded []int32
	ExecutedArcs, MissingArcs   []Arc
	// Contexts are the executed lines' context labels, by line.
	Contexts map[int32]Contexts
	// Unlisted counts the lines with contexts that executed_lines does not
	// list; they make no row.
	Unlisted int
	Summary  Summary
}

// Arc is a branch arc: From -> To, To < 0 an exit from the code object.
type Arc struct{ From, To int32 }

// Contexts are one line's context labels, at most MaxContextsPerLine of
// them, in the report's order; Total is how many the report lists.
type Contexts struct {
	Labels []string
	Total  int
}

// Summary is a summary object (a file's or the totals): the numbers the
// reader checks, and every entry as the report gives it.
type Summary struct {
	CoveredLines, NumStatements, MissingLines, ExcludedLines          int64
	NumBranches, NumPartialBranches, CoveredBranches, MissingBranches int64
	PercentCovered                                                    float64
	HasBranches, HasPercent                                           bool
	// Raw holds every entry, numbers as written (json.Number) and the
	// display strings.
	Raw map[string]any
}

// tooLarge is a limit exceeded while decoding.
type tooLarge struct {
	limit      string // [limits] key
	max, n     int64
	what       string
	lowerBound bool
}

func (e *tooLarge) Error() string {
	return fmt.Sprintf("more than %d %s (limit %s)", e.max, e.what, e.limit)
}

// limits are the caps of one read, zero fields of config.Limits taking
// their defaults.
type limits struct {
	bytes, rows, strs, strBytes, depth int64
}

func limitsOf(l config.Limits) limits {
	d := config.DefaultLimits()
	pick := func(v, def int64) int64 {
		if v <= 0 {
			return def
		}
		return v
	}
	return limits{bytes: pick(l.MaxDecompressedBytes, d.MaxDecompressedBytes), rows: pick(l.MaxEvents, d.MaxEvents),
		strs: pick(l.MaxStrings, d.MaxStrings), strBytes: pick(l.MaxStringBytes, d.MaxStringBytes), depth: pick(l.MaxJSONDepth, d.MaxJSONDepth)}
}

// capReader fails once more than max bytes were read.
type capReader struct {
	r      io.Reader
	n, max int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n, &tooLarge{limit: "max_decompressed_bytes", max: c.max, n: c.n, what: "bytes of JSON", lowerBound: true}
	}
	return n, err
}

type decoder struct {
	dec    *json.Decoder
	lim    limits
	rep    *Report
	strs   int64
	bytes  int64
	intern map[string]string
	seen   struct{ meta, files, totals bool }
}

// Decode reads a whole coverage.py JSON report and checks it as
// coverage.py would have written it: line numbers positive and listed
// once, arcs between lines, every file with its summary, and totals that
// are the sum of the files' summaries. Bytes are capped by
// l.MaxDecompressedBytes, observation rows (lines, arcs, files) by
// l.MaxEvents, kept names and context labels by l.MaxStrings and
// l.MaxStringBytes, nesting of skipped values by l.MaxJSONDepth; a cap
// exceeded is an error wrapping a *tooLarge.
func Decode(r io.Reader, l config.Limits) (*Report, error) {
	lim := limitsOf(l)
	d := &decoder{lim: lim, rep: &Report{Skipped: map[string]int{}}, intern: map[string]string{}}
	br := bufio.NewReader(&capReader{r: r, max: lim.bytes})
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3) // a byte order mark, which Python's json refuses but an editor may add
	}
	d.dec = json.NewDecoder(br)
	d.dec.UseNumber()
	if err := d.top(); err != nil {
		return nil, d.wrap(err)
	}
	if _, err := d.dec.Token(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("offset %d: data after the top-level object", d.dec.InputOffset())
		}
		return nil, d.wrap(err)
	}
	if err := d.rep.check(); err != nil {
		return nil, err
	}
	return d.rep, nil
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
		return fmt.Errorf("offset %d: invalid JSON: %v", se.Offset, se)
	}
	return err
}

func (d *decoder) errf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", d.dec.InputOffset(), fmt.Sprintf(format, args...))
}

func (d *decoder) delim(want json.Delim, what string) error {
	t, err := d.dec.Token()
	if err != nil {
		return err
	}
	if t != want {
		return d.errf("%s is not a JSON %s", what, kindOf(want))
	}
	return nil
}

func kindOf(d json.Delim) string {
	if d == '[' {
		return "array"
	}
	return "object"
}

// key reads an object key, or reports the end of the object.
func (d *decoder) key() (string, bool, error) {
	if !d.dec.More() {
		_, err := d.dec.Token() // the closing brace
		return "", false, err
	}
	t, err := d.dec.Token()
	if err != nil {
		return "", false, err
	}
	return t.(string), true, nil
}

func (d *decoder) top() error {
	t, err := d.dec.Token()
	if err != nil {
		if err == io.EOF {
			return errors.New("the file is empty, not a coverage.py JSON report")
		}
		return err
	}
	if t != json.Delim('{') {
		return errors.New("not a JSON object, so not a coverage.py JSON report")
	}
	for {
		k, ok, err := d.key()
		if err != nil || !ok {
			return err
		}
		switch k {
		case "meta":
			if d.seen.meta {
				return d.errf("the key meta appears twice")
			}
			d.seen.meta = true
			err = d.meta()
		case "files":
			if d.seen.files {
				return d.errf("the key files appears twice")
			}
			d.seen.files = true
			err = d.files()
		case "totals":
			if d.seen.totals {
				return d.errf("the key totals appears twice")
			}
			d.seen.totals = true
			d.rep.Totals, err = d.summary("totals")
		default:
			d.rep.Skipped[skippedKey("", k)]++
			err = d.skip()
		}
		if err != nil {
			return err
		}
	}
}

// skippedKey names a skipped key for the limitations, bounded and quoted
// when it is not a plain identifier.
func skippedKey(prefix, k string) string {
	if len(k) > 64 || strings.ContainsFunc(k, func(r rune) bool { return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if len(k) > 64 {
			k = k[:64]
		}
		k = strconv.QuoteToASCII(k)
	}
	return prefix + k
}

func (d *decoder) meta() error {
	if err := d.delim('{', "meta"); err != nil {
		return err
	}
	seenVersion := false
	for {
		k, ok, err := d.key()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		t, err := d.dec.Token()
		if err != nil {
			return err
		}
		switch k {
		case "version", "timestamp":
			s, isStr := t.(string)
			if !isStr {
				return d.errf("meta.%s is not a string", k)
			}
			if len(s) > 256 {
				return d.errf("meta.%s is longer than 256 bytes", k)
			}
			if k == "version" {
				d.rep.Version, seenVersion = s, true
			} else {
				d.rep.Timestamp = s
			}
		case "format":
			n, isNum := t.(json.Number)
			v, err := strconv.Atoi(string(n))
			if !isNum || err != nil || v < 1 {
				return d.errf("meta.format is not a positive integer")
			}
			d.rep.Format = v
		case "branch_coverage", "show_contexts":
			b, isBool := t.(bool)
			if !isBool {
				return d.errf("meta.%s is not true or false", k)
			}
			if k == "branch_coverage" {
				d.rep.BranchCoverage = b
			} else {
				d.rep.ShowContexts = b
			}
		default:
			d.rep.Skipped[skippedKey("meta.", k)]++
			if err := d.skipFrom(t); err != nil {
				return err
			}
		}
	}
	if !seenVersion {
		return errors.New("meta has no version: not a coverage.py JSON report")
	}
	return nil
}

// name keeps a file name or context label, counted against the string
// limits; repeated context labels are kept once.
func (d *decoder) name(s string, intern bool) (string, error) {
	if intern {
		if v, ok := d.intern[s]; ok {
			return v, nil
		}
	}
	d.strs++
	d.bytes += int64(len(s))
	if d.strs > d.lim.strs {
		return "", &tooLarge{limit: "max_strings", max: d.lim.strs, n: d.strs, what: "file names and context labels", lowerBound: true}
	}
	if d.bytes > d.lim.strBytes {
		return "", &tooLarge{limit: "max_string_bytes", max: d.lim.strBytes, n: d.bytes, what: "bytes of file names and context labels", lowerBound: true}
	}
	if strings.ContainsRune(s, '\uFFFD') {
		d.rep.Replaced++
	}
	if intern {
		d.intern[s] = s
	}
	return s, nil
}

// row counts one observation row against the limit.
func (d *decoder) row() error {
	d.rep.Rows++
	if d.rep.Rows > d.lim.rows {
		return &tooLarge{limit: "max_events", max: d.lim.rows, n: d.rep.Rows, what: "observation rows (lines, branch arcs and files)", lowerBound: true}
	}
	return nil
}

func (d *decoder) files() error {
	if err := d.delim('{', "files"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for {
		k, ok, err := d.key()
		if err != nil || !ok {
			return err
		}
		name := strings.ReplaceAll(k, "\\", "/")
		if name == "" {
			return d.errf("a file has an empty name")
		}
		if seen[name] {
			return d.errf("the file %q is listed twice", name)
		}
		if name, err = d.name(name, false); err != nil {
			return err
		}
		seen[name] = true
		if err := d.row(); err != nil {
			return err
		}
		f, err := d.file(name)
		if err != nil {
			return err
		}
		d.rep.Files = append(d.rep.Files, f)
	}
}

func (d *decoder) file(name string) (File, error) {
	f := File{Name: name}
	if err := d.delim('{', fmt.Sprintf("the entry of %q", name)); err != nil {
		return f, err
	}
	var hasSummary bool
	for {
		k, ok, err := d.key()
		if err != nil {
			return f, err
		}
		if !ok {
			break
		}
		switch k {
		case "executed_lines":
			f.Executed, err = d.lines(name, k)
		case "missing_lines":
			f.Missing, err = d.lines(name, k)
		case "excluded_lines":
			f.Excluded, err = d.lines(name, k)
		case "executed_branches":
			f.ExecutedArcs, err = d.arcs(name, k)
		case "missing_branches":
			f.MissingArcs, err = d.arcs(name, k)
		case "contexts":
			f.Contexts, err = d.contexts(name)
		case "summary":
			hasSummary = true
			f.Summary, err = d.summary(fmt.Sprintf("the summary of %q", name))
		default:
			d.rep.Skipped[skippedKey("files.*.", k)]++
			err = d.skip()
		}
		if err != nil {
			return f, err
		}
	}
	if !hasSummary {
		return f, d.errf("the file %q has no summary", name)
	}
	if err := f.check(); err != nil {
		return f, err
	}
	d.rep.Unlisted += f.Unlisted
	return f, nil
}

// lines reads an array of line numbers; excluded lines make no row.
func (d *decoder) lines(file, key string) ([]int32, error) {
	r, err := d.raw()
	if err != nil {
		return nil, err
	}
	var out []int32
	err = r.array(func() error {
		n, ok := r.int()
		if !ok || n < 0 {
			return d.errf("%s of %q holds %s, not a line number", key, file, r.what())
		}
		if key != "excluded_lines" {
			if err := d.row(); err != nil {
				return err
			}
		}
		out = append(out, n)
		return nil
	})
	if err == errNotArray {
		return nil, d.errf("%s of %q is not a JSON array", key, file)
	}
	return out, err
}

func (d *decoder) arcs(file, key string) ([]Arc, error) {
	r, err := d.raw()
	if err != nil {
		return nil, err
	}
	var out []Arc
	err = r.array(func() error {
		var a [2]int32
		i := 0
		err := r.array(func() error {
			n, ok := r.int()
			if !ok || i == 2 {
				return d.errf("an arc of %s of %q is not two line numbers", key, file)
			}
			a[i] = n
			i++
			return nil
		})
		if err == errNotArray || (err == nil && i != 2) {
			return d.errf("an arc of %s of %q is not two line numbers", key, file)
		}
		if err != nil {
			return err
		}
		if err := d.row(); err != nil {
			return err
		}
		out = append(out, Arc{a[0], a[1]})
		return nil
	})
	if err == errNotArray {
		return nil, d.errf("%s of %q is not a JSON array", key, file)
	}
	return out, err
}

// raw reads the next value whole (encoding/json's scanner checks its
// syntax), for the fast scan of number arrays: its size is bounded by
// the bytes limit, and what is kept of it by the row limit.
func (d *decoder) raw() (*rawScan, error) {
	var m json.RawMessage
	if err := d.dec.Decode(&m); err != nil {
		return nil, err
	}
	return &rawScan{b: m}, nil
}

var errNotArray = errors.New("not an array")

// rawScan walks a syntactically valid JSON value.
type rawScan struct {
	b []byte
	i int
}

func (r *rawScan) ws() {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\t' || r.b[r.i] == '\n' || r.b[r.i] == '\r') {
		r.i++
	}
}

// array calls elem for each element of the array at the cursor; elem
// consumes the element.
func (r *rawScan) array(elem func() error) error {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '[' {
		return errNotArray
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		return nil
	}
	for {
		r.ws()
		if err := elem(); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return errNotArray
		}
		c := r.b[r.i]
		r.i++
		switch c {
		case ',':
		case ']':
			return nil
		default:
			return errNotArray
		}
	}
}

// int reads an integer that fits in 32 bits.
func (r *rawScan) int() (int32, bool) {
	start := r.i
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	if r.i < len(r.b) && (r.b[r.i] == '.' || r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i = start
		return 0, false
	}
	v, err := strconv.ParseInt(string(r.b[start:r.i]), 10, 32)
	if err != nil {
		r.i = start
		return 0, false
	}
	return int32(v), true
}

// what describes the value at the cursor, for a message.
func (r *rawScan) what() string {
	if r.i >= len(r.b) {
		return "nothing"
	}
	switch r.b[r.i] {
	case '"':
		return "a string"
	case '[':
		return "a JSON array"
	case '{':
		return "a JSON object"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	end := r.i
	for end < len(r.b) && end-r.i < 40 && strings.IndexByte(",]} \t\r\n", r.b[end]) < 0 {
		end++
	}
	return "the number " + string(r.b[r.i:end])
}

func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '[' {
			return "a JSON array"
		}
		return "a JSON object"
	case string:
		return "the string " + strconv.QuoteToASCII(clip(v))
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func (d *decoder) contexts(file string) (map[int32]Contexts, error) {
	if err := d.delim('{', fmt.Sprintf("the contexts of %q", file)); err != nil {
		return nil, err
	}
	out := map[int32]Contexts{}
	for {
		k, ok, err := d.key()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		line, err := strconv.ParseInt(k, 10, 32)
		if err != nil || line < 1 {
			return nil, d.errf("the contexts of %q name %s, not a line", file, strconv.QuoteToASCII(clip(k)))
		}
		if _, dup := out[int32(line)]; dup {
			return nil, d.errf("the contexts of %q list line %d twice", file, line)
		}
		if err := d.delim('[', fmt.Sprintf("the contexts of line %d of %q", line, file)); err != nil {
			return nil, err
		}
		var c Contexts
		for d.dec.More() {
			t, err := d.dec.Token()
			if err != nil {
				return nil, err
			}
			s, isStr := t.(string)
			if !isStr {
				return nil, d.errf("the contexts of line %d of %q hold %s, not a label", line, file, describe(t))
			}
			c.Total++
			if len(c.Labels) < MaxContextsPerLine {
				if s, err = d.name(s, true); err != nil {
					return nil, err
				}
				c.Labels = append(c.Labels, s)
			}
		}
		if _, err := d.dec.Token(); err != nil {
			return nil, err
		}
		if c.Total > len(c.Labels) {
			d.rep.CutContexts++
		}
		out[int32(line)] = c
	}
}

// summary reads a summary object: flat, numbers and display strings.
func (d *decoder) summary(what string) (Summary, error) {
	s := Summary{Raw: map[string]any{}}
	if err := d.delim('{', what); err != nil {
		return s, err
	}
	for {
		k, ok, err := d.key()
		if err != nil {
			return s, err
		}
		if !ok {
			break
		}
		if len(s.Raw) >= maxSummaryKeys {
			return s, d.errf("%s has more than %d entries", what, maxSummaryKeys)
		}
		if _, dup := s.Raw[k]; dup {
			return s, d.errf("%s lists %s twice", what, strconv.QuoteToASCII(clip(k)))
		}
		t, err := d.dec.Token()
		if err != nil {
			return s, err
		}
		switch v := t.(type) {
		case string:
			if len(v) > 64 {
				return s, d.errf("%s: %s is a string longer than 64 bytes", what, strconv.QuoteToASCII(clip(k)))
			}
			s.Raw[k] = v
		case json.Number:
			s.Raw[k] = v
			if err := s.set(k, v); err != nil {
				return s, d.errf("%s: %v", what, err)
			}
		default:
			return s, d.errf("%s: %s is %s, not a number", what, strconv.QuoteToASCII(clip(k)), describe(t))
		}
	}
	for _, k := range []string{"covered_lines", "num_statements", "missing_lines"} {
		if _, ok := s.Raw[k]; !ok {
			return s, d.errf("%s has no %s", what, k)
		}
	}
	return s, nil
}

// set keeps the number of a known summary key.
func (s *Summary) set(k string, v json.Number) error {
	if k == "percent_covered" {
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
			return fmt.Errorf("percent_covered %s is not a percentage", clip(string(v)))
		}
		s.PercentCovered, s.HasPercent = f, true
		return nil
	}
	var dst *int64
	switch k {
	case "covered_lines":
		dst = &s.CoveredLines
	case "num_statements":
		dst = &s.NumStatements
	case "missing_lines":
		dst = &s.MissingLines
	case "excluded_lines":
		dst = &s.ExcludedLines
	case "num_branches":
		dst, s.HasBranches = &s.NumBranches, true
	case "num_partial_branches":
		dst = &s.NumPartialBranches
	case "covered_branches":
		dst = &s.CoveredBranches
	case "missing_branches":
		dst = &s.MissingBranches
	default:
		return nil // other numbers (percent_statements_covered, ...) are kept raw
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("%s %s is not a count", k, clip(string(v)))
	}
	*dst = n
	return nil
}

// skip reads and discards one value (the per-function and per-class
// regions are most of a format 3 report), bounding its nesting.
func (d *decoder) skip() error {
	var m json.RawMessage
	if err := d.dec.Decode(&m); err != nil {
		return err
	}
	// +2: the top-level object and the object holding this value.
	if n := depth(m); n+2 > d.lim.depth {
		return &tooLarge{limit: "max_json_depth", max: d.lim.depth, n: n + 2, what: "levels of JSON nesting", lowerBound: false}
	}
	return nil
}

// depth is the deepest nesting of arrays and objects in a valid JSON
// value.
func depth(b []byte) int64 {
	var n, max int64
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '[' || c == '{':
			n++
			if n > max {
				max = n
			}
		case c == ']' || c == '}':
			n--
		}
	}
	return max
}

func (d *decoder) skipFrom(t json.Token) error {
	if dl, ok := t.(json.Delim); !ok || (dl != '{' && dl != '[') {
		return nil
	}
	depth := int64(1)
	for depth > 0 {
		t, err := d.dec.Token()
		if err != nil {
			return err
		}
		if dl, ok := t.(json.Delim); ok {
			if dl == '{' || dl == '[' {
				depth++
				// +2: the top-level object and the key holding this value.
				if depth+2 > d.lim.depth {
					return &tooLarge{limit: "max_json_depth", max: d.lim.depth, n: depth + 2, what: "levels of JSON nesting", lowerBound: true}
				}
			} else {
				depth--
			}
		}
	}
	return nil
}

// check verifies what coverage.py guarantees of one file: each line
// listed once, in one of executed and missing; each arc once, in one of
// executed and missing. coverage.py gives contexts for every line that
// ran, also for lines executed_lines leaves out (a module docstring):
// those are counted in Unlisted.
func (f *File) check() error {
	ex, mi := sortedCopy(f.Executed), sortedCopy(f.Missing)
	for _, l := range [][]int32{ex, mi} {
		for i := 1; i < len(l); i++ {
			if l[i] == l[i-1] {
				return fmt.Errorf("the file %q lists line %d twice", f.Name, l[i])
			}
		}
	}
	for _, l := range mi {
		if _, found := slices.BinarySearch(ex, l); found {
			return fmt.Errorf("the file %q lists line %d as both executed and missing", f.Name, l)
		}
	}
	arcs := map[Arc]bool{}
	for _, a := range append(append([]Arc{}, f.ExecutedArcs...), f.MissingArcs...) {
		if arcs[a] {
			return fmt.Errorf("the file %q lists the arc %d->%d twice", f.Name, a.From, a.To)
		}
		arcs[a] = true
	}
	for line := range f.Contexts {
		if _, found := slices.BinarySearch(ex, line); !found {
			f.Unlisted++
		}
	}
	return nil
}

func sortedCopy(l []int32) []int32 {
	if slices.IsSorted(l) {
		return l
	}
	c := slices.Clone(l)
	slices.Sort(c)
	return c
}

// check verifies the report as a whole: meta, files and totals are there,
// and the totals are the sum of the files' summaries.
func (r *Report) check() error {
	switch {
	case r.Version == "":
		return errors.New("the report has no meta object with a version: not a coverage.py JSON report")
	}
	var sum Summary
	for _, f := range r.Files {
		s := f.Summary
		sum.CoveredLines += s.CoveredLines
		sum.NumStatements += s.NumStatements
		sum.MissingLines += s.MissingLines
		sum.ExcludedLines += s.ExcludedLines
		sum.NumBranches += s.NumBranches
		sum.NumPartialBranches += s.NumPartialBranches
		sum.CoveredBranches += s.CoveredBranches
		sum.MissingBranches += s.MissingBranches
	}
	t := r.Totals
	if t.Raw == nil {
		return errors.New("the report has no totals")
	}
	for _, c := range []struct {
		key       string
		tot, file int64
	}{
		{"num_statements", t.NumStatements, sum.NumStatements}, {"covered_lines", t.CoveredLines, sum.CoveredLines},
		{"missing_lines", t.MissingLines, sum.MissingLines}, {"excluded_lines", t.ExcludedLines, sum.ExcludedLines},
		{"num_branches", t.NumBranches, sum.NumBranches}, {"num_partial_branches", t.NumPartialBranches, sum.NumPartialBranches},
		{"covered_branches", t.CoveredBranches, sum.CoveredBranches}, {"missing_branches", t.MissingBranches, sum.MissingBranches},
	} {
		if c.tot != c.file {
			return fmt.Errorf("totals.%s is %d but the files' summaries add up to %d", c.key, c.tot, c.file)
		}
	}
	if t.CoveredLines+t.MissingLines != t.NumStatements {
		return fmt.Errorf("totals: covered_lines %d + missing_lines %d is not num_statements %d", t.CoveredLines, t.MissingLines, t.NumStatements)
	}
	if t.HasBranches && t.CoveredBranches+t.MissingBranches != t.NumBranches {
		return fmt.Errorf("totals: covered_branches %d + missing_branches %d is not num_branches %d", t.CoveredBranches, t.MissingBranches, t.NumBranches)
	}
	return nil
}

// Percent is coverage.py's percentage of a summary (Numbers.pc_covered):
// executed statements and branches over statements and branches, 100
// when there are none.
func (s Summary) Percent() float64 {
	den := s.NumStatements + s.NumBranches
	if den == 0 {
		return 100
	}
	return 100 * float64(s.CoveredLines+s.CoveredBranches) / float64(den)
}

// looksCoverage reads the top of a JSON prefix as tokens (a cut-off
// prefix is fine) and reports whether it is shaped like a coverage.py
// report: an object whose "meta" object has a "version" string (and a
// numeric "format", if any) beside a "files" object, coverage.py writing
// meta first.
func looksCoverage(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	meta := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case "meta":
			if meta = metaShaped(dec); !meta {
				return false
			}
		case "files":
			t, err := dec.Token()
			return err == nil && t == json.Delim('{') && meta
		default:
			return false
		}
	}
	return false
}

// metaShaped reads a meta object and reports whether it has a version
// string and, if any, a numeric format.
func metaShaped(dec *json.Decoder) bool {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	version := false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		v, err := dec.Token()
		if err != nil {
			return false
		}
		switch k {
		case "version":
			_, ok := v.(string)
			version = ok
		case "format":
			if _, ok := v.(json.Number); !ok {
				return false
			}
		}
		if dl, ok := v.(json.Delim); ok && (dl == '{' || dl == '[') {
			return false // coverage.py's meta is flat
		}
	}
	_, err := dec.Token()
	return err == nil && version
}
