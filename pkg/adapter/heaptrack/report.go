package heaptrack

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// Report is what heaptrack_print printed for one file: its summary and
// the top backtraces of each section it was asked for.
//
// heaptrack's data file is private to heaptrack (its own line records,
// interned strings and instruction pointers that only heaptrack_interpret
// and the analyzer understand), so flameox never decodes it: it reads
// the report of heaptrack_print, the collector's own reporter. That
// report is plain text meant for people, with no maintained parser in
// any language, hence the hand-written one here.
type Report struct {
	// Debuggee is the command line heaptrack recorded, "" when absent.
	Debuggee string
	// Sections by kind (SectionAllocations, SectionPeak, SectionLeaks,
	// SectionTemporary), in the order printed.
	Sections map[string][]Entry
	Summary  Summary
}

// Summary is heaptrack_print's closing block. Byte figures are parsed
// from heaptrack's rounded notation (1000-based K/M/G/T with two
// decimals), so they are exact below 1000 B and otherwise within half a
// unit of the last printed digit; Precision gives that bound.
type Summary struct {
	RuntimeSeconds       *float64
	Allocations          *int64 // calls to allocation functions
	TemporaryAllocations *int64
	PeakHeap             *int64 // bytes
	PeakRSS              *int64 // bytes, including heaptrack's own overhead
	Leaked               *int64 // bytes
	SuppressedLeaks      *int64 // bytes
	// Text keeps each summary value as printed, by key (peak_heap, ...).
	Text map[string]string
}

// Entry is one merged allocation site of a section, with the backtraces
// that reach it.
type Entry struct {
	// Calls and Bytes are the entry's figures: calls to allocation
	// functions and bytes (peak, leaked or, for temporary entries, the
	// total allocations in Bytes' place is Total).
	Calls, Bytes, Total int64
	Location            []Frame // the allocation site, innermost first
	Stacks              []Stack // the callers, heaviest first, as printed
	// Others is the "and N from M other places" remainder, when printed.
	OthersValue, OthersPlaces int64
}

// Stack is one backtrace below an entry's location.
type Stack struct {
	Calls, Bytes, Total int64
	Frames              []Frame // innermost first, after the entry's Location
}

// Frame is one function of a backtrace.
type Frame struct {
	Function, File, Module string
	Line                   int64
}

// Section kinds.
const (
	SectionAllocations = "allocations"
	SectionPeak        = "peak"
	SectionLeaks       = "leaked"
	SectionTemporary   = "temporary"
)

var sectionTitles = map[string]string{
	"MOST CALLS TO ALLOCATION FUNCTIONS": SectionAllocations,
	"PEAK MEMORY CONSUMERS":              SectionPeak,
	"MEMORY LEAKS":                       SectionLeaks,
	"MOST TEMPORARY ALLOCATIONS":         SectionTemporary,
}

// ErrReport is wrapped by every parse failure.
var ErrReport = errors.New("not heaptrack_print output")

// maxLine bounds one line of the report (C++ template names run long).
const maxLine = 1 << 20

// ParseReport reads heaptrack_print's text output. What it keeps is
// bounded by lim: entries and stacks (MaxSamples), frames in all stacks
// (MaxStackFrames), frames in one stack (MaxStackDepth) and the bytes of
// the names kept (MaxStringBytes). Output without the summary block
// (cut off, or not heaptrack_print's) is refused.
func ParseReport(r io.Reader, lim config.Limits) (*Report, error) {
	def := config.DefaultLimits()
	if lim.MaxSamples <= 0 {
		lim.MaxSamples = def.MaxSamples
	}
	if lim.MaxStackFrames <= 0 {
		lim.MaxStackFrames = def.MaxStackFrames
	}
	if lim.MaxStackDepth <= 0 {
		lim.MaxStackDepth = def.MaxStackDepth
	}
	if lim.MaxStringBytes <= 0 {
		lim.MaxStringBytes = def.MaxStringBytes
	}
	p := &parser{lim: lim, rep: &Report{Sections: map[string][]Entry{}, Summary: Summary{Text: map[string]string{}}}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		p.line++
		if err := p.feed(sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %v", ErrReport, p.line+1, err)
	}
	s := &p.rep.Summary
	if s.Allocations == nil || s.PeakHeap == nil || s.Leaked == nil {
		return nil, fmt.Errorf("%w: no summary (calls to allocation functions, peak heap memory consumption, total memory leaked): the output is cut off or is not heaptrack_print's", ErrReport)
	}
	return p.rep, nil
}

type parser struct {
	lim                  config.Limits
	rep                  *Report
	line                 int
	section              string
	entry                *Entry
	stack                *Stack
	entries, frames, str int64
	inSummary            bool
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrReport, p.line, fmt.Sprintf(format, args...))
}

