package analysis

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/profile/pproftest"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
	gprof "github.com/google/pprof/profile"
)

// Two function names that differ only in their invalid UTF-8 bytes: both
// read "bad\uFFFD" once stored, and must stay two frames.
const badA, badB = "bad\xff\xfe", "bad\xfe\xff"

func sha(s string) string {
	d := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(d[:])
}

// invalidPprof is a profile whose function names, file names, mapping
// file, sample labels and a comment (every kind of string-table entry
// flameox reads) are not valid UTF-8.
func invalidPprof(t *testing.T) string {
	t.Helper()
	m := &gprof.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/bin/prog\xff", HasFunctions: true}
	p := &gprof.Profile{Mapping: []*gprof.Mapping{m},
		SampleType: []*gprof.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		Period:     1, PeriodType: &gprof.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Comments: []string{"comment \xc0"}}
	for i, name := range []string{"main.main", badA, badB} {
		fn := &gprof.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: "src/\xff" + name + ".go"}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, &gprof.Location{ID: uint64(i + 1), Mapping: m, Address: 0x1000 + uint64(i)*16,
			Line: []gprof.Line{{Function: fn, Line: int64(i + 1)}}})
	}
	for i, v := range []int64{0, 30, 20} {
		if v == 0 {
			continue
		}
		p.Sample = append(p.Sample, &gprof.Sample{Location: []*gprof.Location{p.Location[i], p.Location[0]}, Value: []int64{v},
			Label: map[string][]string{"thread": {"worker\xff"}, "key\xfe": {"x"}}})
	}
	path := filepath.Join(t.TempDir(), "invalid.pb.gz")
	pproftest.Write(t, path, p)
	return path
}

// TestHotspotsInvalidUTF8Pprof imports a pprof with invalid UTF-8 in
// every string it carries and asks for its hotspots: before the schema
// writer replaced invalid sequences, DuckDB refused the run's Parquet
// files ("Invalid string encoding") and every analysis failed with
// INTERNAL_ERROR. The names read U+FFFD, the two bad names stay two
// frames with their own values, and `evidence get frame` gives the
// digests of the original bytes.
func TestHotspotsInvalidUTF8Pprof(t *testing.T) {
	ws, runs := importProfiles(t, invalidPprof(t))
	rows, res := allHotspots(t, ws, HotspotsRequest{Input: runs[0]})
	if len(res.Threads) != 1 || res.Threads[0] != "worker\uFFFD" {
		t.Fatalf("threads %q", res.Threads)
	}
	byValue := map[int64]HotspotRow{}
	for _, r := range rows {
		byValue[r.Self] = r
	}
	a, b := byValue[30], byValue[20]
	if a.Function != "bad\uFFFD" || b.Function != "bad\uFFFD" || a.FrameID == b.FrameID {
		t.Fatalf("rows %+v: want the two invalid names as two frames named bad\\uFFFD", rows)
	}
	if a.File != "src/\uFFFDbad\uFFFD.go" || a.Module != "/bin/prog\uFFFD" {
		t.Fatalf("file %q module %q", a.File, a.Module)
	}
	if main := byValue[0]; main.Function != "main.main" || main.Inclusive != 50 {
		t.Fatalf("main.main row %+v", main)
	}
	for _, tc := range []struct {
		row  HotspotRow
		name string
	}{{a, badA}, {b, badB}} {
		ev, err := query.GetEvidence(context.Background(), ws, "frame", tc.row.FrameID)
		if err != nil {
			t.Fatal(err)
		}
		digests := ev.Fields["invalid_utf8"]
		for _, want := range []string{sha(tc.name), sha("src/\xff" + tc.name + ".go"), sha("/bin/prog\xff")} {
			if !strings.Contains(digests, want) {
				t.Fatalf("frame %s (%q): invalid_utf8 %q lacks %s", tc.row.FrameID, tc.name, digests, want)
			}
		}
	}
	// main.main's name is valid, its file and module are not.
	ev, err := query.GetEvidence(context.Background(), ws, "frame", byValue[0].FrameID)
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.Fields["invalid_utf8"]; strings.Contains(got, "function") || !strings.Contains(got, sha("/bin/prog\xff")) {
		t.Fatalf("main.main: invalid_utf8 %q", got)
	}
}

