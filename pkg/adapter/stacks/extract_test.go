package stacks

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/profile/pproftest"
	gprof "github.com/google/pprof/profile"
)

// Two unsymbolized nodes pprof keeps apart (two mappings of libdup.so in
// different directories) share a frame id; the frames table still holds
// that id once, which the hotspots query relies on, and its measurements
// add up under the one id.
func TestFrameIDsUnique(t *testing.T) {
	fm := &gprof.Function{ID: 3, Name: "main.main", Filename: "main.go"}
	ma := &gprof.Mapping{ID: 1, Start: 0x1000, Limit: 0x2000, File: "/a/libdup.so"}
	mb := &gprof.Mapping{ID: 2, Start: 0x3000, Limit: 0x4000, File: "/b/libdup.so"}
	mm := &gprof.Mapping{ID: 3, Start: 0x5000, Limit: 0x6000, File: "/bin/main", HasFunctions: true}
	la := &gprof.Location{ID: 1, Mapping: ma, Address: 0x1100}
	lb := &gprof.Location{ID: 2, Mapping: mb, Address: 0x3100}
	lm := &gprof.Location{ID: 3, Mapping: mm, Address: 0x5100, Line: []gprof.Line{{Function: fm, Line: 1}}}
	p := &gprof.Profile{
		Mapping:    []*gprof.Mapping{ma, mb, mm},
		SampleType: []*gprof.ValueType{{Type: "samples", Unit: "count"}},
		Sample: []*gprof.Sample{
			{Location: []*gprof.Location{la, lm}, Value: []int64{3}},
			{Location: []*gprof.Location{lb, lm}, Value: []int64{4}},
		},
		Location: []*gprof.Location{la, lb, lm}, Function: []*gprof.Function{fm},
		Period: 1, PeriodType: &gprof.ValueType{Type: "samples", Unit: "count"},
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "dup.pb.gz")
	pproftest.Write(t, path, p)
	s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	if _, err := (&Extractor{}).Extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: path}, s); err != nil {
		t.Fatal(err)
	}
	seen := map[any]bool{}
	frames := s.Rows(t, "frames")
	for _, r := range frames {
		if seen[r["frame_id"]] {
			t.Errorf("frame %v (%v) written twice", r["frame_id"], r["function"])
		}
		seen[r["frame_id"]] = true
	}
	if len(frames) != 2 {
		t.Errorf("%d frames, want 2 (libdup.so once, main.main)", len(frames))
	}
	self := map[any]int64{}
	for _, r := range s.Rows(t, "frame_measurements") {
		self[r["frame_id"]] += r["self_value"].(int64)
	}
	var dup int64
	for _, r := range frames {
		if r["function"] != "main.main" {
			dup = self[r["frame_id"]]
		}
	}
	if dup != 7 {
		t.Errorf("libdup.so self = %d, want 7 (3 + 4 under one id)", dup)
	}
}