func (p *parser) flush() {
	if p.entry != nil && p.section != "" {
		p.rep.Sections[p.section] = append(p.rep.Sections[p.section], *p.entry)
	}
	p.entry, p.stack = nil, nil
}

func (p *parser) feed(l string) error {
	if l == "" {
		p.flush()
		return nil
	}
	if v, ok := strings.CutPrefix(l, "Debuggee command was: "); ok {
		p.rep.Debuggee = p.keep(v)
		return nil
	}
	if strings.HasPrefix(l, "reading file ") || strings.HasPrefix(l, "finished reading file") {
		return nil
	}
	if kind, ok := sectionTitles[l]; ok {
		p.flush()
		p.section, p.inSummary = kind, false
		return nil
	}
	if ok, err := p.summary(l); ok || err != nil {
		return err
	}
	if p.inSummary {
		return nil // a summary line this parser does not know (a newer heaptrack)
	}
	if p.section == "" {
		return p.fail("%q before any section", clip(l))
	}
	indent := len(l) - len(strings.TrimLeft(l, " "))
	body := l[indent:]
	switch {
	case indent == 0:
		if e, ok, err := p.header(body, false); err != nil {
			return err
		} else if ok {
			p.flush()
			if err := p.count(); err != nil {
				return err
			}
			p.entry = &Entry{Calls: e.Calls, Bytes: e.Bytes, Total: e.Total}
			return nil
		}
		if s, ok, err := p.header(body, true); err != nil {
			return err
		} else if ok {
			if p.entry == nil {
				return p.fail("backtrace %q outside an entry", clip(l))
			}
			if err := p.count(); err != nil {
				return err
			}
			p.entry.Stacks = append(p.entry.Stacks, Stack{Calls: s.Calls, Bytes: s.Bytes, Total: s.Total})
			p.stack = &p.entry.Stacks[len(p.entry.Stacks)-1]
			return nil
		}
		if p.entry == nil {
			return p.fail("%q outside an entry", clip(l))
		}
		if p.stack != nil {
			return p.fail("location frame %q after the entry's backtraces", clip(l))
		}
		return p.frame(&p.entry.Location, body)
	case indent == 2 || indent == 6:
		if rest, ok := strings.CutPrefix(body, "and "); ok && indent == 2 {
			return p.others(rest)
		}
		if p.entry == nil {
			return p.fail("frame detail %q outside an entry", clip(l))
		}
		fs := &p.entry.Location
		if indent == 6 {
			if p.stack == nil {
				return p.fail("frame detail %q outside a backtrace", clip(l))
			}
			fs = &p.stack.Frames
		}
		if len(*fs) == 0 {
			return p.fail("frame detail %q without a frame", clip(l))
		}
		f := &(*fs)[len(*fs)-1]
		if v, ok := strings.CutPrefix(body, "at "); ok {
			file, line := v, int64(0)
			if i := strings.LastIndexByte(v, ':'); i > 0 {
				if n, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil {
					file, line = v[:i], n
				}
			}
			f.File, f.Line = p.keep(file), line
			return nil
		}
		if v, ok := strings.CutPrefix(body, "in "); ok {
			f.Module = p.keep(v)
			return nil
		}
		return p.fail("unknown frame detail %q", clip(l))
	case indent == 4:
		if p.stack == nil {
			return p.fail("frame %q outside a backtrace", clip(l))
		}
		return p.frame(&p.stack.Frames, body)
	}
	return p.fail("unexpected indentation in %q", clip(l))
}

