package heaptrack

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// TestParseReport reads heaptrack_print's report of testdata's capture of
// alloc.c: 1,500,000 bytes at the peak, 1000 bytes leaked, ten temporary
// mallocs in main.
func TestParseReport(t *testing.T) {
	f, err := os.Open("testdata/alloc.report.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := ParseReport(f, config.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	for _, c := range []struct {
		name string
		got  *int64
		want int64
	}{
		{"allocations", s.Allocations, 13}, {"temporary", s.TemporaryAllocations, 11},
		{"peak heap", s.PeakHeap, 1570000}, {"leaked", s.Leaked, 1000},
	} {
		if c.got == nil || *c.got != c.want {
			t.Errorf("%s = %v, want %d", c.name, c.got, c.want)
		}
	}
	if rep.Debuggee != "./alloc" {
		t.Errorf("debuggee %q", rep.Debuggee)
	}
	peak := rep.Sections[SectionPeak]
	if len(peak) == 0 || peak[0].Bytes != 1500000 || peak[0].Calls != 1 || peak[0].Location[0].Function != "main" ||
		peak[0].Location[0].Line != 4 || !strings.HasSuffix(peak[0].Location[0].File, "alloc.c") {
		t.Fatalf("top peak consumer %+v, want main at alloc.c:4 with 1.50M over 1 call", peak)
	}
	leaks := rep.Sections[SectionLeaks]
	if len(leaks) == 0 || leaks[0].Bytes != 1000 || leaks[0].Location[0].Line != 6 {
		t.Fatalf("top leak %+v, want 1000B at alloc.c:6", leaks)
	}
	tmp := rep.Sections[SectionTemporary]
	if len(tmp) == 0 || tmp[0].Calls != 10 || tmp[0].Total != 10 || tmp[0].Location[0].Line != 5 {
		t.Fatalf("top temporary %+v, want 10 of 10 at alloc.c:5", tmp)
	}
	if len(rep.Sections[SectionAllocations]) == 0 {
		t.Fatal("no allocation entries")
	}
}

// TestParseReportRefuses: output that is cut off, empty, mislabelled or
// beyond the limits is refused with the reason.
func TestParseReportRefuses(t *testing.T) {
	good, err := os.ReadFile("testdata/alloc.report.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(good)
	cut := text[:strings.Index(text, "peak heap memory")]
	for _, c := range []struct {
		name, in string
		lim      config.Limits
		want     string
	}{
		{"empty", "", config.Limits{}, "no summary"},
		{"cut off", cut, config.Limits{}, "no summary"},
		{"massif", "desc: --time-unit=B\ncmd: ./a\ntime_unit: B\n", config.Limits{}, "before any section"},
		{"bad size", strings.Replace(text, "peak heap memory consumption: 1.57M", "peak heap memory consumption: 1.57Q", 1), config.Limits{}, "not a size"},
		{"twice", text + "total memory leaked: 1B\n", config.Limits{}, "twice"},
		{"entries", text, config.Limits{MaxSamples: 2}, "max_samples"},
		{"frames", text, config.Limits{MaxStackFrames: 3}, "max_stack_frames"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseReport(strings.NewReader(c.in), c.lim)
			if !errors.Is(err, ErrReport) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrReport saying %q", err, c.want)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		text string
	}{{0, "0B"}, {5, "5B"}, {1000, "1000B"}, {72704, "72.70K"}, {1574728, "1.57M"}, {146570000, "146.57M"}, {3 << 40, "3.30T"}} {
		if got := FormatBytes(c.n); got != c.text {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.text)
		}
		v, err := ParseBytes(c.text)
		if err != nil || abs64(v-c.n) > Precision(c.text) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d ± %d", c.text, v, err, c.n, Precision(c.text))
		}
	}
	for _, bad := range []string{"", "B", "1.5", "-1K", "1e3B", "NaNK", "0x10B", "99999999999999999999E"} {
		if v, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", bad, v)
		}
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
