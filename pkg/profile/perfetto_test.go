package profile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pbEnc is one protobuf field: varints for wire type 0, bytes for 2.
func pbEnc(num int, v any) []byte {
	put := func(b []byte, n uint64) []byte {
		for n >= 0x80 {
			b = append(b, byte(n)|0x80)
			n >>= 7
		}
		return append(b, byte(n))
	}
	switch x := v.(type) {
	case int:
		return put(put(nil, uint64(num)<<3), uint64(x))
	case []byte:
		return append(put(put(nil, uint64(num)<<3|2), uint64(len(x))), x...)
	}
	panic(v)
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// TestLooksPerfetto: a Trace of TracePackets is Perfetto; no pprof
// profile, Chrome trace or text is, and Detect no longer calls a
// Perfetto trace a pprof profile.
func TestLooksPerfetto(t *testing.T) {
	event := cat(pbEnc(9, 1), pbEnc(23, []byte("aten::mm")))
	packet := cat(pbEnc(8, 1000), pbEnc(10, 1), pbEnc(11, event))
	trace := cat(pbEnc(1, packet), pbEnc(1, cat(pbEnc(8, 2000), pbEnc(10, 1))))
	valueType := cat(pbEnc(1, 1), pbEnc(2, 2))
	for _, c := range []struct {
		name string
		head []byte
		want bool
	}{
		{"trace", trace, true},
		{"cut inside the second packet", trace[:len(trace)-2], true},
		{"one packet", pbEnc(1, packet), true},
		{"pprof sample types only", cat(pbEnc(1, valueType), pbEnc(1, valueType)), false},
		{"pprof sample type then sample", cat(pbEnc(1, valueType), pbEnc(2, []byte{8, 1})), false},
		{"empty", nil, false},
		{"json", []byte(`{"traceEvents":[]}`), false},
		{"varint field 1", pbEnc(1, 5), false},
	} {
		if got := LooksPerfetto(c.head); got != c.want {
			t.Errorf("%s: LooksPerfetto = %v", c.name, got)
		}
		for k := range len(c.head) + 1 {
			if RejectsPerfetto(c.head[:k]) && c.want {
				t.Errorf("%s: RejectsPerfetto of its first %d bytes", c.name, k)
			}
		}
	}
	if f := Detect(trace); f != FormatUnknown {
		t.Errorf("Detect(perfetto) = %v", f)
	}
	paths, _ := filepath.Glob("testdata/*.pb.gz")
	more, _ := filepath.Glob("testdata/google-pprof/*")
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 2 {
			continue
		}
		if b[0] == 0x1f && b[1] == 0x8b {
			z, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				continue
			}
			b, _ = io.ReadAll(z)
		}
		if LooksPerfetto(b) {
			t.Errorf("%s: a pprof profile taken for a Perfetto trace", p)
		}
		if !RejectsPerfetto(b[:min(len(b), 4<<10)]) {
			t.Errorf("%s: its first 4 KiB do not rule Perfetto out", p)
		}
		if strings.HasSuffix(p, ".pb.gz") && Detect(b) != FormatPprof {
			t.Errorf("%s: Detect = %v", p, Detect(b))
		}
	}
}

func FuzzLooksPerfetto(f *testing.F) {
	f.Add(cat(pbEnc(1, cat(pbEnc(8, 1000), pbEnc(10, 1))), pbEnc(1, []byte{0x40, 1})))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x40})
	f.Fuzz(func(t *testing.T, b []byte) {
		looks := LooksPerfetto(b)
		if looks && Detect(b) == FormatPprof {
			t.Fatal("both Perfetto and pprof")
		}
		// A prefix that rules Perfetto out never rules out the whole.
		for k := range len(b) + 1 {
			if looks && RejectsPerfetto(b[:k]) {
				t.Fatalf("RejectsPerfetto of the first %d bytes, yet the whole looks Perfetto", k)
			}
		}
	})
}
