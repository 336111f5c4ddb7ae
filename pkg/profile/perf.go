package profile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/ianlancetaylor/demangle"
)

// perfHeader matches a `perf script` sample header:
//
//	comm pid[/tid] [cpu] time: [period] event: [trailing fields]
//
// where the cpu, time and period columns are optional and comm may contain
// spaces. The event keeps its modifiers ("task-clock:ppp", "cycles:u").
var perfHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(
		`^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[(\d+)\]\s+)?(?:(\d+\.\d+):\s+)?(?:(\d+)\s+)?(\S+):(?:\s+(.*))?$`)
})

// percentRow matches a report row that starts with a percentage
// ("  45.00%  prog  libc.so  [.] memcpy", pprof's "%  …" columns).
var percentRow = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*-?\d+(?:\.\d+)?%(?:\s|$)`) })

// perfFrameStart matches the start of an indented callchain line.
var perfFrameStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s+[0-9a-fA-F]+(\s|$)`) })

// trimOffset removes a trailing "+0x<hex>" from a symbol.
func trimOffset(sym string) string {
	i := strings.LastIndex(sym, "+0x")
	if i < 0 || i+3 == len(sym) {
		return sym
	}
	for _, c := range sym[i+3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return sym
		}
	}
	return sym[:i]
}

// looksPerf: the first line that is not a comment or blank is a sample
// header, and the line after it is blank, indented (a frame) or a header.
// Text with a line of a legacy pprof profile or of a report (a percentage
// column) is not perf script, whatever its first lines look like: a heap
// profile's "1: 524288 [3: 1572864] @ 0x420cef …" would otherwise pass as
// a header of event "[3".
func looksPerf(lines []string) bool {
	for _, l := range lines {
		if looksLegacyLine(l) || percentRow().MatchString(l) {
			return false
		}
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !perfHeader().MatchString(l) {
			return false
		}
		if i+1 == len(lines) {
			return true
		}
		next := lines[i+1]
		return strings.TrimSpace(next) == "" || next[0] == ' ' || next[0] == '\t' || perfHeader().MatchString(next)
	}
	return false
}

// perfStack is one distinct (event, thread, callchain): the samples that
// share it are merged into one pprof sample, with their count kept in
// Profile.Counts, so memory and extraction grow with distinct stacks, not
// with samples (a 50 kHz recording has hundreds of thousands).
type perfStack struct {
	event    int
	value    int64
	count    int64
	frames   []int // indexes into perfParser.frames, leaf first
	comm     string
	pid, tid int64 // pid -1 if perf printed only the tid
	line     int   // the header of its first sample
}

type perfParser struct {
	opts      Options
	out       *Profile
	eventIdx  map[string]int
	hasPeriod []bool
	demangled bool
	noPid     int
	empty     int
	nSamples  int
	// Callchain lines repeat (the same address, symbol and module in many
	// samples): each distinct line is parsed once.
	frameIdx map[string]int
	frames   []frameResult
	stacks   map[string]*perfStack
	order    []*perfStack // first appearance
	// the sample being read
	open       bool
	cur        perfStack
	curFrames  []int
	key        []byte
	terminated bool
	header     headerScratch
	// each depth's line in the latest sample that reached it, and its frame
	prevLines [][]byte
	prevIDs   []int
	// what the parser keeps, counted against the limits
	lim                                              Limits
	nFrames, nStacks, nEvents, stackFrames, strBytes counter
	// Where each thing first appeared (line numbers), so that the parsers
	// of a chunked parse (perfchunk.go) merge in the input's order.
	curLine     int   // the open sample's header
	firstSample int   // the first sample's header, 0 before any
	lastLine    int   // the last line read
	frameLine   []int // by frames
	eventLine   []int // by out.Events
	versions    []perfVersion
}

// perfVersion is a "# perf version :" comment seen before any sample.
type perfVersion struct {
	line int
	v    string
}

// parsePerf reads `perf script` output line by line, never holding the
// whole text (often hundreds of MB) in memory.
func parsePerf(r *bufio.Reader, opts Options) (*Profile, error) {
	if w := min(runtime.GOMAXPROCS(0), maxPerfWorkers); w > 1 {
		return parsePerfChunked(r, opts, w, perfChunkBytes)
	}
	return parsePerfStream(r, opts)
}

