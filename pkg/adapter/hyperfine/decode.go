package hyperfine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// export is a decoded `hyperfine --export-json` file.
type export struct {
	results []*bench
	// skipped names the keys of results entries this decoder does not read
	// (a later hyperfine's fields), each once.
	skipped []string
}

// bench is one entry of "results": the runs of one command.
type bench struct {
	command string
	// times are the wall-clock times of the runs, in seconds.
	times []float64
	// user and system are CPU times in seconds: hyperfine writes the mean
	// over the runs; a file with one value per run keeps them all.
	user, system cpu
	// memory is memory_usage_byte (hyperfine 1.20 and later), per run.
	memory []int64
	// exit is exit_codes (hyperfine 1.12 and later), per run; nil when
	// absent. A null code (the run was ended by a signal) is not ok.
	exit []exitCode
	// params is the "parameters" map (hyperfine 1.11 and later); param is
	// the unnamed "parameter" value of earlier versions.
	params   map[string]string
	param    *string
	summary  map[string]float64 // mean, stddev, median, min, max as written
	hasTimes bool
	hasCmd   bool
}

type cpu struct {
	mean *float64
	runs []float64
}

type exitCode struct {
	code int32
	ok   bool
}

// parseError is a malformed file: where (a JSON path) and what.
type parseError struct {
	at     string
	offset int64
	msg    string
}

func (e *parseError) Error() string {
	if e.at == "" {
		return e.msg
	}
	return e.at + ": " + e.msg
}

// limitError is a file over one of the workspace's [limits].
type limitError struct {
	key           string // as config.toml spells it under [limits]
	max, observed int64
	what          string
}

func (e *limitError) Error() string {
	return fmt.Sprintf("more than %d %s: the file exceeds limit %s", e.max, e.what, e.key)
}

// Limit keys the decoder counts against (pkg/profile names them).
const (
	limitBytes       = "max_decompressed_bytes"
	limitSamples     = "max_samples"
	limitStrings     = "max_strings"
	limitStringBytes = "max_string_bytes"
	limitDepth       = "max_json_depth"
)

// decoder walks the JSON tokens of an export, counting what it keeps.
type decoder struct {
	dec                          *json.Decoder
	lim                          config.Limits
	values, strings, stringBytes int64
}

// withDefaults fills zero fields of l from config.DefaultLimits.
func withDefaults(l config.Limits) config.Limits {
	def := config.DefaultLimits()
	for _, f := range []struct{ v, d *int64 }{
		{&l.MaxDecompressedBytes, &def.MaxDecompressedBytes}, {&l.MaxSamples, &def.MaxSamples},
		{&l.MaxStrings, &def.MaxStrings}, {&l.MaxStringBytes, &def.MaxStringBytes}, {&l.MaxJSONDepth, &def.MaxJSONDepth},
	} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return l
}

