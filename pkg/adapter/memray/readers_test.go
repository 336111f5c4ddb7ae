package memray

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/pierrec/lz4/v4"
)

// sharedFixtures is ../shared/fixtures/memray from the repository root,
// read in place.
const sharedFixtures = "../../../../shared/fixtures/memray"

// rawCapture is retain.bin decompressed (memray reads uncompressed
// captures too) with its header version replaced by version.
func rawCapture(t *testing.T, version int32) string {
	t.Helper()
	f, err := os.Open("testdata/retain.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(lz4.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[len(memrayMagic):], uint32(version))
	p := filepath.Join(t.TempDir(), "v"+strconv.Itoa(int(version))+".bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHeaderVersion(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	retain, _ := os.ReadFile("testdata/retain.bin")
	cases := []struct {
		path string
		want int // 0: an error
	}{
		{"testdata/retain.bin", 13},
		{"testdata/aggregated.bin", 13},
		{"testdata/oldversion.bin", 12},
		{rawCapture(t, 99), 99},
		{write("raw.bin", []byte("memray\x00\x0c\x00\x00\x00rest")), 12},
		{write("short.bin", []byte("memray\x00\x0c")), 0},
		{write("text.bin", []byte("memray garbage that is not a capture\n")), 0},
		{write("empty.bin", nil), 0},
		{write("trunc.bin", retain[:100]), 0},
		{write("lz4junk.bin", []byte{0x04, 0x22, 0x4d, 0x18, 0x40, 0x40, 'x', 'y'}), 0},
	}
	shared, _ := filepath.Glob(filepath.Join(sharedFixtures, "*.bin"))
	for _, p := range shared {
		cases = append(cases, struct {
			path string
			want int
		}{p, 12})
	}
	for _, c := range cases {
		h, err := HeaderVersion(c.path)
		if c.want == 0 {
			if err == nil {
				t.Errorf("%s: header version %d, want an error", c.path, h)
			}
			continue
		}
		if err != nil || h != c.want {
			t.Errorf("%s: %d, %v; want %d", c.path, h, err, c.want)
		}
	}
}

func TestHeaderOfRelease(t *testing.T) {
	for rel, want := range map[string]int{"1.20.0": 13, "1.19.3": 12, "1.19.0": 12, "1.18.0": 11, "1.11.0": 11,
		"1.10.0": 10, "1.7.0": 10, "1.6.0": 9, "1.2.0": 8, "1.1.0": 7, "1.21.0": 0, "2.0": 0, "x": 0, "1": 0} {
		if got := headerOfRelease(rel); got != want {
			t.Errorf("headerOfRelease(%s) = %d, want %d", rel, got, want)
		}
	}
	for _, l := range headerLines {
		if headerOfRelease(l.pin) != l.header {
			t.Errorf("pin %s of header %d reads header %d", l.pin, l.header, headerOfRelease(l.pin))
		}
	}
}

// fakeReaders is a data directory with memray readers of the named
// releases (executable bin/python files) and a System that looks there.
func fakeReaders(t *testing.T, env map[string]string, releases ...string) (System, string) {
	t.Helper()
	data := t.TempDir()
	for _, r := range releases {
		bin := filepath.Join(data, "flameox", "memray", r, "bin")
		os.MkdirAll(bin, 0o755)
		if err := os.WriteFile(filepath.Join(bin, "python"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	all := map[string]string{"XDG_DATA_HOME": data, "HOME": "/nonexistent"}
	for k, v := range env {
		all[k] = v
	}
	return System{
		LookPath: func(f string) (string, error) {
			if f == "python3" {
				return "/usr/bin/python3", nil
			}
			return exec.LookPath(f)
		},
		Getenv: func(k string) string { return all[k] },
	}, data
}

func TestFindReader(t *testing.T) {
	other := filepath.Join(t.TempDir(), "python")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	for _, c := range []struct {
		name     string
		env      map[string]string
		releases []string
		header   int
		want     string // the release found; "" none
		from     string
		err      string
	}{
		{"default", nil, nil, 13, Version, "python3 on PATH", ""},
		{"installed", nil, []string{"1.19.3"}, 12, "1.19.3", "", ""},
		{"not installed", nil, []string{"1.18.0"}, 12, "", "", ""},
		{"highest of the line", nil, []string{"1.11.0", "1.17.2", "1.9.1"}, 11, "1.17.2", "", ""},
		{"pin first", nil, []string{"1.11.0", "1.18.0"}, 11, "1.18.0", "", ""},
		{"unknown header", nil, []string{"1.19.3"}, 99, "", "", ""},
		{"override", map[string]string{ReadersEnv: "1.19.1=" + other}, nil, 12, "1.19.1", ReadersEnv, ""},
		{"override at nothing", map[string]string{ReadersEnv: "1.19.3=/nonexistent/python"}, []string{"1.19.3"}, 12, "", "", ""},
		{"override of the default", map[string]string{ReadersEnv: "1.20.0=" + other}, nil, 13, "1.20.0", ReadersEnv, ""},
		{"two overrides", map[string]string{ReadersEnv: "1.18.0=/x/python" + string(filepath.ListSeparator) + "1.19.3=" + other}, nil, 12, "1.19.3", ReadersEnv, ""},
		{"bad override", map[string]string{ReadersEnv: "/opt/python"}, nil, 12, "", "", "want RELEASE=PYTHON"},
		{"unknown release", map[string]string{ReadersEnv: "2.0.0=" + other}, nil, 12, "", "", "want RELEASE=PYTHON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sys, data := fakeReaders(t, c.env, c.releases...)
			r, ok, err := FindReader(sys, c.header)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || ok != (c.want != "") || r.Release != c.want {
				t.Fatalf("%+v, %v, %v; want %q", r, ok, err, c.want)
			}
			if from := cmpOr(c.from, filepath.Join(data, "flameox", "memray")); ok && r.From != from {
				t.Errorf("from %q, want %q", r.From, from)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestReadersDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/h"}, "/d/flameox/memray/1.19.3"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/flameox/memray/1.19.3"},
		{map[string]string{}, ""},
	} {
		if got := ReadersDir(env(c.env), "1.19.3"); got != c.want {
			t.Errorf("ReadersDir(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}

// needReader returns the installed reader of path's header version, and
// skips (fails under CI=true) when there is none.
func needReader(t *testing.T, path string) Reader {
	t.Helper()
	h, err := HeaderVersion(path)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := FindReader(RealSystem(), h)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		l, _ := lineOfHeader(h)
		testenv.Unable(t, "memray "+l.pin, "not installed", "%s: %s", path, readerRemedy(os.Getenv, h))
	}
	return r
}

// statsOf runs `memray stats --json` of reader r on path, the reporter
// alone.
func statsOf(t testing.TB, r Reader, path string) map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "stats.json")
	if _, err := RealSystem().Output(context.Background(), []string{r.Python, "-m", "memray", "stats", "--json", "-o", out, "-f", path}, reporterTimeout); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSharedFixturesAgreeWithMemrayStats extracts every shared memray
// fixture (header version 12, memray 1.19.x) through the reader that
// reads it and compares the peak and the totals with `memray stats
// --json` of the same release, run side by side.
func TestSharedFixturesAgreeWithMemrayStats(t *testing.T) {
	shared, _ := filepath.Glob(filepath.Join(sharedFixtures, "*.bin"))
	if len(shared) == 0 {
		testenv.Unable(t, "shared fixtures", "not present", "%s has no memray files", sharedFixtures)
	}
	for _, path := range shared {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rd := needReader(t, path)
			want := statsOf(t, rd, path)
			sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
			x, err := New().Extractors()[0].Extract(context.Background(), input(t, path), sink)
			if err != nil {
				t.Fatal(err)
			}
			rows := sink.Rows(t, "measurements")
			got := measurementsOf(rows)
			for name, w := range map[string]any{
				"memory.peak_heap":       want["metadata"].(map[string]any)["peak_memory"],
				"memory.total_allocated": want["total_bytes_allocated"],
				"memory.allocations":     want["total_num_allocations"],
			} {
				if got[name] != int64(w.(float64)) {
					t.Errorf("%s = %d, memray %s stats says %v", name, got[name], rd.Release, w)
				}
			}
			for _, r := range rows {
				if !strings.HasPrefix(r["name"].(string), "memory.") {
					continue // the stacks extractor's profile.* rows
				}
				if d, _ := r["dimensions"].(map[string]string); d[readerDim] != rd.Release {
					t.Fatalf("%s: %s = %q, want %q", r["name"], readerDim, d[readerDim], rd.Release)
				}
			}
			if !slices.ContainsFunc(x.Limitations, func(l string) bool {
				return strings.Contains(l, "read by memray "+rd.Release) && strings.Contains(l, "header version 12")
			}) {
				t.Errorf("limitations %q do not name the reader", x.Limitations)
			}
			if x.Rows["frames"] == 0 || x.Rows["stacks"] == 0 {
				t.Errorf("rows %v", x.Rows)
			}
		})
	}
}

// TestExtractMissingReader: a capture of header version 12 with no
// reader installed (the override points at nothing) is
// ARTIFACT_PARSE_FAILED with the default memray's reason and the release
// to install, and nothing is written.
func TestExtractMissingReader(t *testing.T) {
	needMemray(t)
	sys := RealSystem()
	sys.Getenv = func(k string) string {
		switch k {
		case ReadersEnv:
			return ExtraRelease + "=/nonexistent/python"
		case "XDG_DATA_HOME":
			return "/nonexistent"
		}
		return os.Getenv(k)
	}
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	_, err := (&Extractor{Sys: sys}).Extract(context.Background(), input(t, "testdata/oldversion.bin"), sink)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.ArtifactParseFailed {
		t.Fatalf("%v, want ARTIFACT_PARSE_FAILED", err)
	}
	if !strings.Contains(fe.Details["reason"], "incompatible with this version of memray") || fe.Details["header_version"] != "12" || fe.Details["reader_needed"] != "memray "+ExtraRelease {
		t.Errorf("details %v", fe.Details)
	}
	fix := strings.Join(fe.Remediation, " ")
	for _, w := range []string{ReadersEnv + " names /nonexistent/python for memray " + ExtraRelease + ", which is not an executable", "header version 12", "memray 1.19.x", "scripts/install-collectors.sh", "pip install memray==" + ExtraRelease, "/nonexistent/flameox/memray/" + ExtraRelease} {
		if !strings.Contains(fix, w) {
			t.Errorf("remediation %q lacks %q", fix, w)
		}
	}
	if sink.Opened() != 0 {
		t.Errorf("%d tables written", sink.Opened())
	}
}

// TestViewer: an old capture opens with the reader of its header
// version, or says which release to install.
func TestViewer(t *testing.T) {
	sys, data := fakeReaders(t, nil, ExtraRelease)
	for _, c := range []struct {
		name, path, python, note string
		sys                      System
	}{
		{"default", "testdata/retain.bin", "python3", installRemedy, sys},
		{"reader", "testdata/oldversion.bin", filepath.Join(data, "flameox", "memray", ExtraRelease, "bin", "python"), "memray " + ExtraRelease + " reads this capture", sys},
		{"no reader", "testdata/oldversion.bin", "python3", "pip install memray==" + ExtraRelease, System{LookPath: sys.LookPath, Getenv: func(string) string { return "" }}},
	} {
		v, err := (&Adapter{Sys: c.sys}).Viewer(c.path, Kind)
		if err != nil || v.Argv[0] != c.python || !strings.Contains(v.Note, c.note) {
			t.Errorf("%s: %+v, %v; want %s and a note with %q", c.name, v, err, c.python, c.note)
		}
	}
}
