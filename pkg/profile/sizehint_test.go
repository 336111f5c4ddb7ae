package profile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestSizeHint: the buffer hint is a file's size, or a gzip file's
// trailer, capped by the limit and, for gzip, by 64 times the compressed
// size; a profile whose trailer lies still parses.
func TestSizeHint(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "parca__fgprof.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	isize := int64(binary.LittleEndian.Uint32(src[len(src)-4:]))
	write := func(b []byte) *os.File {
		t.Helper()
		p := filepath.Join(t.TempDir(), "p")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	forged := func(n uint32) []byte {
		b := bytes.Clone(src)
		binary.LittleEndian.PutUint32(b[len(b)-4:], n)
		return b
	}
	for _, tc := range []struct {
		name   string
		file   []byte
		zipped bool
		limit  int64
		want   int64
	}{
		{"gzip", src, true, 1 << 30, isize},
		{"plain", []byte("not gzip at all"), false, 1 << 30, 15},
		{"limit", src, true, 100, 100},
		{"forged large", forged(1 << 31), true, 1 << 40, 64 * int64(len(src))},
		{"forged small", forged(10), true, 1 << 30, 10},
		{"too short for gzip", src[:10], true, 1 << 30, 0},
	} {
		if got := sizeHint(write(tc.file), tc.zipped, tc.limit); got != tc.want {
			t.Errorf("%s: hint %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := sizeHint(bytes.NewReader(src), true, 1<<30); got != 0 {
		t.Errorf("a reader that is not a file: hint %d, want 0", got)
	}
	// gzip checks the trailer: a forged one fails the parse, as before.
	for _, n := range []uint32{10, 1 << 31} {
		if _, err := Parse(write(forged(n)), Options{}); err == nil {
			t.Errorf("trailer forged to %d: parsed", n)
		}
	}
	// A second, empty gzip member: the trailer read is the last member's
	// (0), and the buffer grows as before.
	var empty bytes.Buffer
	zw := gzip.NewWriter(&empty)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	two := write(append(bytes.Clone(src), empty.Bytes()...))
	if got := sizeHint(two, true, 1<<30); got != 0 {
		t.Errorf("two members: hint %d, want 0", got)
	}
	if _, err := Parse(two, Options{}); err != nil {
		t.Errorf("two members: %v", err)
	}
}