// decode reads a whole export from r and checks it; it returns a
// *parseError or a *limitError (or r's own error) when the file is not a
// well-formed export within lim.
func decode(r io.Reader, lim config.Limits) (*export, error) {
	d := &decoder{dec: json.NewDecoder(r), lim: withDefaults(lim)}
	d.dec.UseNumber()
	x := &export{}
	if err := d.open('{', "", 1); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for d.dec.More() {
		key, err := d.key("", seen)
		if err != nil {
			return nil, err
		}
		if key == "results" {
			err = d.results(x)
		} else {
			err = d.skip(key, 2)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := d.close('}', ""); err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, d.fail("", "data after the end of the JSON object")
	}
	if !seen["results"] {
		return nil, d.fail("", `no "results" array: not a hyperfine --export-json file`)
	}
	if len(x.results) == 0 {
		return nil, d.fail("results", "empty: the file holds no benchmark")
	}
	sort.Strings(x.skipped)
	return x, nil
}

func (d *decoder) results(x *export) error {
	if err := d.open('[', "results", 2); err != nil {
		return err
	}
	skipped := map[string]bool{}
	for i := 0; d.dec.More(); i++ {
		at := "results[" + strconv.Itoa(i) + "]"
		b, err := d.bench(at, skipped)
		if err != nil {
			return err
		}
		x.results = append(x.results, b)
	}
	for k := range skipped {
		x.skipped = append(x.skipped, k)
	}
	return d.close(']', "results")
}

// bench reads one entry of results and checks its arrays agree.
func (d *decoder) bench(at string, skipped map[string]bool) (*bench, error) {
	if err := d.open('{', at, 3); err != nil {
		return nil, err
	}
	b := &bench{summary: map[string]float64{}}
	seen := map[string]bool{}
	for d.dec.More() {
		key, err := d.key(at, seen)
		if err != nil {
			return nil, err
		}
		kat := at + "." + key
		switch key {
		case "command":
			b.command, err = d.str(kat)
			b.hasCmd = err == nil
		case "times":
			b.times, err = d.floats(kat)
			b.hasTimes = err == nil
		case "user":
			b.user, err = d.cpu(kat)
		case "system":
			b.system, err = d.cpu(kat)
		case "memory_usage_byte":
			b.memory, err = d.memory(kat)
		case "exit_codes":
			b.exit, err = d.exitCodes(kat)
		case "parameters":
			b.params, err = d.params(kat)
		case "parameter":
			b.param, err = d.optStr(kat)
		case "mean", "stddev", "median", "min", "max":
			var v *float64
			if v, err = d.optNumber(kat); err == nil && v != nil {
				b.summary[key] = *v
			}
		default:
			if !skipped[key] {
				if err = d.keep(kat, key); err == nil {
					skipped[key] = true
				}
			}
			if err == nil {
				err = d.skip(kat, 4)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := d.close('}', at); err != nil {
		return nil, err
	}
	return b, d.check(at, b)
}

// check refuses an entry that cannot be read run by run: no command, no
// times, or per-run arrays whose lengths differ from times.
func (d *decoder) check(at string, b *bench) error {
	switch {
	case !b.hasCmd:
		return d.fail(at, `no "command"`)
	case !b.hasTimes:
		return d.fail(at, `no "times": hyperfine writes every run's time there (the summaries alone are not samples)`)
	case len(b.times) == 0:
		return d.fail(at+".times", "empty: a benchmark has at least one run")
	}
	n := len(b.times)
	for _, a := range []struct {
		name string
		k    int
		has  bool
	}{
		{"exit_codes", len(b.exit), b.exit != nil}, {"memory_usage_byte", len(b.memory), b.memory != nil},
		{"user", len(b.user.runs), b.user.runs != nil}, {"system", len(b.system.runs), b.system.runs != nil},
	} {
		if a.has && a.k != n {
			return d.fail(at+"."+a.name, fmt.Sprintf("%d values for %d runs in times", a.k, n))
		}
	}
	return nil
}

// fail returns a parseError at the decoder's offset.
func (d *decoder) fail(at, msg string) error {
	return &parseError{at: at, offset: d.dec.InputOffset(), msg: msg}
}

// token returns the next token; the end of the input is an error here
// (a truncated file), and the decoder's syntax errors name the path.
func (d *decoder) token(at string) (json.Token, error) {
	t, err := d.dec.Token()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, d.fail(at, "the file ends early (truncated JSON)")
	case err != nil:
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &parseError{at: at, offset: se.Offset, msg: "invalid JSON: " + se.Error()}
		}
		return nil, err // the reader's own error, or a limit
	}
	return t, nil
}

func (d *decoder) open(delim json.Delim, at string, depth int64) error {
	if depth > d.lim.MaxJSONDepth {
		return &limitError{key: limitDepth, max: d.lim.MaxJSONDepth, observed: depth, what: "levels of JSON nesting"}
	}
	t, err := d.token(at)
	if err != nil {
		return err
	}
	if t != delim {
		return d.fail(at, fmt.Sprintf("want %s, got %s", kindOf(delim), describe(t)))
	}
	return nil
}

func (d *decoder) close(delim json.Delim, at string) error {
	t, err := d.token(at)
	if err != nil {
		return err
	}
	if t != delim {
		return d.fail(at, "want "+string(delim)+", got "+describe(t))
	}
	return nil
}

// key reads an object key, refusing one already seen in the object (a
// duplicated "times" would leave it ambiguous which runs the file means).
func (d *decoder) key(at string, seen map[string]bool) (string, error) {
	t, err := d.token(at)
	if err != nil {
		return "", err
	}
	k, ok := t.(string)
	if !ok {
		return "", d.fail(at, "want a key, got "+describe(t))
	}
	if seen[k] {
		return "", d.fail(at, fmt.Sprintf("key %q appears twice", k))
	}
	seen[k] = true
	return k, nil
}

// count adds k kept values, against limits.max_samples.
func (d *decoder) count(k int64) error {
	if d.values += k; d.values > d.lim.MaxSamples {
		return &limitError{key: limitSamples, max: d.lim.MaxSamples, observed: d.values,
			what: "hyperfine values (times, exit codes and per-run CPU times and memory, in all results)"}
	}
	return nil
}

// keep counts one kept string of len(s) bytes.
func (d *decoder) keep(at, s string) error {
	if d.strings++; d.strings > d.lim.MaxStrings {
		return &limitError{key: limitStrings, max: d.lim.MaxStrings, observed: d.strings, what: "strings (commands, parameter names and values)"}
	}
	if d.stringBytes += int64(len(s)); d.stringBytes > d.lim.MaxStringBytes {
		return &limitError{key: limitStringBytes, max: d.lim.MaxStringBytes, observed: d.stringBytes, what: "bytes of strings (commands, parameter names and values)"}
	}
	return nil
}

func (d *decoder) str(at string) (string, error) {
	t, err := d.token(at)
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", d.fail(at, "want a string, got "+describe(t))
	}
	return s, d.keep(at, s)
}

func (d *decoder) optStr(at string) (*string, error) {
	t, err := d.token(at)
	if err != nil || t == nil {
		return nil, err
	}
	s, ok := t.(string)
	if !ok {
		return nil, d.fail(at, "want a string or null, got "+describe(t))
	}
	return &s, d.keep(at, s)
}

// number reads a finite JSON number; t is the token already read.
func (d *decoder) number(at string, t json.Token) (float64, error) {
	n, ok := t.(json.Number)
	if !ok {
		return 0, d.fail(at, "want a number, got "+describe(t))
	}
	v, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, d.fail(at, fmt.Sprintf("%s is not a finite number", n))
	}
	return v, nil
}

