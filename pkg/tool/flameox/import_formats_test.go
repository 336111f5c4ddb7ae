package flameox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/profile/pproftest"
)

// TestImportEveryPprofFormat: legacy pprof profiles from google/pprof's
// testdata import as sample_profile and their hotspots equal
// `go tool pprof -top` through the whole path (import, extraction,
// publication, query); a file flameox does not extract is stored and
// says so on the first line; a file that starts like a legacy profile
// but does not parse, or one given --kind sample_profile that is no
// profile, is refused.
func TestImportEveryPprofFormat(t *testing.T) {
	dir := initProject(t)
	legacy := []string{"profile__gobench.heap", "profile__java.cpu", "profile__java.heap", "profile__cppbench.heap",
		"profile__cppbench.contention", "profile__cppbench.cpu", "profile__cppbench.thread", "profile__go.godoc.thread"}
	for _, name := range legacy {
		b, err := os.ReadFile(filepath.Join("..", "..", "profile", "testdata", "google-pprof", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	var imps []struct {
		Analysed     bool `json:"analysed"`
		Registration struct {
			Kind string `json:"kind"`
		} `json:"registration"`
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
	}
	r := mustOK(t, flameox(t, dir, append([]string{"import", "--json"}, legacy...)...))
	if err := json.Unmarshal([]byte(r.stdout), &imps); err != nil || len(imps) != len(legacy) {
		t.Fatalf("import --json: %v\n%s", err, r.stdout)
	}
	for i, name := range legacy {
		t.Run(name, func(t *testing.T) {
			if imps[i].Registration.Kind != "sample_profile" || !imps[i].Analysed {
				t.Fatalf("imported as %s, analysed %v", imps[i].Registration.Kind, imps[i].Analysed)
			}
			file := filepath.Join(dir, name)
			var types struct {
				SampleTypes []struct{ Type, Unit string } `json:"sample_types"`
			}
			json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "analyze", "hotspots", imps[i].Run.RunID, "--json")).stdout), &types)
			if len(types.SampleTypes) == 0 {
				t.Fatal("no sample types")
			}
			for _, st := range types.SampleTypes {
				var hot struct {
					Rows []struct {
						Function        string
						Self, Inclusive int64
					} `json:"rows"`
				}
				out := mustOK(t, flameox(t, dir, "analyze", "hotspots", imps[i].Run.RunID, "--sample-type", st.Type, "--limit", "1000", "--json")).stdout
				if err := json.Unmarshal([]byte(out), &hot); err != nil {
					t.Fatal(err)
				}
				want := pproftest.Top(t, file, st.Type, st.Unit)
				if len(hot.Rows) != len(want) {
					t.Fatalf("%s: %d rows, go tool pprof %d", st.Type, len(hot.Rows), len(want))
				}
				for j, w := range want {
					if g := (pproftest.Row{Name: hot.Rows[j].Function, Flat: hot.Rows[j].Self, Cum: hot.Rows[j].Inclusive}); g != w {
						t.Errorf("%s row %d: flameox %v, go tool pprof %v", st.Type, j, g, w)
					}
				}
			}
		})
	}

	// Stored, not analysed: said first, in text and in JSON.
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("just some notes\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes2.txt"), []byte("other notes\n"), 0o644)
	r = mustOK(t, flameox(t, dir, "import", "notes.txt"))
	if first, _, _ := strings.Cut(r.stdout, "\n"); first != "stored, not analysed: not a format flameox extracts; analyses will not see it" {
		t.Fatalf("first line %q", first)
	}
	var one struct {
		Analysed    *bool  `json:"analysed"`
		NotAnalysed string `json:"not_analysed"`
	}
	json.Unmarshal([]byte(mustOK(t, flameox(t, dir, "import", "--json", "notes2.txt")).stdout), &one)
	if one.Analysed == nil || *one.Analysed || one.NotAnalysed == "" {
		t.Fatalf("import --json of an unextracted file: %+v", one)
	}

	// Refusals.
	os.WriteFile(filepath.Join(dir, "broken.heap"), []byte("heap profile: 1: 1 [1: 1] @ heap_v2/1\nnot a sample\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes3.txt"), []byte("third notes\n"), 0o644)
	for _, c := range []struct{ args []string }{
		{[]string{"import", "broken.heap"}},
		{[]string{"import", "--kind", "sample_profile", "notes3.txt"}},
	} {
		r := flameox(t, dir, c.args...)
		if r.exit != 5 || !strings.Contains(r.stderr, "ARTIFACT_PARSE_FAILED") {
			t.Errorf("%v: exit %d\n%s", c.args, r.exit, r.stderr)
		}
	}
}
