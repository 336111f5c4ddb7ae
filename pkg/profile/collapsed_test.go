package profile

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

// foldedSum adds up the trailing counts of a folded file on its own terms.
func foldedSum(t *testing.T, data []byte) int64 {
	var sum int64
	scanLines(data, func(l string) {
		if strings.TrimSpace(l) == "" {
			return
		}
		f := strings.Fields(l)
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("line without a count: %.60q", l)
		}
		sum += n
	})
	return sum
}

func TestCollapsedTotals(t *testing.T) {
	for _, file := range []string{
		"collapsed/flamegraph__perf-vertx-stacks-01-collapsed-all.txt",
		"collapsed/flamegraph__perf-java-stacks-01-collapsed-jit.txt",
		"collapsed/flamegraph__perf-numa-stacks-01-collapsed-pid.txt",
		"collapsed/flamegraph__perf-cycles-instructions-01-collapsed-addrs.txt",
	} {
		t.Run(file, func(t *testing.T) {
			path := shared(t, file)
			p := parseFile(t, path)
			if p.Format != FormatCollapsed {
				t.Fatalf("format %s", p.Format)
			}
			if got, want := total(t, p, "samples"), foldedSum(t, readPlain(t, path)); got != want {
				t.Errorf("total %d, sum of counts in the file %d", got, want)
			}
		})
	}
}

func TestCollapsedKeepsAnnotations(t *testing.T) {
	names := func(p *Profile) map[string]bool {
		m := map[string]bool{}
		for _, f := range p.P.Function {
			m[f.Name] = true
		}
		return m
	}
	all := names(parseFile(t, shared(t, "collapsed/flamegraph__perf-vertx-stacks-01-collapsed-all.txt")))
	if !all["hypercall_page_[k]"] || !all["Interpreter_[j]"] {
		t.Error("_[k]/_[j] annotations not kept in names")
	}
	if pid := names(parseFile(t, shared(t, "collapsed/flamegraph__perf-numa-stacks-01-collapsed-pid.txt"))); !pid["java-?"] {
		t.Error("comm-PID root frame java-? not kept")
	}
}

// The folded -jit file is stackcollapse-perf.pl's output for the java perf
// script file. SOURCES.md says 45 samples for both; the data says the perf
// script holds 46 headers. The 46th sample is the last in the file and is
// not followed by a blank line, and stackcollapse-perf.pl only emits a stack
// when it reaches a blank line, so it dropped that sample. Per process the
// two files must then agree exactly.
func TestCollapsedJITMatchesPerfSibling(t *testing.T) {
	folded := parseFile(t, shared(t, "collapsed/flamegraph__perf-java-stacks-01-collapsed-jit.txt"))
	perf := parseFile(t, shared(t, "perf-script/flamegraph__perf-java-stacks-01.txt"))
	if got := total(t, folded, "samples"); got != 45 {
		t.Fatalf("folded total %d, want 45", got)
	}
	if got := total(t, perf, "cycles"); got != 46 {
		t.Fatalf("perf script total %d, want 46", got)
	}
	if !strings.Contains(strings.Join(perf.Limitations, "\n"), "last sample is not followed by a blank line") {
		t.Errorf("unterminated last sample not reported: %v", perf.Limitations)
	}
	want := labelTotals(t, perf, "cycles", "thread")
	want[perf.P.Sample[len(perf.P.Sample)-1].Label["thread"][0]]--
	got := map[string]int64{}
	for _, s := range folded.P.Sample {
		root := s.Location[len(s.Location)-1].Line[0].Function.Name
		got[root] += s.Value[0]
	}
	if !maps.Equal(got, want) {
		t.Errorf("per-process totals: folded %v, perf script without its last sample %v", got, want)
	}
}

// The -addrs folded file kept only one of the two events (333 =
// instructions), which is why perf script events must not be summed.
func TestCollapsedAddrsIsOneEvent(t *testing.T) {
	folded := parseFile(t, shared(t, "collapsed/flamegraph__perf-cycles-instructions-01-collapsed-addrs.txt"))
	perf := parseFile(t, shared(t, "perf-script/flamegraph__perf-cycles-instructions-01.txt"))
	if f, i := total(t, folded, "samples"), total(t, perf, "instructions"); f != i {
		t.Errorf("folded total %d, perf instructions %d", f, i)
	}
}

func TestCollapsedEmptyStackLines(t *testing.T) {
	in := "main;work;burn 5\n 2\nmain;idle 1\n"
	if Detect([]byte(in)) != FormatCollapsed {
		t.Fatal("py-spy raw output with empty-stack lines not detected")
	}
	p, err := Parse(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	total, _ := Totals(p.P, 0)
	if total != 8 {
		t.Fatalf("total %d, want 8 (empty-stack samples count)", total)
	}
	if Top(p.P, 0, nil)[0].Function != "burn" {
		t.Fatal("top frame")
	}
}
