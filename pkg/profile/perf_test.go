package profile

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// perfHeaderCounts scans perf script output on its own terms: every line
// that is neither indented, blank nor a comment is a sample header whose last
// field is "event:", preceded by a period when the field before that is the
// "time:" column.
func perfHeaderCounts(t *testing.T, data []byte) (samples, sums map[string]int64) {
	samples, sums = map[string]int64{}, map[string]int64{}
	scanLines(data, func(l string) {
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || strings.TrimSpace(l) == "" {
			return
		}
		f := strings.Fields(l)
		ev := strings.TrimSuffix(f[len(f)-1], ":")
		v := int64(1)
		if len(f) >= 4 && strings.HasSuffix(f[len(f)-3], ":") { // "time: period event:"
			p, err := strconv.ParseInt(f[len(f)-2], 10, 64)
			if err != nil {
				t.Fatalf("bad period in %q", l)
			}
			v = p
		}
		samples[ev]++
		sums[ev] += v
	})
	return samples, sums
}

func TestPerfScriptTotalsMatchHeaders(t *testing.T) {
	for _, file := range []string{
		"testdata/speedscope__rust-mangled.linux-perf.txt",
		"perf-script/flamegraph__example-perf-stacks.txt.gz",
		"perf-script/flamegraph__perf-cycles-instructions-01.txt",
		"perf-script/flamegraph__perf-java-stacks-01.txt",
		"perf-script/flamegraph__perf-js-stacks-01.txt",
	} {
		t.Run(file, func(t *testing.T) {
			path := file
			if !strings.HasPrefix(file, "testdata/") {
				path = shared(t, file)
			}
			p := parseFile(t, path)
			if p.Format != FormatPerfScript {
				t.Fatalf("format %s", p.Format)
			}
			wantN, wantSum := perfHeaderCounts(t, readPlain(t, path))
			if len(p.Events) != len(wantN) {
				t.Fatalf("events %v, file has %v", p.Events, wantN)
			}
			for _, ev := range p.Events {
				tot, n := p.Totals(mustIndex(t, p, ev))
				if n != wantN[ev] || tot != wantSum[ev] {
					t.Errorf("%s: %d samples totalling %d, file has %d headers totalling %d", ev, n, tot, wantN[ev], wantSum[ev])
				}
			}
			for _, s := range p.P.Sample { // one event per sample, never summed
				nonZero := 0
				for _, v := range s.Value {
					if v != 0 {
						nonZero++
					}
				}
				if nonZero != 1 {
					t.Fatalf("sample with %d non-zero event values: %v", nonZero, s.Value)
				}
			}
		})
	}
}

func TestPerfTwoEventsStayApart(t *testing.T) {
	p := parseFile(t, shared(t, "perf-script/flamegraph__perf-cycles-instructions-01.txt"))
	if got := strings.Join(p.Events, ","); got != "instructions,cycles" {
		t.Fatalf("events %q", got)
	}
	for ev, want := range map[string]int64{"cycles": 111, "instructions": 333} {
		if got := total(t, p, ev); got != want {
			t.Errorf("%s total %d, want %d", ev, got, want)
		}
		if u := p.P.SampleType[mustIndex(t, p, ev)].Unit; u != "count" {
			t.Errorf("%s unit %q", ev, u)
		}
	}
	if !strings.HasPrefix(p.Producer, "perf 4.13") {
		t.Errorf("producer %q", p.Producer)
	}
}

func TestPerfPeriodDemangleAndLabels(t *testing.T) {
	p := parseFile(t, "testdata/speedscope__rust-mangled.linux-perf.txt")
	st := p.P.SampleType[0]
	if st.Type != "task-clock:ppp" || st.Unit != "nanoseconds" {
		t.Fatalf("sample type %s/%s", st.Type, st.Unit)
	}
	demangled := false
	for _, f := range p.P.Function {
		if strings.HasPrefix(f.SystemName, "_R") && f.Name != f.SystemName && strings.Contains(f.Name, "::") {
			demangled = true
		}
		if strings.Contains(f.Name, "+0x") {
			t.Errorf("symbol offset kept in %q", f.Name)
		}
	}
	if !demangled {
		t.Error("no Rust v0 symbol was demangled")
	}
	s := p.P.Sample[0]
	if s.Label["thread"][0] != "trace" || s.NumLabel["thread_id"][0] != 6061 || s.NumLabel["pid"] != nil {
		t.Errorf("labels %v %v", s.Label, s.NumLabel)
	}
}

func TestPerfNoTimestampJITKernelUnknown(t *testing.T) {
	js := parseFile(t, shared(t, "perf-script/flamegraph__perf-js-stacks-01.txt"))
	if n := len(js.P.Sample); n != 2 {
		t.Fatalf("perf-js: %d samples, want 2", n)
	}
	leaf := js.P.Sample[0].Location[0]
	if !strings.HasPrefix(leaf.Line[0].Function.Name, "RegExp:") {
		t.Errorf("JIT leaf %q", leaf.Line[0].Function.Name)
	}
	if leaf.Mapping == nil || leaf.Mapping.File != "/tmp/perf-7539.map" {
		t.Errorf("JIT leaf mapping %+v", leaf.Mapping)
	}

	ex := parseFile(t, shared(t, "perf-script/flamegraph__example-perf-stacks.txt.gz"))
	if ex.Producer != "perf 3.13.11-ckt12" {
		t.Errorf("producer %q", ex.Producer)
	}
	var kernel, unknown int
	for _, l := range ex.P.Location {
		if l.Mapping != nil && l.Mapping.File == "[kernel.kallsyms]" && len(l.Line) == 1 {
			kernel++
		}
		if len(l.Line) == 0 {
			unknown++
			if l.Address == 0 {
				t.Errorf("unsymbolized location %d lost its address", l.ID)
			}
		}
	}
	if kernel == 0 || unknown == 0 {
		t.Errorf("kernel frames %d, unsymbolized frames %d: want both > 0", kernel, unknown)
	}
	first := ex.P.Sample[0]
	if first.NumLabel["pid"][0] != 977 || first.NumLabel["thread_id"][0] != 977 {
		t.Errorf("pid/tid labels %v", first.NumLabel)
	}
}

// FuzzPerfHeader: the hand-written header matcher returns exactly what the
// regexp it replaces returns, on any line.
func FuzzPerfHeader(f *testing.F) {
	for _, s := range []string{
		"perf 1234/1234 [000] 12345.678901: 100 cycles:u: \t ffff f (/x)",
		"my comm 7 12 1.5: cycles:",
		"node-v011 31912 cpu-clock: ",
		"a 1 [2] 3.4: 5 e:",
		"a 1 1.5:",
		"a 1 [2]:",
		"x 1/2 3 4 5: ev: rest",
		"java 1 2 3 4",
		"trace  6061 1000.000001:    250000 task-clock:ppp:  55d5 _R3foo (/bin/t)",
		" leading 1 e:",
		"a\t1\tcycles:\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		want := perfHeader().FindSubmatchIndex([]byte(line))
		got := perfHeaderMatch([]byte(line))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: matcher %v, regexp %v", line, got, want)
		}
	})
}