func (p *parser) count() error {
	p.entries++
	if p.entries > p.lim.MaxSamples {
		return p.fail("more than %d entries and backtraces (limits.max_samples)", p.lim.MaxSamples)
	}
	return nil
}

func (p *parser) frame(fs *[]Frame, name string) error {
	p.frames++
	if p.frames > p.lim.MaxStackFrames {
		return p.fail("more than %d frames (limits.max_stack_frames)", p.lim.MaxStackFrames)
	}
	if int64(len(*fs)) >= p.lim.MaxStackDepth {
		return p.fail("a backtrace deeper than %d frames (limits.max_stack_depth)", p.lim.MaxStackDepth)
	}
	*fs = append(*fs, Frame{Function: p.keep(name)})
	return nil
}

// keep counts the bytes of the strings kept against MaxStringBytes; past
// it, names are kept empty rather than failing (the figures stay right).
func (p *parser) keep(s string) string {
	p.str += int64(len(s))
	if p.str > p.lim.MaxStringBytes {
		return ""
	}
	return strings.Clone(s)
}

func (p *parser) others(rest string) error {
	// "and 95376 from 32620 other places" (counts) or "and 1.2K from ..."
	v, places, ok := strings.Cut(rest, " from ")
	n, ok2 := strings.CutSuffix(places, " other places")
	if !ok || !ok2 || p.entry == nil {
		return p.fail("unknown remainder line %q", clip(rest))
	}
	val, err := parseValue(v)
	if err != nil {
		return p.fail("remainder %q: %v", clip(rest), err)
	}
	m, err := strconv.ParseInt(n, 10, 64)
	if err != nil || m < 0 {
		return p.fail("remainder %q: bad count of places", clip(rest))
	}
	p.entry.OthersValue, p.entry.OthersPlaces = val, m
	return nil
}

// header parses an entry's (sub false) or a backtrace's (sub true) first
// line in the current section.
func (p *parser) header(l string, sub bool) (Stack, bool, error) {
	end := " from"
	if sub {
		end = " from:"
	}
	rest, ok := strings.CutSuffix(l, end)
	if !ok {
		return Stack{}, false, nil
	}
	var pat string
	switch p.section {
	case SectionAllocations:
		pat = "%d calls to allocation functions with %s peak consumption"
		if sub {
			pat = "%d calls with %s peak consumption"
		}
	case SectionPeak:
		pat = "%s peak memory consumed over %d calls"
		if sub {
			pat = "%s consumed over %d calls"
		}
	case SectionLeaks:
		pat = "%s leaked over %d calls"
	case SectionTemporary:
		pat = "%d temporary allocations of %d allocations in total (%s)"
	}
	vals, ok := match(rest, pat)
	if !ok {
		return Stack{}, false, nil
	}
	var s Stack
	var err error
	switch p.section {
	case SectionAllocations:
		s.Calls, err = parseCount(vals[0])
		if err == nil {
			s.Bytes, err = ParseBytes(vals[1])
		}
	case SectionPeak, SectionLeaks:
		s.Bytes, err = ParseBytes(vals[0])
		if err == nil {
			s.Calls, err = parseCount(vals[1])
		}
	case SectionTemporary:
		s.Calls, err = parseCount(vals[0])
		if err == nil {
			s.Total, err = parseCount(vals[1])
		}
	}
	if err != nil {
		return Stack{}, false, p.fail("%q: %v", clip(l), err)
	}
	return s, true, nil
}

// match splits l by pat, whose %d and %s stand for one space-free field.
func match(l, pat string) ([]string, bool) {
	var vals []string
	for pat != "" {
		i := strings.IndexByte(pat, '%')
		if i < 0 {
			return vals, l == pat
		}
		lit := pat[:i]
		if !strings.HasPrefix(l, lit) {
			return nil, false
		}
		l, pat = l[len(lit):], pat[i+2:]
		j := 0
		for j < len(l) && l[j] != ' ' && (pat == "" || pat[0] != ')' || l[j] != ')') {
			j++
		}
		if j == 0 {
			return nil, false
		}
		vals = append(vals, l[:j])
		l = l[j:]
	}
	return vals, l == ""
}