// TestHotspotsInvalidUTF8Text does the same for the text formats, with the
// invalid bytes past the prefix that format detection reads (a file that
// is not UTF-8 there is not taken for a profile at all). Speedscope JSON
// is decoded by encoding/json, which already replaces each invalid byte
// (so the digest there is of the decoded name, and two names that differ
// only in invalid bytes are one frame: the decoder never sees them).
func TestHotspotsInvalidUTF8Text(t *testing.T) {
	for _, tc := range []struct {
		name      string
		write     func(b *bytes.Buffer)
		wantNames []string // the names of the two top rows, as stored
	}{
		{"x.collapsed", func(b *bytes.Buffer) {
			for i := range 5000 {
				fmt.Fprintf(b, "main;pkg.f%05d 1\n", i)
			}
			fmt.Fprintf(b, "main;%s 30\nmain;%s 20\n", badA, badB)
		}, []string{"bad\uFFFD", "bad\uFFFD"}},
		{"x.perf.txt", func(b *bytes.Buffer) {
			sample := func(ts int, fn, mod string) {
				fmt.Fprintf(b, "prog 123 1.%06d: 1 cycles:\n\tffffffff81000000 %s+0x1 (%s)\n\tffffffff81000001 main+0x2 (/bin/prog)\n\n", ts, fn, mod)
			}
			for i := range 1500 {
				sample(i, fmt.Sprintf("pkg.f%05d", i), "/bin/prog")
			}
			for i := range 30 {
				sample(2000+i, badA, "/bin/prog\xff")
			}
			for i := range 20 {
				sample(3000+i, badB, "/bin/prog")
			}
		}, []string{"bad\uFFFD", "bad\uFFFD"}},
		{"x.speedscope.json", func(b *bytes.Buffer) {
			b.WriteString(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main"}`)
			for i := range 5000 {
				fmt.Fprintf(b, `,{"name":"pkg.f%05d"}`, i)
			}
			fmt.Fprintf(b, `,{"name":"%s"},{"name":"main.ok"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":50,"samples":[`, badA)
			for i := range 50 {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(b, "[0,%d]", 5001+min(i/30, 1))
			}
			b.WriteString(`],"weights":[` + strings.TrimSuffix(strings.Repeat("1,", 50), ",") + `]}]}`)
		}, []string{"", "main.ok"}}, // "bad\uFFFD\uFFFD" from encoding/json, or "bad\uFFFD" from the writer
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.write(&b)
			if b.Len() < 70<<10 {
				t.Fatalf("fixture of %d bytes: the invalid bytes must lie past the detection prefix", b.Len())
			}
			path := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			ws, runs := importProfiles(t, path)
			rows, _ := allHotspots(t, ws, HotspotsRequest{Input: runs[0]})
			if len(rows) < 2 || rows[0].Self != 30 || rows[1].Self != 20 || rows[0].FrameID == rows[1].FrameID ||
				!nameIs(rows[0].Function, tc.wantNames[0]) || !nameIs(rows[1].Function, tc.wantNames[1]) {
				t.Fatalf("top rows %+v", rows[:min(len(rows), 3)])
			}
			if tc.wantNames[0] != "" {
				checkDigest(t, ws, rows[0].FrameID, badA)
			}
		})
	}
}

// nameIs: got is want, or for want "" a replaced "bad..." name.
func nameIs(got, want string) bool {
	if want == "" {
		return strings.HasPrefix(got, "bad\uFFFD") && utf8.ValidString(got)
	}
	return got == want
}

// checkDigest checks that frame id's invalid_utf8 holds the digest of
// name's original bytes as its function's.
func checkDigest(t *testing.T, ws *workspace.Workspace, id, name string) {
	t.Helper()
	ev, err := query.GetEvidence(context.Background(), ws, "frame", id)
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.Fields["invalid_utf8"]; !strings.Contains(got, "function: "+sha(name)) {
		t.Fatalf("frame %s: invalid_utf8 %q, want the function's digest %s", id, got, sha(name))
	}
}