// seconds reads a time: finite and not negative (hyperfine clamps what it
// subtracts at zero).
func (d *decoder) seconds(at string, t json.Token) (float64, error) {
	v, err := d.number(at, t)
	if err == nil && v < 0 {
		err = d.fail(at, fmt.Sprintf("negative time %v", v))
	}
	return v, err
}

func (d *decoder) optNumber(at string) (*float64, error) {
	t, err := d.token(at)
	if err != nil || t == nil {
		return nil, err
	}
	v, err := d.number(at, t)
	return &v, err
}

// array reads a JSON array, calling each for every element's token (a
// nested array or object is refused: none of the arrays read holds one).
func (d *decoder) array(at string, each func(at string, t json.Token) error) error {
	if err := d.open('[', at, 4); err != nil {
		return err
	}
	for i := 0; d.dec.More(); i++ {
		eat := at + "[" + strconv.Itoa(i) + "]"
		if err := d.count(1); err != nil {
			return err
		}
		t, err := d.token(eat)
		if err != nil {
			return err
		}
		if _, ok := t.(json.Delim); ok {
			return d.fail(eat, "want a value, got "+describe(t))
		}
		if err := each(eat, t); err != nil {
			return err
		}
	}
	return d.close(']', at)
}

func (d *decoder) floats(at string) ([]float64, error) {
	out := []float64{}
	err := d.array(at, func(at string, t json.Token) error {
		v, err := d.seconds(at, t)
		out = append(out, v)
		return err
	})
	return out, err
}