// parsePerfStream is the parse on one goroutine, line by line.
func parsePerfStream(r *bufio.Reader, opts Options) (*Profile, error) {
	pp := newPerfParser(opts)
	lim := pp.lim
	var long []byte
	for n := 1; ; n++ {
		raw, err := readLine(r, &long, lim.MaxStringBytes, FormatPerfScript, n, 0, 0)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(raw) > 0 {
			line := bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
			if perr := pp.line(n, line); perr != nil {
				return nil, perr
			}
		}
		if err == io.EOF {
			break
		}
	}
	if err := pp.endSample(); err != nil {
		return nil, err
	}
	return pp.finish()
}

func newPerfParser(opts Options) *perfParser {
	lim := opts.limits()
	return &perfParser{opts: opts, out: &Profile{Format: FormatPerfScript, Producer: "perf"},
		eventIdx: map[string]int{}, frameIdx: map[string]int{}, stacks: map[string]*perfStack{}, terminated: true,
		lim:         lim,
		nFrames:     newCounter(lim.MaxLocations, LimitLocations, "distinct perf script callchain lines"),
		nStacks:     newCounter(lim.MaxSamples, LimitSamples, "distinct perf script stacks (event, thread and callchain)"),
		nEvents:     newCounter(lim.MaxSampleTypes, LimitSampleTypes, "perf script events"),
		stackFrames: newCounter(lim.MaxStackFrames, LimitStackFrames, "frames in all distinct perf script stacks"),
		strBytes:    newCounter(lim.MaxStringBytes, LimitStringBytes, "bytes of distinct perf script callchain lines and thread names"),
	}
}

func (pp *perfParser) line(n int, line []byte) error {
	switch {
	case len(line) > 0 && line[0] == '#':
		if v, ok := bytes.CutPrefix(line, []byte("# perf version :")); ok && pp.nSamples == 0 && !pp.open {
			pp.out.Producer = "perf " + string(bytes.TrimSpace(v))
			pp.versions = append(pp.versions, perfVersion{n, pp.out.Producer})
		}
	case len(bytes.TrimSpace(line)) == 0:
		if err := pp.endSample(); err != nil {
			return err
		}
		pp.terminated = true
	case line[0] == ' ' || line[0] == '\t':
		if !pp.open {
			return failf(FormatPerfScript, n, "stack frame outside a sample")
		}
		// The previous sample often has the same line at the same depth
		// (all of it but the leaf, outside recursion): comparing is
		// cheaper than hashing the line.
		j := len(pp.curFrames)
		if int64(j) >= pp.lim.MaxStackDepth {
			pe := tooMany(FormatPerfScript, LimitStackDepth, pp.lim.MaxStackDepth, int64(j)+1, "frames in one perf script callchain")
			pe.Line = n
			return pe
		}
		if j < len(pp.prevLines) && bytes.Equal(pp.prevLines[j], line) {
			pp.curFrames = append(pp.curFrames, pp.prevIDs[j])
			return nil
		}
		i, err := pp.frame(n, line)
		if pe, ok := err.(*ParseError); ok {
			pe.Line = n
			return pe
		}
		if err != nil {
			return failf(FormatPerfScript, n, "%v", err)
		}
		pp.curFrames = append(pp.curFrames, i)
		if j < len(pp.prevLines) {
			pp.prevLines[j], pp.prevIDs[j] = append(pp.prevLines[j][:0], line...), i
		} else {
			pp.prevLines, pp.prevIDs = append(pp.prevLines, append([]byte(nil), line...)), append(pp.prevIDs, i)
		}
	default:
		if err := pp.endSample(); err != nil {
			return err
		}
		m := pp.header.match(line)
		if m == nil {
			return failf(FormatPerfScript, n, "not a perf script sample header: %.80q", line)
		}
		group := func(g int) []byte {
			if m[2*g] < 0 {
				return nil
			}
			return line[m[2*g]:m[2*g+1]]
		}
		evName, period := group(7), group(6)
		ev, ok := pp.eventIdx[string(evName)]
		if !ok {
			if err := pp.nEvents.add(FormatPerfScript, 1); err != nil {
				return err
			}
			ev = len(pp.out.Events)
			pp.eventIdx[string(evName)] = ev
			pp.out.Events = append(pp.out.Events, string(evName))
			pp.hasPeriod = append(pp.hasPeriod, period != nil)
			pp.eventLine = append(pp.eventLine, n)
		}
		if pp.hasPeriod[ev] != (period != nil) {
			return failf(FormatPerfScript, n, "event %q has samples with and without a period", evName)
		}
		pp.open, pp.terminated, pp.curLine = true, false, n
		if pp.firstSample == 0 {
			pp.firstSample = n
		}
		pp.cur = perfStack{event: ev, value: 1, comm: string(bytes.TrimSpace(group(1))), pid: -1}
		pp.curFrames = pp.curFrames[:0]
		pp.cur.tid, _ = strconv.ParseInt(string(group(2)), 10, 64)
		if g := group(3); g != nil { // pid/tid
			pp.cur.pid = pp.cur.tid
			pp.cur.tid, _ = strconv.ParseInt(string(g), 10, 64)
		} else {
			pp.noPid++
		}
		if period != nil {
			v, err := strconv.ParseInt(string(period), 10, 64)
			if err != nil || v < 0 {
				return failf(FormatPerfScript, n, "bad period %q", period)
			}
			pp.cur.value = v
		}
		if rest := group(8); rest != nil {
			l := append([]byte{' '}, rest...)
			if perfFrameStart().Match(l) {
				i, err := pp.frame(n, l)
				if pe, ok := err.(*ParseError); ok {
					return pe
				}
				if err == nil {
					pp.curFrames = append(pp.curFrames, i)
				}
			}
		}
	}
	return nil
}

