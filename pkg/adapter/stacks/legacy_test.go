package stacks

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/profile/pproftest"
)

// TestExtractEveryPprofFileMatchesGoToolPprof: every profile of google/pprof's
// testdata (legacy text, Java, gperftools binary, protobuf; see
// pkg/profile/testdata/google-pprof) is accepted by content and
// extracted, and its frame_measurements hold, per sample type, the flat
// and cum of every row `go tool pprof -top` prints, in pprof's order.
func TestExtractEveryPprofFileMatchesGoToolPprof(t *testing.T) {
	files, _ := filepath.Glob("../../profile/testdata/google-pprof/*__*")
	if len(files) != 18 {
		t.Fatalf("want the 18 google/pprof testdata profiles, found %d", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			in := adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:00", Path: file, Head: head(t, file)}
			if !(&Extractor{}).Accepts(in) {
				t.Fatal("the profile extractor does not accept it")
			}
			if v, err := New().Viewer(file, "sample_profile"); err != nil || v.Tool != "go tool pprof" {
				t.Fatalf("viewer %+v, %v; want go tool pprof", v, err)
			}
			s := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
			if _, err := (&Extractor{}).Extract(context.Background(), in, s); err != nil {
				t.Fatal(err)
			}
			names := map[any]string{}
			for _, r := range s.Rows(t, "frames") {
				names[r["frame_id"]] = r["function"].(string)
			}
			got := map[string][]pproftest.Row{}
			rank := map[string][]int32{}
			for _, r := range s.Rows(t, "frame_measurements") {
				m := r["metric"].(string)
				got[m] = append(got[m], pproftest.Row{Name: names[r["frame_id"]], Flat: r["self_value"].(int64), Cum: r["inclusive_value"].(int64)})
				rank[m] = append(rank[m], r["rank"].(int32))
			}
			prof, err := profile.Parse(openFile(t, file), profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range prof.P.SampleType {
				rows := got[st.Type]
				byRank := make([]pproftest.Row, len(rows))
				for i, r := range rows {
					byRank[rank[st.Type][i]-1] = r
				}
				want := pproftest.Top(t, file, st.Type, st.Unit)
				if len(want) == 0 {
					t.Fatalf("%s: pprof printed no rows", st.Type)
				}
				// pprof drops rows whose flat and cum are both 0;
				// flameox writes one row per frame with a value.
				var nonzero []pproftest.Row
				for _, r := range byRank {
					if r.Flat != 0 || r.Cum != 0 {
						nonzero = append(nonzero, r)
					}
				}
				if len(nonzero) != len(want) {
					t.Fatalf("%s: %d rows, pprof %d", st.Type, len(nonzero), len(want))
				}
				for i := range want {
					if nonzero[i] != want[i] {
						t.Errorf("%s row %d: flameox %v, go tool pprof %v", st.Type, i, nonzero[i], want[i])
					}
				}
			}
		})
	}
}

func openFile(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func head(t *testing.T, path string) []byte {
	b, err := io.ReadAll(io.LimitReader(openFile(t, path), 64<<10))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
