package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/run"
)

// TestImportSaysWhetherAnalysed: an import result says whether an
// extractor will read the file, by the content checks publication makes;
// a file none reads is stored with analysed=false, the reason, and a
// limitation on its run. Legacy pprof profiles (once stored as
// collector_metadata) are profiles.
func TestImportSaysWhetherAnalysed(t *testing.T) {
	s := newService(t)
	s.Adapters = all.Registry()
	legacy := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "google-pprof", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name     string
		data     []byte
		kind     string // requested
		wantKind string
		analysed bool
	}{
		{"gobench.heap", legacy("profile__gobench.heap"), "", "sample_profile", true},
		{"java.cpu", legacy("profile__java.cpu"), "", "sample_profile", true},
		{"cppbench.heap", legacy("profile__cppbench.heap"), "", "sample_profile", true},
		{"cppbench.contention", legacy("profile__cppbench.contention"), "", "sample_profile", true},
		{"cppbench.cpu", legacy("profile__cppbench.cpu"), "", "sample_profile", true},
		{"bench.txt", []byte("goos: linux\nBenchmarkX-8   100   12.5 ns/op\nPASS\n"), "", "collector_metadata", true},
		{"notes.txt", []byte("just some notes\n"), "", "collector_metadata", false},
		{"blob.bin", []byte{0, 1, 2, 3, 0xff}, "", "collector_metadata", false},
		{"tagged.txt", []byte("just some notes\n"), "execution_coverage", "execution_coverage", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Import(context.Background(), ImportRequest{Path: writeFile(t, tt.name, tt.data), Kind: tt.kind})
			if err != nil {
				t.Fatal(err)
			}
			if res.Registration.Kind != tt.wantKind || res.Analysed != tt.analysed {
				t.Fatalf("kind %s analysed %v, want %s %v", res.Registration.Kind, res.Analysed, tt.wantKind, tt.analysed)
			}
			line := res.NotAnalysedLine()
			m, err := (&run.Store{Root: s.WS.Root}).Get(res.Run.RunID)
			if err != nil {
				t.Fatal(err)
			}
			limited := strings.Contains(strings.Join(m.Limitations, "\n"), "Stored, not analysed: "+tt.name)
			if tt.analysed {
				if line != "" || res.NotAnalysed != "" || limited {
					t.Fatalf("analysed file reported as not analysed: %q %q %v", line, res.NotAnalysed, m.Limitations)
				}
				return
			}
			if line != "stored, not analysed: not a format flameox extracts; analyses will not see it" {
				t.Fatalf("line %q", line)
			}
			if res.NotAnalysed != NotAnalysedReason || !limited {
				t.Fatalf("reason %q, limitations %v", res.NotAnalysed, m.Limitations)
			}
		})
	}
}