// frame returns the index of a callchain line's parse, parsing it once.
func (pp *perfParser) frame(n int, line []byte) (int, error) {
	if i, ok := pp.frameIdx[string(line)]; ok {
		return i, pp.frames[i].err
	}
	if err := pp.nFrames.add(FormatPerfScript, 1); err != nil {
		return 0, err
	}
	if err := pp.strBytes.add(FormatPerfScript, int64(len(line))); err != nil {
		return 0, err
	}
	var r frameResult
	r.f, r.demangled, r.err = parsePerfFrame(string(line), pp.opts)
	i := len(pp.frames)
	pp.frames = append(pp.frames, r)
	pp.frameLine = append(pp.frameLine, n)
	pp.frameIdx[string(line)] = i
	pp.demangled = pp.demangled || r.demangled
	return i, r.err
}

// endSample merges the open sample into its distinct stack.
func (pp *perfParser) endSample() error {
	if !pp.open {
		return nil
	}
	pp.open = false
	pp.nSamples++
	if len(pp.curFrames) == 0 {
		pp.empty++
	}
	c := &pp.cur
	k := binary.AppendVarint(pp.key[:0], int64(c.event))
	k = binary.AppendVarint(k, c.pid)
	k = binary.AppendVarint(k, c.tid)
	k = binary.AppendUvarint(k, uint64(len(c.comm)))
	k = append(k, c.comm...)
	for _, f := range pp.curFrames {
		k = binary.AppendUvarint(k, uint64(f))
	}
	pp.key = k
	if st, ok := pp.stacks[string(k)]; ok {
		st.value += c.value
		st.count++
		return nil
	}
	if err := pp.nStacks.add(FormatPerfScript, 1); err != nil {
		return err
	}
	if err := pp.stackFrames.add(FormatPerfScript, int64(len(pp.curFrames))); err != nil {
		return err
	}
	if err := pp.strBytes.add(FormatPerfScript, int64(len(k)+len(c.comm))); err != nil {
		return err
	}
	st := &perfStack{event: c.event, value: c.value, count: 1, frames: append([]int(nil), pp.curFrames...),
		comm: c.comm, pid: c.pid, tid: c.tid, line: pp.curLine}
	pp.stacks[string(k)] = st
	pp.order = append(pp.order, st)
	return nil
}

