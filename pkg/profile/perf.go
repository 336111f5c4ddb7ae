package profile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	"github.com/google/pprof/profile"
	"github.com/ianlancetaylor/demangle"
)

// perfHeader matches a `perf script` sample header:
//
//	comm pid[/tid] [cpu] time: [period] event: [trailing fields]
//
// where the cpu, time and period columns are optional and comm may contain
// spaces. The event keeps its modifiers ("task-clock:ppp", "cycles:u").
var perfHeader = regexp.MustCompile(
	`^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[(\d+)\]\s+)?(?:(\d+\.\d+):\s+)?(?:(\d+)\s+)?(\S+):(?:\s+(.*))?$`)

// perfFrameStart matches the start of an indented callchain line.
var perfFrameStart = regexp.MustCompile(`^\s+[0-9a-fA-F]+(\s|$)`)

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

type perfSample struct {
	event  int
	value  int64
	frames []frame
	comm   string
	pid    int64 // -1 if perf printed only the tid
	tid    int64
}

// looksPerf: the first line that is not a comment or blank is a sample
// header, and the line after it is blank, indented (a frame) or a header.
func looksPerf(lines []string) bool {
	for i, l := range lines {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !perfHeader.MatchString(l) {
			return false
		}
		if i+1 == len(lines) {
			return true
		}
		next := lines[i+1]
		return strings.TrimSpace(next) == "" || next[0] == ' ' || next[0] == '\t' || perfHeader.MatchString(next)
	}
	return false
}

func parsePerf(data []byte, opts Options) (*Profile, error) {
	out := &Profile{Format: FormatPerfScript, Producer: "perf"}
	var (
		samples    []*perfSample
		cur        *perfSample
		eventIdx   = map[string]int{}
		hasPeriod  []bool
		demangled  bool
		noPid      int
		terminated = true
		// Callchain lines repeat (the same address, symbol and module in
		// many samples): parse each distinct line once.
		frameCache = map[string]frameResult{}
	)
	// data is never modified after reading, so its lines can be viewed as
	// strings without copying the whole (often hundreds of MB) file.
	text := ""
	if len(data) > 0 {
		text = unsafe.String(&data[0], len(data))
	}
	for n := 1; len(text) > 0; n++ {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "#"):
			if v, ok := strings.CutPrefix(line, "# perf version :"); ok && cur == nil {
				out.Producer = "perf " + strings.TrimSpace(v)
			}
		case strings.TrimSpace(line) == "":
			cur, terminated = nil, true
		case line[0] == ' ' || line[0] == '\t':
			if cur == nil {
				return nil, failf(FormatPerfScript, n, "stack frame outside a sample")
			}
			r, ok := frameCache[line]
			if !ok {
				r.f, r.demangled, r.err = parsePerfFrame(line, opts)
				frameCache[line] = r
			}
			if r.err != nil {
				return nil, failf(FormatPerfScript, n, "%v", r.err)
			}
			demangled = demangled || r.demangled
			cur.frames = append(cur.frames, r.f)
		default:
			m := perfHeader.FindStringSubmatch(line)
			if m == nil {
				return nil, failf(FormatPerfScript, n, "not a perf script sample header: %.80q", line)
			}
			ev, ok := eventIdx[m[7]]
			if !ok {
				ev = len(out.Events)
				eventIdx[m[7]] = ev
				out.Events = append(out.Events, m[7])
				hasPeriod = append(hasPeriod, m[6] != "")
			}
			if hasPeriod[ev] != (m[6] != "") {
				return nil, failf(FormatPerfScript, n, "event %q has samples with and without a period", m[7])
			}
			cur = &perfSample{event: ev, value: 1, comm: strings.TrimSpace(m[1]), pid: -1}
			cur.tid, _ = strconv.ParseInt(m[2], 10, 64)
			if m[3] != "" { // pid/tid
				cur.pid = cur.tid
				cur.tid, _ = strconv.ParseInt(m[3], 10, 64)
			} else {
				noPid++
			}
			if m[6] != "" {
				v, err := strconv.ParseInt(m[6], 10, 64)
				if err != nil || v < 0 {
					return nil, failf(FormatPerfScript, n, "bad period %q", m[6])
				}
				cur.value = v
			}
			if perfFrameStart.MatchString(" " + m[8]) {
				f, dm, err := parsePerfFrame(" "+m[8], opts)
				if err == nil {
					cur.frames, demangled = append(cur.frames, f), demangled || dm
				}
			}
			samples = append(samples, cur)
			terminated = false
		}
	}
	if len(samples) == 0 {
		return nil, failf(FormatPerfScript, 0, "perf script output holds no samples")
	}
	types := make([]*profile.ValueType, len(out.Events))
	for i, ev := range out.Events {
		unit := "count"
		base, _, _ := strings.Cut(ev, ":")
		if hasPeriod[i] && (base == "cpu-clock" || base == "task-clock") {
			unit = "nanoseconds"
		}
		types[i] = &profile.ValueType{Type: ev, Unit: unit}
		if !hasPeriod[i] {
			out.Limitations = append(out.Limitations, fmt.Sprintf(
				"event %s: no period column, each sample counts 1 (not the event count)", ev))
		}
	}
	b := newBuilder(types...)
	empty := 0
	for _, s := range samples {
		if len(s.frames) == 0 {
			empty++
		}
		vals := make([]int64, len(types))
		vals[s.event] = s.value
		ps := &profile.Sample{Location: b.stack(s.frames), Value: vals,
			Label:    map[string][]string{"thread": {s.comm}},
			NumLabel: map[string][]int64{"thread_id": {s.tid}}}
		if s.pid >= 0 {
			ps.NumLabel["pid"] = []int64{s.pid}
		}
		b.p.Sample = append(b.p.Sample, ps)
	}
	out.P = b.p
	if noPid > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf(
			"%d of %d samples show one id, which perf script prints as the tid: they carry thread_id but no pid", noPid, len(samples)))
	}
	if b.unsymbolized > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf("%d locations are unsymbolized ([unknown] in perf script)", b.unsymbolized))
	}
	if demangled {
		out.Limitations = append(out.Limitations, "mangled Rust/C++ symbols were demangled; the raw symbol is kept as SystemName")
	}
	if empty > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf(
			"%d samples have no callchain: they count in totals but in no function", empty))
	}
	if !terminated {
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