var summaryKeys = []struct{ prefix, key string }{
	{"total runtime: ", "runtime"},
	{"calls to allocation functions: ", "allocations"},
	{"temporary memory allocations: ", "temporary_allocations"},
	{"peak heap memory consumption: ", "peak_heap"},
	{"peak RSS (including heaptrack overhead): ", "peak_rss"},
	{"total memory leaked: ", "leaked"},
	{"suppressed leaks: ", "suppressed_leaks"},
}

func (p *parser) summary(l string) (bool, error) {
	for _, k := range summaryKeys {
		v, ok := strings.CutPrefix(l, k.prefix)
		if !ok {
			continue
		}
		p.flush()
		p.section, p.inSummary = "", true
		s := &p.rep.Summary
		if _, dup := s.Text[k.key]; dup {
			return true, p.fail("summary line %q twice", k.key)
		}
		s.Text[k.key] = p.keep(v)
		var err error
		switch k.key {
		case "runtime":
			var f float64
			f, err = strconv.ParseFloat(strings.TrimSuffix(v, "s."), 64)
			if err == nil && (f < 0 || math.IsInf(f, 0) || math.IsNaN(f)) {
				err = errors.New("not a duration")
			}
			s.RuntimeSeconds = &f
		case "allocations", "temporary_allocations":
			n, _, _ := strings.Cut(v, " ")
			var c int64
			c, err = parseCount(n)
			if k.key == "allocations" {
				s.Allocations = &c
			} else {
				s.TemporaryAllocations = &c
			}
		default:
			var b int64
			b, err = ParseBytes(v)
			switch k.key {
			case "peak_heap":
				s.PeakHeap = &b
			case "peak_rss":
				s.PeakRSS = &b
			case "leaked":
				s.Leaked = &b
			case "suppressed_leaks":
				s.SuppressedLeaks = &b
			}
		}
		if err != nil {
			return true, p.fail("summary %q: %v", clip(l), err)
		}
		return true, nil
	}
	return false, nil
}

func parseCount(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a count", clip(s))
	}
	return n, nil
}

func parseValue(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	return ParseBytes(s)
}

var byteUnits = map[byte]float64{'B': 1, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18}

// ParseBytes reads heaptrack's byte notation: "1000B", "72.70K",
// "146.57M" (1000-based units, as heaptrack prints them).
func ParseBytes(s string) (int64, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("%q is not a size", clip(s))
	}
	mul, ok := byteUnits[s[len(s)-1]]
	if !ok {
		return 0, fmt.Errorf("%q is not a size (no B/K/M/G/T unit)", clip(s))
	}
	f, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f*mul >= math.MaxInt64/2 || strings.ContainsAny(s, "eExXpP_") && mul == 1 {
		return 0, fmt.Errorf("%q is not a size", clip(s))
	}
	return int64(math.Round(f * mul)), nil
}

// FormatBytes writes n as heaptrack_print does: plain bytes up to 1000,
// then two decimals in the largest 1000-based unit that keeps the value
// above 1000's predecessor.
func FormatBytes(n int64) string {
	if n < 0 {
		return "-" + FormatBytes(-n)
	}
	units := "BKMGTPE"
	f, i := float64(n), 0
	for f > 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	if i == 0 {
		return strconv.FormatInt(n, 10) + "B"
	}
	return strconv.FormatFloat(f, 'f', 2, 64) + string(units[i])
}

// Precision is how far a byte figure printed as text may be from the true
// value: zero for plain bytes, half the last digit otherwise.
func Precision(text string) int64 {
	if len(text) < 2 || text[len(text)-1] == 'B' {
		return 0
	}
	return int64(byteUnits[text[len(text)-1]] / 200)
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
