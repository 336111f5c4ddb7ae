package stacks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/fault"
)

// FuzzExtract: any bytes either fail extraction with a structured error or
// give rows the hotspots query can rely on: frame ids once each with
// frame_index 0..n-1; per metric, thread and process one row per frame
// with ranks 1..n in |self| order, each naming its frame's frame_index;
// and profile.frames equal to those rows. Seeds are the small profile
// fixtures (the large one is too slow to mutate), legacy ones included.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"google-pprof__sample.cpu.pb.gz", "parca__alloc_objects.pb.gz", "parca__fgprof.pb.gz",
		"parca__profile-with-labels.pb.gz", "speedscope__rust-mangled.linux-perf.txt", "self-driving-sim__py-spy-0.4.1.speedscope.json",
		"google-pprof/profile__gobench.heap", "google-pprof/profile__java.cpu", "google-pprof/profile__cppbench.contention",
		"google-pprof/profile__go.crc32.cpu"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "profile", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a;b;c 1\na;b -2\nb;a 3\nc 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
		if _, err := (&Extractor{}).Extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: path}, s); err != nil {
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code == fault.InternalError {
				t.Fatalf("not a structured input error: %T %v", err, err)
			}
			return
		}
		checkRankRows(t, s)
	})
}

// checkRankRows checks the invariants FuzzExtract states on one
// extraction's rows.
func checkRankRows(t *testing.T, s *adaptertest.Sink) {
	t.Helper()
	index := map[any]int32{}
	frames := s.Rows(t, "frames")
	for i, r := range frames {
		if _, dup := index[r["frame_id"]]; dup {
			t.Fatalf("frame %v written twice", r["frame_id"])
		}
		if r["frame_index"] != int32(i) {
			t.Fatalf("frame row %d has frame_index %v", i, r["frame_index"])
		}
		index[r["frame_id"]] = int32(i)
	}
	type key struct{ metric, thread, process any }
	ranks := map[key][]map[string]any{}
	for _, r := range s.Rows(t, "frame_measurements") {
		k := key{r["metric"], r["thread"], r["process"]}
		ranks[k] = append(ranks[k], r)
		if idx, ok := index[r["frame_id"]]; !ok || r["frame_index"] != idx {
			t.Fatalf("row %v: frame_index %v, frames say %v (%t)", r["frame_id"], r["frame_index"], idx, ok)
		}
	}
	counts := map[string]int64{}
	for _, r := range s.Rows(t, "measurements") {
		if r["name"] == "profile.frames" {
			dims, _ := r["dimensions"].(map[string]string)
			counts[fmt.Sprint(r["subject"], "|", dims["thread"], "|", dims["process"])] = r["value_int"].(int64)
		}
	}
	abs := func(v int64) int64 { return max(v, -v) }
	for k, rows := range ranks {
		byRank := make([]map[string]any, len(rows)+1)
		seen := map[any]bool{}
		for _, r := range rows {
			n, ok := r["rank"].(int32)
			if !ok || n < 1 || int(n) > len(rows) || byRank[n] != nil {
				t.Fatalf("%v: rank %v among %d rows", k, r["rank"], len(rows))
			}
			byRank[n] = r
			if seen[r["frame_id"]] {
				t.Fatalf("%v: frame %v has two rows", k, r["frame_id"])
			}
			seen[r["frame_id"]] = true
		}
		for n := 2; n < len(byRank); n++ {
			if abs(byRank[n]["self_value"].(int64)) > abs(byRank[n-1]["self_value"].(int64)) {
				t.Fatalf("%v: rank %d has |self| above rank %d", k, n, n-1)
			}
		}
		th, _ := k.thread.(string)
		pr, _ := k.process.(string)
		if got := counts[fmt.Sprint(k.metric, "|", th, "|", pr)]; got != int64(len(rows)) {
			t.Fatalf("%v: profile.frames %d, %d rows", k, got, len(rows))
		}
	}
}