func (pp *perfParser) finish() (*Profile, error) {
	out := pp.out
	if pp.nSamples == 0 {
		return nil, failf(FormatPerfScript, 0, "perf script output holds no samples")
	}
	types := make([]*profile.ValueType, len(out.Events))
	for i, ev := range out.Events {
		unit := "count"
		base, _, _ := strings.Cut(ev, ":")
		if pp.hasPeriod[i] && (base == "cpu-clock" || base == "task-clock") {
			unit = "nanoseconds"
		}
		types[i] = &profile.ValueType{Type: ev, Unit: unit}
		if !pp.hasPeriod[i] {
			out.Limitations = append(out.Limitations, fmt.Sprintf(
				"event %s: no period column, each sample counts 1 (not the event count)", ev))
		}
	}
	b := newBuilder(FormatPerfScript, pp.lim, types...)
	// Each distinct callchain line makes at most one location.
	b.locs = make(map[frame]*profile.Location, len(pp.frames))
	b.p.Location = make([]*profile.Location, 0, len(pp.frames))
	locOf := make([]*profile.Location, len(pp.frames)) // by distinct callchain line
	// The samples' location and value slices, cut from two arrays rather
	// than allocated one by one (full slice expressions: an append to
	// one cannot reach the next).
	nLocs := 0
	for _, st := range pp.order {
		nLocs += len(st.frames)
	}
	locBuf := make([]*profile.Location, nLocs)
	valBuf := make([]int64, len(types)*len(pp.order))
	b.p.Sample = make([]*profile.Sample, 0, len(pp.order))
	type threadKey struct {
		comm     string
		pid, tid int64
	}
	type threadLabels struct {
		str map[string][]string
		num map[string][]int64
	}
	labels := map[threadKey]threadLabels{}
	var lastTk threadKey
	var lastLm threadLabels
	out.Counts = make([]int64, 0, len(pp.order))
	for _, st := range pp.order {
		locs := locBuf[:len(st.frames):len(st.frames)]
		locBuf = locBuf[len(st.frames):]
		for j, i := range st.frames {
			if locOf[i] == nil {
				locOf[i] = b.location(pp.frames[i].f)
			}
			locs[j] = locOf[i]
		}
		vals := valBuf[:len(types):len(types)]
		valBuf = valBuf[len(types):]
		vals[st.event] = st.value
		// Samples of one thread share their (read-only) label maps;
		// consecutive stacks are mostly of one thread.
		tk := threadKey{st.comm, st.pid, st.tid}
		lm, ok := lastLm, lastLm.str != nil && tk == lastTk
		if !ok {
			lm, ok = labels[tk]
		}
		if !ok {
			lm = threadLabels{map[string][]string{"thread": {st.comm}}, map[string][]int64{"thread_id": {st.tid}}}
			if st.pid >= 0 {
				lm.num["pid"] = []int64{st.pid}
			}
			labels[tk] = lm
		}
		lastTk, lastLm = tk, lm
		if b.err != nil {
			return nil, b.err
		}
		ps := &profile.Sample{Location: locs, Value: vals,
			Label: lm.str, NumLabel: lm.num}
		b.p.Sample = append(b.p.Sample, ps)
		out.Counts = append(out.Counts, st.count)
	}
	out.P = b.p
	if pp.noPid > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf(
			"%d of %d samples show one id, which perf script prints as the tid: they carry thread_id but no pid", pp.noPid, pp.nSamples))
	}
	if b.unsymbolized > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf("%d locations are unsymbolized ([unknown] in perf script)", b.unsymbolized))
	}
	if pp.demangled {
		out.Limitations = append(out.Limitations, "mangled Rust/C++ symbols were demangled; the raw symbol is kept as SystemName")
	}
	if pp.empty > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf(
			"%d samples have no callchain: they count in totals but in no function", pp.empty))
	}
	if !pp.terminated {
		out.Limitations = append(out.Limitations, "the last sample is not followed by a blank line: it may be truncated")
	}
	return out, nil
}

// frameResult caches one parsed callchain line.
type frameResult struct {
	f         frame
	demangled bool
	err       error
}

// parsePerfFrame reads "addr sym[+off] (dso)". "[unknown]" symbols become
// unsymbolized frames; a "[unknown]" dso becomes no module.
func parsePerfFrame(line string, opts Options) (frame, bool, error) {
	rest := strings.TrimSpace(line)
	addrText, rest, _ := strings.Cut(rest, " ")
	if i := strings.IndexByte(addrText, '\t'); i >= 0 {
		addrText, rest = addrText[:i], addrText[i+1:]+" "+rest
	}
	addr, err := strconv.ParseUint(addrText, 16, 64)
	if err != nil {
		return frame{}, false, fmt.Errorf("bad frame address %.40q", addrText)
	}
	sym, dso := splitDSO(strings.TrimSpace(rest))
	if dso == "[unknown]" {
		dso = ""
	}
	f := frame{addr: addr, module: dso}
	sym = trimOffset(sym)
	if sym == "" || sym == "[unknown]" {
		return f, false, nil
	}
	f.name = sym
	if !opts.KeepMangled && (strings.HasPrefix(sym, "_R") || strings.HasPrefix(sym, "_Z")) {
		if d := demangle.Filter(sym); d != sym {
			f.name, f.sysName = d, sym
			return f, true, nil
		}
	}
	return f, false, nil
}

// splitDSO splits "sym (dso)" at the balanced parenthesis group that ends
// the line, so that "f(int) (/lib/x (deleted))" keeps both parts intact.
func splitDSO(s string) (sym, dso string) {
	if !strings.HasSuffix(s, ")") {
		return s, ""
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if i == 0 || s[i-1] == ' ' {
					return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1]
				}
				return s, ""
			}
		}
	}
	return s, ""
}

