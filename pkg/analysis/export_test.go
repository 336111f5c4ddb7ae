package analysis

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/google/jsonschema-go/jsonschema"
	gprof "github.com/google/pprof/profile"
)

// exportFixtures are profiles of every format flameox reads.
var exportFixtures = []string{
	"../profile/testdata/google-pprof__sample.cpu.pb.gz",
	"../profile/testdata/parca__alloc_objects.pb.gz",
	"../profile/testdata/cs336-basics__py-spy-0.4.2.speedscope.json",
	"../profile/testdata/speedscope__rust-mangled.linux-perf.txt",
}

func parseFile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExportPprof: the pprof export of every fixture has the same -top as
// the profile flameox read (profile.Top, which equals go tool pprof -top),
// and for pprof inputs go tool pprof prints the same -top for the export
// as for the original.
func TestExportPprof(t *testing.T) {
	ws, runs := importProfiles(t, exportFixtures...)
	dir := t.TempDir()
	for i, fx := range exportFixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			out := filepath.Join(dir, filepath.Base(fx)+".pb.gz")
			res, err := Export(context.Background(), ws, ExportRequest{Input: runs[i], Format: "pprof", Output: out}, dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bytes == 0 || res.Path != out {
				t.Fatalf("%+v", res)
			}
			orig := parseFile(t, fx).P
			f, _ := os.Open(out)
			exp, err := gprof.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for si := range orig.SampleType {
				if a, b := profile.Top(orig, si, nil), profile.Top(exp, si, nil); !reflect.DeepEqual(a, b) {
					t.Errorf("sample type %d: top differs: %d rows, export %d", si, len(a), len(b))
				}
			}
			if strings.HasSuffix(fx, ".pb.gz") {
				goTop := func(p string) string {
					cmd := exec.Command("go", "tool", "pprof", "-top", "-nodecount=200", p)
					b, err := cmd.Output()
					if err != nil {
						testenv.Unable(t, "go tool pprof", "failed", "%v", err)
					}
					var keep []string
					for _, l := range strings.Split(string(b), "\n") {
						if !strings.HasPrefix(l, "File:") && !strings.HasPrefix(l, "Build ID:") {
							keep = append(keep, l)
						}
					}
					return strings.Join(keep, "\n")
				}
				if a, b := goTop(fx), goTop(out); a != b {
					t.Errorf("go tool pprof -top differs:\n%s\nexport:\n%s", a, b)
				}
			}
		})
	}
}

// TestExportCollapsedAndSpeedscope: the collapsed export reads back with
// the same total and per-function flat values; the speedscope export
// validates against speedscope's file-format schema and its weights sum
// to the same total.
func TestExportCollapsedAndSpeedscope(t *testing.T) {
	ws, runs := importProfiles(t, exportFixtures...)
	dir := t.TempDir()
	raw, err := os.ReadFile("testdata/speedscope-file-format-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, fx := range exportFixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			orig := parseFile(t, fx).P
			si, _ := profile.SampleIndex(orig, "")
			total, _ := profile.Totals(orig, si)
			col := filepath.Join(dir, filepath.Base(fx)+".collapsed")
			res, err := Export(context.Background(), ws, ExportRequest{Input: runs[i], Format: "collapsed", Output: col}, dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != total || res.SampleType != orig.SampleType[si].Type {
				t.Fatalf("collapsed total %d (%s), profile %d", res.Total, res.SampleType, total)
			}
			back := parseFile(t, col).P
			if bt, _ := profile.Totals(back, 0); bt != total {
				t.Errorf("collapsed reads back with total %d, want %d", bt, total)
			}
			flat := func(p *gprof.Profile, si int) map[string]int64 {
				m := map[string]int64{}
				for _, r := range profile.Top(p, si, nil) {
					m[strings.ReplaceAll(r.Function, ";", ":")] += r.Flat
				}
				return m
			}
			if a, b := flat(orig, si), flat(back, 0); !reflect.DeepEqual(a, b) {
				t.Errorf("flat values differ after the collapsed round trip (%d functions, %d back)", len(a), len(b))
			}
			ss := filepath.Join(dir, filepath.Base(fx)+".speedscope.json")
			res, err = Export(context.Background(), ws, ExportRequest{Input: runs[i], Format: "speedscope", Output: ss}, dir)
			if err != nil || res.Total != total {
				t.Fatalf("speedscope: %v, total %v", err, res)
			}
			b, _ := os.ReadFile(ss)
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(doc); err != nil {
				t.Fatalf("speedscope export does not validate: %v", err)
			}
			var file struct {
				Profiles []struct {
					Weights []int64 `json:"weights"`
					Samples [][]int `json:"samples"`
				} `json:"profiles"`
				Shared struct {
					Frames []struct{} `json:"frames"`
				} `json:"shared"`
			}
			json.Unmarshal(b, &file)
			var sum int64
			for j, w := range file.Profiles[0].Weights {
				sum += w
				for _, id := range file.Profiles[0].Samples[j] {
					if id < 0 || id >= len(file.Shared.Frames) {
						t.Fatalf("frame index %d of %d", id, len(file.Shared.Frames))
					}
				}
			}
			if sum != total {
				t.Errorf("speedscope weights sum to %d, want %d", sum, total)
			}
			// flameox reads its own speedscope export back.
			sp := parseFile(t, ss).P
			var totals []int64
			for j := range sp.SampleType {
				v, _ := profile.Totals(sp, j)
				totals = append(totals, v)
			}
			if !slices.Contains(totals, total) {
				t.Errorf("speedscope reads back with totals %v, want %d among them", totals, total)
			}
		})
	}
}

// TestExportRefuses: a bad format, no output, a sample type the profile
// lacks, and an output inside .diagnostics (directly or through a link)
// are refused; nothing is written.
func TestExportRefuses(t *testing.T) {
	ws, runs := importProfiles(t, exportFixtures[0])
	dir := t.TempDir()
	link := filepath.Join(dir, "into-corpus")
	if err := os.Symlink(ws.Root, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  ExportRequest
	}{
		{"format", ExportRequest{Input: runs[0], Format: "svg", Output: "x"}},
		{"no output", ExportRequest{Input: runs[0], Format: "pprof"}},
		{"sample type", ExportRequest{Input: runs[0], Format: "collapsed", Output: "x", SampleType: "alloc_space"}},
		{"pprof sample type", ExportRequest{Input: runs[0], Format: "pprof", Output: "x", SampleType: "cpu"}},
		{"inside .diagnostics", ExportRequest{Input: runs[0], Format: "pprof", Output: filepath.Join(ws.Root, "x.pb.gz")}},
		{"through a link", ExportRequest{Input: runs[0], Format: "pprof", Output: filepath.Join(link, "x.pb.gz")}},
	} {
		_, err := Export(context.Background(), ws, c.req, dir)
		if !fault.Is(err, fault.InvalidArguments) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws.Root, "x.pb.gz")); err == nil {
		t.Error("wrote inside .diagnostics")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("wrote %v", entries)
	}
}
