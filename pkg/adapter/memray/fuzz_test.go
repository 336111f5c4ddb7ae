package memray

import (
	"bytes"
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
