package memray

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzParseStats: any bytes give a report or an error, never a panic.
func FuzzParseStats(f *testing.F) {
	f.Add([]byte(`{"total_num_allocations":3,"total_bytes_allocated":30,"allocator_type_distribution":{"MALLOC":3},"metadata":{"peak_memory":20}}`))
	f.Add([]byte(`{"metadata":{"peak_memory":-1}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStats(bytes.NewReader(b))
		if err == nil && (s.Metadata.PeakMemory == nil || *s.Metadata.PeakMemory < 0) {
			t.Fatalf("accepted %+v", s)
		}
	})
}

// FuzzParseCSV: any bytes give rows within the limits or an error.
func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("allocator,num_allocations,size,tid,thread_name,stack_trace\nMALLOC,2,100,1,0x1,f;a.py;3|g;b.py;9\n"))
	f.Add([]byte("allocator,num_allocations,size,tid,thread_name,stack_trace\n\"M\nA\",1,1,1,x,\n"))
	lim := config.DefaultLimits()
	lim.MaxSamples, lim.MaxStackDepth, lim.MaxStackFrames = 50, 8, 100
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := ParseCSV(bytes.NewReader(b), lim)
		if err != nil {
			return
		}
		if int64(len(recs)) > lim.MaxSamples {
			t.Fatalf("%d rows", len(recs))
		}
		for _, r := range recs {
			if int64(len(r.Stack)) > lim.MaxStackDepth || r.Size < 0 || r.Count < 0 {
				t.Fatalf("row %+v", r)
			}
		}
		buildProfile(recs, recs)
	})
}

// FuzzParseSnapshots: any bytes give at most keep snapshots, in memray's
// order, with the first, the last and the largest heap, or an error.
func FuzzParseSnapshots(f *testing.F) {
	f.Add([]byte("time_ms,rss,heap\n1700000000000,45621248,0\n1700000000010,45838336,1091815\n"))
	f.Add([]byte("time_ms,rss,heap\n5,1,9\n6,1,2\n7,1,3\n8,1,1\n9,1,0\n10,1,4\n"))
	f.Add([]byte("time_ms,rss,heap\n1,2,-3\n"))
	f.Add([]byte("time_ms,rss\n"))
	lim := config.DefaultLimits()
	lim.MaxSamples, lim.MaxDecompressedBytes = 200, 1<<14
	const keep = 4
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSnapshots(bytes.NewReader(b), lim, keep)
		if err != nil {
			return
		}
		if int64(s.Total) > lim.MaxSamples || len(s.Kept) > keep || len(s.Kept) > s.Total || (s.Total > 0) != (len(s.Kept) > 0) {
			t.Fatalf("total %d, kept %d", s.Total, len(s.Kept))
		}
		if s.Total == 0 {
			return
		}
		if s.Kept[0] != s.First || s.First.Ordinal != 0 || s.Kept[len(s.Kept)-1].Ordinal != s.Total-1 {
			t.Fatalf("kept %+v of %d", s.Kept, s.Total)
		}
		hasMax := false
		for i, k := range s.Kept {
			if i > 0 && k.Ordinal <= s.Kept[i-1].Ordinal || k.Heap < 0 || k.RSS < 0 || k.Time < 0 {
				t.Fatalf("kept %+v", s.Kept)
			}
			if k.Ordinal == s.MaxHeap {
				hasMax = true
			}
			if k.Heap > s.Kept[0].Heap && s.MaxHeap == 0 {
				t.Fatalf("snapshot %+v exceeds the largest, snapshot 0", k)
			}
		}
		if !hasMax {
			t.Fatalf("the largest heap (snapshot %d) is not kept: %+v", s.MaxHeap, s.Kept)
		}
	})
}

// FuzzHeaderVersion: any bytes give a header version or an error, and an
// uncompressed header's version is its int32.
func FuzzHeaderVersion(f *testing.F) {
	for _, p := range []string{"testdata/retain.bin", "testdata/oldversion.bin"} {
		b, _ := os.ReadFile(p)
		f.Add(b[:min(len(b), 512)])
	}
	f.Add([]byte("memray\x00\x0c\x00\x00\x00"))
	f.Add([]byte{0x04, 0x22, 0x4d, 0x18, 0x40, 0x40, 0xc0, 0x05, 0x00, 0x00, 0x80, 'm', 'e', 'm', 'r', 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := headerVersion(bytes.NewReader(b))
		if err != nil {
			return
		}
		if bytes.HasPrefix(b, memrayMagic) && h != int(int32(binary.LittleEndian.Uint32(b[len(memrayMagic):]))) {
			t.Fatalf("header version %d of %q", h, b[:11])
		}
	})
}
