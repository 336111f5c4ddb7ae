package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportArtifactSaysNotAnalysed: import_artifact's result says whether
// the file is analysed (the same field as `flameox import --json`), and a
// file stored without extraction says so at the start of the (one-line) text;
// a legacy pprof profile is a sample_profile that is analysed.
func TestImportArtifactSaysNotAnalysed(t *testing.T) {
	dir := project(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("just some notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	heap, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "google-pprof", "profile__gobench.heap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gobench.heap"), heap, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	type result struct {
		Analysed     *bool  `json:"analysed"`
		NotAnalysed  string `json:"not_analysed"`
		Registration struct {
			Kind string `json:"kind"`
		} `json:"registration"`
	}
	var notes, prof result
	env := c.ok("import_artifact", map[string]any{"path": "notes.txt"}, &notes)
	if notes.Analysed == nil || *notes.Analysed || notes.NotAnalysed == "" ||
		!strings.HasPrefix(env.text, "stored, not analysed: not a format flameox extracts; analyses will not see it — imported notes.txt") {
		t.Fatalf("notes.txt: %+v, text %q", notes, env.text)
	}
	env = c.ok("import_artifact", map[string]any{"path": "gobench.heap"}, &prof)
	if prof.Analysed == nil || !*prof.Analysed || prof.Registration.Kind != "sample_profile" || strings.HasPrefix(env.text, "stored") {
		t.Fatalf("gobench.heap: %+v, text %q", prof, env.text)
	}
}
