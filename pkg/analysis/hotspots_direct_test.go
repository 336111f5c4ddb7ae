package analysis

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDirectMatchesDuckDB reads every page of every sample type (and
// every thread, and the synthetic profile's processes) of every pprof
// fixture, a perf script and a speedscope profile through the direct
// reader and through DuckDB, and compares the whole results: rows,
// totals, units, threads, cursors, limitations. The direct reader must
// answer every page without --focus (by rank, or aggregated where several
// threads are summed) and leave --focus to DuckDB.
func TestDirectMatchesDuckDB(t *testing.T) {
	files, _ := filepath.Glob("../profile/testdata/*.pb.gz")
	files = append(files, "../profile/testdata/self-driving-sim__py-spy-0.4.1.speedscope.json",
		"../profile/testdata/speedscope__rust-mangled.linux-perf.txt", synthProfile(t))
	ws, runs := importProfiles(t, files...)
	ctx := context.Background()
	// pages reads every page, or the first three of a small limit.
	pages := func(req HotspotsRequest, duck bool) []*HotspotsResult {
		t.Helper()
		forceDuckDB = duck
		defer func() { forceDuckDB = false }()
		var out []*HotspotsResult
		for {
			res, err := Hotspots(ctx, ws, req)
			if err != nil {
				t.Fatalf("%+v (duckdb %v): %v", req, duck, err)
			}
			out = append(out, res)
			if !res.Truncated || (req.Limit < 100 && len(out) == 3) {
				return out
			}
			req.Cursor = res.Cursor
		}
	}
	for i, file := range files {
		first := pages(HotspotsRequest{Input: runs[i], Limit: 7}, true)[0]
		reqs := []HotspotsRequest{{Input: runs[i]}, {Input: first.Source.ArtifactID, Limit: 3}, {Input: runs[i], Focus: "a"}}
		for _, st := range first.SampleTypes {
			reqs = append(reqs, HotspotsRequest{Input: runs[i], SampleType: st.Type, Limit: 1000})
			for _, th := range first.Threads {
				reqs = append(reqs, HotspotsRequest{Input: runs[i], SampleType: st.Type, Thread: th, Limit: 500})
			}
		}
		if filepath.Base(file) == "synth.pb.gz" {
			reqs = append(reqs, HotspotsRequest{Input: runs[i], Process: "helper"}, HotspotsRequest{Input: runs[i], Thread: "main", Process: "synth"})
		}
		for _, req := range reqs {
			before := directAnswers.Load()
			direct := pages(req, false)
			answered := directAnswers.Load() - before
			duck := pages(req, true)
			if !reflect.DeepEqual(direct, duck) {
				for j := range min(len(direct), len(duck)) {
					if !reflect.DeepEqual(direct[j], duck[j]) {
						t.Fatalf("%s %+v page %d:\ndirect %+v\nduckdb %+v", filepath.Base(file), req, j, direct[j], duck[j])
					}
				}
				t.Fatalf("%s %+v: %d pages direct, %d through DuckDB", filepath.Base(file), req, len(direct), len(duck))
			}
			if req.Focus != "" && answered != 0 {
				t.Errorf("%s: the direct reader answered a --focus request", filepath.Base(file))
			}
			if req.Focus == "" && answered != int64(len(direct)) {
				t.Errorf("%s %+v: the direct reader answered %d of %d pages", filepath.Base(file), req, answered, len(direct))
			}
		}
	}
	if _, err := Hotspots(ctx, ws, HotspotsRequest{Input: runs[0], SampleType: "no-such-type"}); err == nil {
		t.Error("an unknown sample type was answered")
	}
}
