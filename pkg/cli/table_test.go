package cli

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

func TestCutMiddle(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"github.com/flameox/flameox/pkg/analysis.Hotspots", 20, "github.co…s.Hotspots"},
		{"abcdef", 5, "ab…ef"},
		{"abcdef", 1, "…"},
		{"ab\u202ecdefghijkl", 10, "ab…fghijkl"},
		{"日本語のなまえです", 9, "日本…です"},
	} {
		got := CutMiddle(tc.in, tc.width)
		if got != tc.want {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		if StringWidth(got) > tc.width {
			t.Errorf("CutMiddle(%q, %d) takes %d cells", tc.in, tc.width, StringWidth(got))
		}
	}
	// An escape is never split: it is kept whole or dropped.
	if got := CutMiddle("\u202e"+strings.Repeat("a", 20), 12); got != "…"+strings.Repeat("a", 11) {
		t.Errorf("escape split: %q", got)
	}
}

// TestTableAsTabwriter: a table that fits is what text/tabwriter with
// padding 2 prints, so adopting Table changes no output that fitted.
func TestTableAsTabwriter(t *testing.T) {
	rows := [][]string{{"RUN", "WORKLOAD", "STATE"}, {"run_1", "bench rounds=3", "registered"}, {"run_22", "-", "failed (X)"}}
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		tw.Write([]byte(strings.Join(r, "\t") + "\n"))
	}
	tw.Flush()
	var got bytes.Buffer
	(&Table{Header: rows[0], Rows: rows[1:], Flex: []int{1}}).Write(&got, 80, false)
	if got.String() != want.String() {
		t.Fatalf("table\n%s\ntabwriter\n%s", got.String(), want.String())
	}
}

// TestTableFits: a table wider than its width cuts its flex columns in the
// middle, widest first, until every line fits; fixed columns stay whole.
func TestTableFits(t *testing.T) {
	long := "import " + strings.Repeat("very-long-directory/", 5) + "cpu.pprof"
	tb := &Table{
		Header: []string{"RUN", "CREATED", "WORKLOAD", "OUTCOME", "STATE"},
		Rows: [][]string{
			{"run_01hq3", "2026-01-02 15:04:05", long, "imported", "registered; owner process gone (PROCESS_CANCELLED)"},
			{"run_01hq4", "2026-01-02 15:04:06", "bench rounds=3", "succeeded", "registered"},
		},
		Flex: []int{2, 4},
	}
	for _, width := range []int{80, 100, 300} {
		var b bytes.Buffer
		tb.Write(&b, width, false)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("width %d: %d lines", width, len(lines))
		}
		for _, l := range lines {
			if n := StringWidth(l); n > width {
				t.Fatalf("width %d: a %d-cell line %q", width, n, l)
			}
			if !strings.Contains(l, "run_01hq") && !strings.HasPrefix(l, "RUN") {
				t.Fatalf("width %d: the RUN column was cut: %q", width, l)
			}
		}
		cut := strings.Contains(b.String(), Ellipsis)
		if width == 80 && (!cut || !strings.Contains(lines[1], "pprof")) || width == 300 && cut {
			t.Fatalf("width %d: cut %v:\n%s", width, cut, b.String())
		}
	}
}

// TestTableColor: the header is bold and a body cell takes its style only
// when colour is on; padding stays outside the escapes, so columns line
// up as without colour.
func TestTableColor(t *testing.T) {
	tb := &Table{Header: []string{"A", "OUTCOME", "B"}, Rows: [][]string{{"x", "failed", "y"}},
		Color: func(row, col int) Style {
			if col == 1 {
				return Red
			}
			return ""
		}}
	var plain, color bytes.Buffer
	tb.Write(&plain, 80, false)
	tb.Write(&color, 80, true)
	if strings.Contains(plain.String(), "\x1b") {
		t.Fatalf("colour off: %q", plain.String())
	}
	want := "\x1b[1mA\x1b[0m  \x1b[1mOUTCOME\x1b[0m  \x1b[1mB\x1b[0m\nx  \x1b[31mfailed\x1b[0m   y\n"
	if color.String() != want {
		t.Fatalf("colour on: %q, want %q", color.String(), want)
	}
}

// TestTableDrops: a table that cannot fit with its flex columns at their
// narrowest leaves out its Drop columns, first first, says which, and
// then cuts (the headers it returns are in column order); width 0 fits
// nothing.
func TestTableDrops(t *testing.T) {
	tb := &Table{
		Header: []string{"ID", "WHEN", "WHAT", "SIZE", "STATE"},
		Rows:   [][]string{{"04449c70-2f10-4a7c-8cb4-65094c57fe48", "2026-12-01 11:43:21", "bench mode=fast n=131072", "91.3 MiB", "registered, validation passed"}},
		Flex:   []int{2, 4}, Drop: []int{3, 1}, MinFlex: 8,
	}
	for _, tc := range []struct {
		width   int
		dropped string
		whole   bool
	}{
		{0, "", true},
		{200, "", true},
		{100, "", false},
		{80, "SIZE", false},
		{60, "WHEN,SIZE", false},
	} {
		var b bytes.Buffer
		dropped, err := tb.Write(&b, tc.width, false)
		if err != nil || strings.Join(dropped, ",") != tc.dropped {
			t.Errorf("width %d: dropped %v (%v), want %q", tc.width, dropped, err, tc.dropped)
		}
		if whole := strings.Contains(b.String(), "registered, validation passed"); whole != tc.whole {
			t.Errorf("width %d: whole %v:\n%s", tc.width, whole, b.String())
		}
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if tc.width > 0 && StringWidth(l) > tc.width {
				t.Errorf("width %d: a %d-cell line %q", tc.width, StringWidth(l), l)
			}
			if !strings.Contains(l, "04449c70-2f10-4a7c-8cb4-65094c57fe48") && !strings.HasPrefix(l, "ID") {
				t.Errorf("width %d: the id was cut: %q", tc.width, l)
			}
		}
	}
}
