package stacks

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
)

// TestRankShortcutMatchesMerge: a profile whose frame ids are all distinct
// skips rank's merge of nodes that share an id; every table the extraction
// writes is the same as with the merge (alwaysMerge), on fixtures with and
// without shared ids.
func TestRankShortcutMatchesMerge(t *testing.T) {
	tables := []string{"frames", "frame_measurements", "measurements", "stacks", "call_edges"}
	for _, name := range []string{"google-pprof__sample.cpu.pb.gz", "parca__alloc_objects.pb.gz", "parca__fgprof.pb.gz",
		"parca__profile-with-labels.pb.gz", "speedscope__rust-mangled.linux-perf.txt", "self-driving-sim__py-spy-0.4.1.speedscope.json",
		"google-pprof/profile__java.cpu", "google-pprof/profile__go.crc32.cpu", "google-pprof__large.cpu.pb.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "profile", "testdata", name)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			extract := func(merge bool) map[string][]map[string]any {
				alwaysMerge = merge
				defer func() { alwaysMerge = false }()
				s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
				if _, err := (&Extractor{}).Extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: path}, s); err != nil {
					t.Fatal(err)
				}
				out := map[string][]map[string]any{}
				for _, tb := range tables {
					out[tb] = s.Rows(t, tb)
				}
				return out
			}
			short, merged := extract(false), extract(true)
			for _, tb := range tables {
				if len(merged[tb]) == 0 && tb != "call_edges" {
					t.Fatalf("%s: no rows", tb)
				}
				if !reflect.DeepEqual(short[tb], merged[tb]) {
					t.Errorf("%s differs between the shortcut (%d rows) and the merge (%d rows)", tb, len(short[tb]), len(merged[tb]))
				}
			}
		})
	}
}
