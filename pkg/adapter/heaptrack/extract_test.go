package heaptrack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// sharedFixtures is ../shared/fixtures/heaptrack from the repository
// root. Those files are (L)GPL, so they are read in place, never copied.
const sharedFixtures = "../../../../shared/fixtures/heaptrack"

// files returns testdata's own captures and, where the shared fixtures
// exist, every heaptrack fixture.
func files(t *testing.T) []string {
	t.Helper()
	out := []string{"testdata/heaptrack.alloc.zst", "testdata/heaptrack.alloc.gz"}
	shared, _ := filepath.Glob(filepath.Join(sharedFixtures, "heaptrack__*"))
	if len(shared) == 0 {
		testenv.Unable(t, "shared fixtures", "not present", "%s has no heaptrack files", sharedFixtures)
	}
	return append(out, shared...)
}

// extract runs the extractor on path into a test sink.
func extract(t *testing.T, path string) (*adapter.Extraction, []map[string]any, error) {
	t.Helper()
	head, err := readHead(path, 4096)
	if err != nil {
		t.Fatal(err)
	}
	a := New()
	in := adapter.ExtractInput{RunID: "run", ArtifactID: "art", Path: path, Head: head, Limits: config.DefaultLimits()}
	if !a.Accepts(in) {
		return nil, nil, errors.New("not accepted")
	}
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := a.Extract(context.Background(), in, sink)
	if err != nil {
		return nil, nil, err
	}
	return x, sink.Rows(t, "measurements"), nil
}

// TestAgreesWithHeaptrackPrint extracts every fixture and compares each
// measurement with the summary line heaptrack_print itself prints for the
// same file, run side by side with its default options.
func TestAgreesWithHeaptrackPrint(t *testing.T) {
	exe := testenv.LookPath(t, "heaptrack_print")
	for _, path := range files(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out, err := exec.Command(exe, "-f", path).Output()
			if err != nil {
				t.Fatalf("heaptrack_print -f %s: %v", path, err)
			}
			want := map[string]string{}
			for _, l := range strings.Split(string(out), "\n") {
				for _, k := range summaryKeys {
					if v, ok := strings.CutPrefix(l, k.prefix); ok {
						want[k.key] = v
					}
				}
			}
			_, rows, err := extract(t, path)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, r := range rows {
				got[r["name"].(string)] = r["value_int"]
			}
			for _, c := range []struct{ name, key string }{
				{MetricPeakHeap, "peak_heap"}, {MetricLeaked, "leaked"}, {MetricPeakRSS, "peak_rss"},
				{MetricAllocs, "allocations"}, {MetricTemporary, "temporary_allocations"},
			} {
				v, ok := got[c.name].(int64)
				if !ok {
					t.Errorf("%s missing (rows %v)", c.name, got)
					continue
				}
				text := FormatBytes(v)
				if c.key == "allocations" || c.key == "temporary_allocations" {
					text = strconv.FormatInt(v, 10)
					want[c.key], _, _ = strings.Cut(want[c.key], " ")
				}
				if text != want[c.key] {
					t.Errorf("%s = %d (%s), heaptrack_print says %q", c.name, v, text, want[c.key])
				}
			}
		})
	}
}

// TestRefusesBrokenFiles: truncated, empty and mislabelled files fail with
// ARTIFACT_PARSE_FAILED and the reason, though heaptrack_print itself
// reports a cut-off file without complaint.
func TestRefusesBrokenFiles(t *testing.T) {
	testenv.LookPath(t, "heaptrack_print")
	dir := t.TempDir()
	zst, _ := os.ReadFile("testdata/heaptrack.alloc.zst")
	gz, _ := os.ReadFile("testdata/heaptrack.alloc.gz")
	var plain bytes.Buffer
	r, done, err := open(bytes.NewReader(zst))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	done()
	text := plain.Bytes()
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated.zst", zst[:len(zst)/2], "cut off"},
		{"truncated.gz", gz[:len(gz)-40], "cut off"},
		{"no-trailer.txt", text[:bytes.Index(text, []byte("# strings"))], "closing"},
		{"empty.zst", []byte{}, "not accepted"},
		{"massif.zst", []byte("desc: (none)\ncmd: ./a\ntime_unit: i\n"), "not accepted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := extract(t, p)
			var fe *fault.Error
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
			if c.want != "not accepted" && (!errors.As(err, &fe) || fe.Code != fault.ArtifactParseFailed) {
				t.Fatalf("err = %v, want ARTIFACT_PARSE_FAILED", err)
			}
			if c.want == "not accepted" {
				if _, err := Envelope(p, config.Limits{}); !errors.Is(err, ErrEnvelope) {
					t.Fatalf("Envelope = %v, want ErrEnvelope", err)
				}
			}
		})
	}
}

// TestLimits: a decompression limit below the file's size refuses it.
func TestLimits(t *testing.T) {
	_, err := Envelope("testdata/heaptrack.alloc.zst", config.Limits{MaxDecompressedBytes: 100})
	if !errors.Is(err, ErrEnvelope) || !strings.Contains(err.Error(), "max_decompressed_bytes") {
		t.Fatalf("err = %v", err)
	}
}

// TestMissingReporter: without heaptrack_print the import says exactly
// what is missing.
func TestMissingReporter(t *testing.T) {
	a := &Adapter{Sys: System{LookPath: func(string) (string, error) { return "", exec.ErrNotFound },
		Output: func(context.Context, []string, int64, time.Duration) ([]byte, error) {
			return nil, errors.New("unused")
		}}}
	in := adapter.ExtractInput{Path: "testdata/heaptrack.alloc.zst"}
	_, err := a.Extract(context.Background(), in, adaptertest.NewSink(t, ExtractorName, ExtractorVersion))
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CapabilityUnavailable || !strings.Contains(err.Error(), "heaptrack_print") {
		t.Fatalf("err = %v", err)
	}
	if c := a.Probe(context.Background()); c.Status != adapter.Unavailable || len(c.Remediation) == 0 {
		t.Fatalf("probe %+v", c)
	}
}

// TestAnyName: heaptrack_print picks its decompression by file name, so a
// payload stored without the suffix must still give the real figures.
func TestAnyName(t *testing.T) {
	testenv.LookPath(t, "heaptrack_print")
	for _, src := range []string{"testdata/heaptrack.alloc.zst", "testdata/heaptrack.alloc.gz"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "payload")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, rows, err := extract(t, p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rows {
			if r["name"] == MetricPeakHeap && r["value_int"] != int64(1573704) {
				t.Errorf("%s as payload: peak heap %v, want 1573704 (alloc.c's 1,500,000 and 1000, libstdc++'s pool of 72,704)", src, r["value_int"])
			}
			if strings.HasPrefix(r["name"].(string), "memory.") && r["name"] != MetricSnapshotHeap {
				n++
			}
		}
		if n != 5 {
			t.Errorf("%s as payload: %d memory measurements, want 5", src, n)
		}
	}
}