// perfHeaderMatch is perfHeader().FindSubmatchIndex(line) without the
// regexp engine, whose backtracking over the lazy comm group was the
// largest cost of reading a big recording. It tries the same alternatives
// in the same order (the earliest pid token after which the rest matches;
// each optional column taken before it is skipped), so it returns the same
// indexes; FuzzPerfHeader checks that against the regexp.
func perfHeaderMatch(line []byte) []int { return new(headerScratch).match(line) }

// headerScratch holds perfHeaderMatch's buffers between lines; the indexes
// it returns are valid until the next call.
type headerScratch struct {
	toks [][2]int
	m    []int
}

func (h *headerScratch) match(line []byte) []int {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	if len(line) == 0 || isSpace(line[0]) {
		return nil
	}
	// Whitespace-separated tokens as [start, end) pairs.
	toks := h.toks[:0]
	defer func() { h.toks = toks }()
	for i := 0; i < len(line); {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		toks = append(toks, [2]int{i, j})
		i = j
	}
	tok := func(k int) []byte { return line[toks[k][0]:toks[k][1]] }
	digits := func(b []byte) bool {
		if len(b) == 0 {
			return false
		}
		for _, c := range b {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	if h.m == nil {
		h.m = make([]int, 18)
	}
	m := h.m
	for k := 1; k < len(toks); k++ {
		pid := tok(k)
		slash := bytes.IndexByte(pid, '/')
		if slash < 0 && !digits(pid) || slash >= 0 && !(digits(pid[:slash]) && digits(pid[slash+1:])) {
			continue
		}
		if bytes.IndexByte(line[:toks[k-1][1]], '\n') >= 0 { // "." in the comm group stops at a newline
			return nil
		}
		for i := range m {
			m[i] = -1
		}
		m[0], m[1] = 0, len(line)
		m[2], m[3] = 0, toks[k-1][1]
		if slash < 0 {
			m[4], m[5] = toks[k][0], toks[k][1]
		} else {
			m[4], m[5] = toks[k][0], toks[k][0]+slash
			m[6], m[7] = toks[k][0]+slash+1, toks[k][1]
		}
		if perfHeaderRest(line, toks, k+1, 0, m, tok, digits) {
			return m
		}
	}
	return nil
}

// perfHeaderRest matches the columns after the pid, from column col on
// (0 cpu, 1 time, 2 period, 3 event), each optional one tried first.
func perfHeaderRest(line []byte, toks [][2]int, k, col int, m []int, tok func(int) []byte, digits func([]byte) bool) bool {
	if k >= len(toks) {
		return false
	}
	t := tok(k)
	set := func(g, from, to int) { m[2*g], m[2*g+1] = from, to }
	switch col {
	case 0: // [cpu]
		if len(t) > 2 && t[0] == '[' && t[len(t)-1] == ']' && digits(t[1:len(t)-1]) {
			set(4, toks[k][0]+1, toks[k][1]-1)
			if perfHeaderRest(line, toks, k+1, 1, m, tok, digits) {
				return true
			}
			set(4, -1, -1)
		}
		return perfHeaderRest(line, toks, k, 1, m, tok, digits)
	case 1: // time:
		if dot := bytes.IndexByte(t, '.'); dot > 0 && len(t) > dot+2 && t[len(t)-1] == ':' &&
			digits(t[:dot]) && digits(t[dot+1:len(t)-1]) {
			set(5, toks[k][0], toks[k][1]-1)
			if perfHeaderRest(line, toks, k+1, 2, m, tok, digits) {
				return true
			}
			set(5, -1, -1)
		}
		return perfHeaderRest(line, toks, k, 2, m, tok, digits)
	case 2: // period
		if digits(t) {
			set(6, toks[k][0], toks[k][1])
			if perfHeaderRest(line, toks, k+1, 3, m, tok, digits) {
				return true
			}
			set(6, -1, -1)
		}
		return perfHeaderRest(line, toks, k, 3, m, tok, digits)
	}
	// event: the token ends with ':' and has something before it.
	if len(t) < 2 || t[len(t)-1] != ':' {
		return false
	}
	set(7, toks[k][0], toks[k][1]-1)
	if toks[k][1] < len(line) { // whitespace, then the rest of the line
		rest := toks[k][1]
		for rest < len(line) && (line[rest] == ' ' || line[rest] == '\t' || line[rest] == '\n' || line[rest] == '\f' || line[rest] == '\r') {
			rest++
		}
		if bytes.IndexByte(line[rest:], '\n') >= 0 { // nor does the rest's ".*"
			return false
		}
		set(8, rest, len(line))
	}
	return true
}