// cpu reads user or system: hyperfine's mean (a number) or one value per
// run (an array).
func (d *decoder) cpu(at string) (cpu, error) {
	t, err := d.token(at)
	if err != nil {
		return cpu{}, err
	}
	if t != json.Delim('[') {
		v, err := d.seconds(at, t)
		return cpu{mean: &v}, err
	}
	if 4 > d.lim.MaxJSONDepth {
		return cpu{}, &limitError{key: limitDepth, max: d.lim.MaxJSONDepth, observed: 4, what: "levels of JSON nesting"}
	}
	runs := []float64{}
	for i := 0; d.dec.More(); i++ {
		eat := at + "[" + strconv.Itoa(i) + "]"
		if err := d.count(1); err != nil {
			return cpu{}, err
		}
		t, err := d.token(eat)
		if err != nil {
			return cpu{}, err
		}
		v, err := d.seconds(eat, t)
		if err != nil {
			return cpu{}, err
		}
		runs = append(runs, v)
	}
	return cpu{runs: runs}, d.close(']', at)
}

func (d *decoder) memory(at string) ([]int64, error) {
	out := []int64{}
	err := d.array(at, func(at string, t json.Token) error {
		n, ok := t.(json.Number)
		v, err := strconv.ParseInt(string(n), 10, 64)
		if !ok || err != nil || v < 0 {
			return d.fail(at, "want a byte count (an integer from 0 to 2^63-1), got "+describe(t))
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

func (d *decoder) exitCodes(at string) ([]exitCode, error) {
	out := []exitCode{}
	err := d.array(at, func(at string, t json.Token) error {
		if t == nil {
			out = append(out, exitCode{})
			return nil
		}
		n, ok := t.(json.Number)
		v, err := strconv.ParseInt(string(n), 10, 32)
		if !ok || err != nil {
			return d.fail(at, "want an exit code (a 32-bit integer) or null, got "+describe(t))
		}
		out = append(out, exitCode{code: int32(v), ok: true})
		return nil
	})
	return out, err
}

// params reads the "parameters" object: names to values, both strings.
func (d *decoder) params(at string) (map[string]string, error) {
	if err := d.open('{', at, 4); err != nil {
		return nil, err
	}
	out := map[string]string{}
	seen := map[string]bool{}
	for d.dec.More() {
		k, err := d.key(at, seen)
		if err != nil {
			return nil, err
		}
		if err := d.keep(at, k); err != nil {
			return nil, err
		}
		v, err := d.str(at + "." + k)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, d.close('}', at)
}

// skip reads and drops one value at nesting depth; arrays and objects
// deeper than limits.max_json_depth are refused.
func (d *decoder) skip(at string, depth int64) error {
	t, err := d.token(at)
	if err != nil {
		return err
	}
	delim, ok := t.(json.Delim)
	if !ok {
		return nil
	}
	if delim != '{' && delim != '[' {
		return d.fail(at, "unexpected "+string(delim))
	}
	if depth > d.lim.MaxJSONDepth {
		return &limitError{key: limitDepth, max: d.lim.MaxJSONDepth, observed: depth, what: "levels of JSON nesting"}
	}
	for d.dec.More() {
		if delim == '{' {
			if _, err := d.token(at); err != nil { // the key
				return err
			}
		}
		if err := d.skip(at, depth+1); err != nil {
			return err
		}
	}
	_, err = d.token(at) // the closing delimiter
	return err
}

func kindOf(d json.Delim) string {
	if d == '{' {
		return "an object"
	}
	return "an array"
}

// describe names a token for an error message, briefly.
func describe(t json.Token) string {
	switch v := t.(type) {
	case nil:
		return "null"
	case json.Delim:
		return string(v)
	case string:
		if len(v) > 40 {
			v = strings.ToValidUTF8(v[:40], "") + "…"
		}
		return strconv.Quote(v)
	case json.Number:
		return string(v)
	default:
		return fmt.Sprint(v)
	}
}
