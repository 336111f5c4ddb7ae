//go:build unix

package identity

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// buildC compiles a tiny C program with a GNU build id into dir.
func buildC(t *testing.T, dir, name string) string {
	t.Helper()
	testenv.LookPath(t, "gcc") // cgo for DuckDB needs it too
	src := filepath.Join(t.TempDir(), "main.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("gcc", "-Wl,--build-id", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestELFBuildID(t *testing.T) {
	dir := newRepo(t)
	exe := buildC(t, t.TempDir(), "workload")
	s := collect(t, dir, func(o *Options) { o.Executable = exe })
	wantQuality(t, s, QualityClean)
	if !strings.HasPrefix(s.BuildID, "gnu:") || len(s.BuildID) < len("gnu:")+16 {
		t.Errorf("BuildID = %q", s.BuildID)
	}
	if s.ExecutableDigest != fileDigest(t, exe) {
		t.Errorf("ExecutableDigest %s, file %s", s.ExecutableDigest, fileDigest(t, exe))
	}
	if s.ExecutablePath != "workload" {
		t.Errorf("outside the project only the base name is kept, got %q", s.ExecutablePath)
	}
	// Cross-check with readelf when available.
	if out, err := exec.Command("readelf", "-n", exe).Output(); err == nil {
		if id := strings.TrimPrefix(s.BuildID, "gnu:"); !bytes.Contains(out, []byte(id)) {
			t.Errorf("readelf does not show build id %s:\n%s", id, out)
		}
	}
}

func TestGoBuildID(t *testing.T) {
	f, err := os.Open(testExe(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id := buildID(f)
	if !strings.HasPrefix(id, "go:") && !strings.HasPrefix(id, "gnu:") {
		t.Fatalf("test binary build id %q", id)
	}
}

func TestExecutableInsideProject(t *testing.T) {
	dir := newRepo(t)
	buildC(t, dir, "bin/tool")
	gitCmd(t, dir, "add", "-f", "bin/tool")
	gitCmd(t, dir, "commit", "-q", "-m", "tool")
	s := collect(t, dir, func(o *Options) { o.Executable = filepath.Join(dir, "bin/tool") })
	wantQuality(t, s, QualityClean)
	if s.ExecutablePath != "bin/tool" {
		t.Errorf("ExecutablePath = %q", s.ExecutablePath)
	}
	// A relative executable is taken relative to the project root.
	if r := collect(t, dir, func(o *Options) { o.Executable = "bin/tool" }); r.SourceStateID != s.SourceStateID {
		t.Error("relative and absolute spellings differ")
	}
}

func TestExecutableMissingPieces(t *testing.T) {
	dir := newRepo(t)
	wantQuality(t, collect(t, dir, func(o *Options) { o.Executable = "" }), QualityPartial, "executable")
	wantQuality(t, collect(t, dir, func(o *Options) { o.Executable = filepath.Join(dir, "nope") }),
		QualityPartial, "build_id", "executable")

	script := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := collect(t, dir, func(o *Options) { o.Executable = script })
	wantQuality(t, s, QualityPartial, "build_id")
	if s.ExecutableDigest != fileDigest(t, script) || s.ExecutablePath != "run.sh" {
		t.Errorf("script: %s %s", s.ExecutablePath, s.ExecutableDigest)
	}
	// A directory is not an executable.
	wantQuality(t, collect(t, dir, func(o *Options) { o.Executable = t.TempDir() }),
		QualityPartial, "build_id", "executable")
}

func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := openNoFollow(link); err == nil {
		f.Close()
		t.Fatal("opened a symlink")
	}
	f, err := openNoFollow(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestParseNotes(t *testing.T) {
	var b bytes.Buffer
	put := func(name string, typ uint32, desc []byte, pad int) {
		n := append([]byte(name), 0)
		binary.Write(&b, binary.LittleEndian, []uint32{uint32(len(n)), uint32(len(desc)), typ})
		b.Write(n)
		b.Write(make([]byte, (pad-len(n)%pad)%pad))
		b.Write(desc)
		b.Write(make([]byte, (pad-len(desc)%pad)%pad))
	}
	put("GNU", 5, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 4) // a property note
	put("GNU", ntGNUBuildID, []byte{0xde, 0xad, 0xbe, 0xef, 0x01}, 4)
	notes := parseNotes(b.Bytes(), binary.LittleEndian, 4)
	if len(notes) != 2 || notes[1].name != "GNU" || notes[1].typ != ntGNUBuildID ||
		!slices.Equal(notes[1].desc, []byte{0xde, 0xad, 0xbe, 0xef, 0x01}) {
		t.Fatalf("notes = %+v", notes)
	}
	// Truncated or lying sizes stop parsing instead of panicking.
	for i := range b.Len() {
		parseNotes(b.Bytes()[:i], binary.LittleEndian, 4)
	}
	parseNotes([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0}, binary.LittleEndian, 8)
}
