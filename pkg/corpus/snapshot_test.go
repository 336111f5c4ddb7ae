package corpus_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// gen writes generation id with one evidence file per table (content is
// the bytes of the "Parquet" file; readers here only check sizes) and
// returns the ref a commit pins.
func gen(t *testing.T, root, id string, tables map[string]string, inputCommit string, supersedes ...string) corpus.GenerationRef {
	t.Helper()
	g := corpus.Generation{SchemaVersion: corpus.GenerationVersion, GenerationID: id, CreatedAt: t0,
		InputCommitID: inputCommit, InputRunIDs: []string{}, InputArtifactIDs: []string{},
		Publisher: "test", PublisherVersion: "0", Files: []corpus.GenerationFile{}, Supersedes: supersedes}
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		rel := "evidence/" + table + "/generation=" + id + "/part-0.parquet"
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(tables[table]), 0o644); err != nil {
			t.Fatal(err)
		}
		g.Files = append(g.Files, corpus.GenerationFile{Path: rel, Table: table, SchemaMajor: 1,
			SHA256: digest.Bytes([]byte(tables[table])), ByteLength: int64(len(tables[table])), RowCount: int64(len(tables[table]))})
	}
	return writeGen(t, root, g)
}

func writeGen(t *testing.T, root string, g corpus.Generation) corpus.GenerationRef {
	t.Helper()
	data, err := durable.MarshalIndent(g)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, filepath.FromSlash(corpus.GenerationRel(g.GenerationID)))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus.GenerationRef{GenerationID: g.GenerationID, Manifest: corpus.GenerationRel(g.GenerationID), ManifestSHA256: digest.Bytes(data)}
}

func TestPinLoadsTheInventory(t *testing.T) {
	root := newRoot(t)
	empty := commit(t, root, nil)
	g1 := gen(t, root, "g1", map[string]string{"runs": "r", "frames": "fff"}, empty.CommitID)
	c1 := commit(t, root, &empty.CommitID, g1)
	g2 := gen(t, root, "g2", map[string]string{"frames": "ff"}, c1.CommitID)
	c2 := commit(t, root, &c1.CommitID, g1, g2)

	s, err := corpus.Pin(root)
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit.CommitID != c2.CommitID || len(s.Generations) != 2 {
		t.Fatalf("Pin = commit %s with %d generations, want %s with 2", s.Commit.CommitID, len(s.Generations), c2.CommitID)
	}
	if got, want := s.Tables(), []string{"frames", "runs"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Tables = %v, want %v", got, want)
	}
	wantFrames := []string{
		filepath.Join(root, "evidence", "frames", "generation=g1", "part-0.parquet"),
		filepath.Join(root, "evidence", "frames", "generation=g2", "part-0.parquet"),
	}
	if !reflect.DeepEqual(s.Files["frames"], wantFrames) {
		t.Errorf("Files[frames] = %v, want generation order %v", s.Files["frames"], wantFrames)
	}
	if s.Rows["frames"] != 5 || s.Rows["runs"] != 1 {
		t.Errorf("Rows = %v, want frames 5, runs 1", s.Rows)
	}

	// A reader pinned on the older commit keeps seeing it.
	old, err := corpus.PinCommit(root, c1.CommitID)
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Generations) != 1 || old.Rows["frames"] != 3 {
		t.Errorf("PinCommit(c1) = %d generations, rows %v", len(old.Generations), old.Rows)
	}
	// An empty corpus is a valid, empty snapshot.
	none, err := corpus.PinCommit(root, empty.CommitID)
	if err != nil || len(none.Tables()) != 0 {
		t.Errorf("PinCommit(empty) = %v, %v", none, err)
	}
}

// TestOpenChecksFiles damages what a commit pins in each way Open notices
// without reading Parquet.
func TestOpenChecksFiles(t *testing.T) {
	part := filepath.Join("evidence", "frames", "generation=g1", "part-0.parquet")
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, root string)
		want   fault.Code
	}{
		{"intact", func(*testing.T, string) {}, ""},
		{"missing file", func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, part))) }, fault.ArtifactIntegrityFailed},
		{"other size", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, part), []byte("longer"), 0o644))
		}, fault.ArtifactIntegrityFailed},
		{"symlink", func(t *testing.T, root string) {
			abs := filepath.Join(root, part)
			must(t, os.Rename(abs, abs+".real"))
			must(t, os.Symlink(abs+".real", abs))
		}, fault.ArtifactIntegrityFailed},
		{"manifest edited", func(t *testing.T, root string) {
			path := filepath.Join(root, "generations", "g1", "manifest.json")
			b, err := os.ReadFile(path)
			must(t, err)
			must(t, os.WriteFile(path, append(b, ' '), 0o644))
		}, fault.ArtifactIntegrityFailed},
		{"manifest missing", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "generations", "g1")))
		}, fault.WorkspaceInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			commit(t, root, nil, gen(t, root, "g1", map[string]string{"frames": "fff"}, ""))
			tc.damage(t, root)
			_, err := corpus.Pin(root)
			if got := code(err); got != tc.want {
				t.Fatalf("Pin: %v, want code %q", err, tc.want)
			}
		})
	}
}

func TestReadGenerationRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(g *corpus.Generation)
		refID string
		want  fault.Code
	}{
		{"intact", func(*corpus.Generation) {}, "g", ""},
		{"other id", func(*corpus.Generation) {}, "h", fault.WorkspaceInvalid},
		{"newer version", func(g *corpus.Generation) { g.SchemaVersion = 2 }, "g", fault.WorkspaceInvalid},
		{"parent path", func(g *corpus.Generation) { g.Files[0].Path = "evidence/frames/../../../etc/passwd" }, "g", fault.ArtifactIntegrityFailed},
		{"absolute path", func(g *corpus.Generation) { g.Files[0].Path = "/evidence/frames/x.parquet" }, "g", fault.ArtifactIntegrityFailed},
		{"other table's directory", func(g *corpus.Generation) { g.Files[0].Path = "evidence/runs/generation=g/part-0.parquet" }, "g", fault.ArtifactIntegrityFailed},
		{"outside evidence", func(g *corpus.Generation) { g.Files[0].Path = "runs/frames/x.parquet" }, "g", fault.ArtifactIntegrityFailed},
		{"backslash", func(g *corpus.Generation) { g.Files[0].Path = `evidence/frames/..\x.parquet` }, "g", fault.ArtifactIntegrityFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			g := corpus.Generation{SchemaVersion: corpus.GenerationVersion, GenerationID: "g",
				Files: []corpus.GenerationFile{{Path: "evidence/frames/generation=g/part-0.parquet", Table: "frames"}}}
			tc.edit(&g)
			ref := writeGen(t, root, g)
			// The manifest of the ref's id is the one written.
			if tc.refID != "g" {
				must(t, os.Rename(filepath.Join(root, "generations", "g"), filepath.Join(root, "generations", tc.refID)))
				ref = corpus.GenerationRef{GenerationID: tc.refID, Manifest: corpus.GenerationRel(tc.refID), ManifestSHA256: ref.ManifestSHA256}
			}
			_, err := corpus.ReadGeneration(root, ref, true)
			if got := code(err); got != tc.want {
				t.Fatalf("ReadGeneration: %v, want code %q", err, tc.want)
			}
		})
	}
	// Without verify, a manifest that changed since its commit still reads
	// (Orphans and retention look at manifests no commit pins).
	root := newRoot(t)
	ref := gen(t, root, "g", map[string]string{"frames": "f"}, "")
	ref.ManifestSHA256 = digest.Bytes(nil)
	if _, err := corpus.ReadGeneration(root, ref, false); err != nil {
		t.Errorf("ReadGeneration(verify=false): %v", err)
	}
	if _, err := corpus.ReadGeneration(root, ref, true); code(err) != fault.ArtifactIntegrityFailed {
		t.Errorf("ReadGeneration(verify=true) of a changed manifest: %v", err)
	}
}

// TestOrphans publishes, compacts and crashes: what HEAD's history cannot
// reach is an orphan; what a live generation superseded is not.
func TestOrphans(t *testing.T) {
	root := newRoot(t)
	empty := commit(t, root, nil)
	a := gen(t, root, "a", map[string]string{"frames": "1"}, empty.CommitID)
	b := gen(t, root, "b", map[string]string{"frames": "2"}, empty.CommitID)
	before := commit(t, root, &empty.CommitID, a, b)
	// Compaction: m supersedes a and b; HEAD lists only m.
	m := gen(t, root, "m", map[string]string{"frames": "12"}, before.CommitID, "a", "b")
	commit(t, root, &before.CommitID, m)
	// A publication that crashed before HEAD moved.
	gen(t, root, "crashed", map[string]string{"frames": "3", "runs": "r"}, before.CommitID)
	// Stray directories a reader would never open.
	must(t, os.MkdirAll(filepath.Join(root, "evidence", "frames", "tmp-123"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "evidence", "README"), nil, 0o644))

	s, err := corpus.Pin(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"evidence/frames/generation=crashed",
		"evidence/frames/tmp-123",
		"evidence/runs/generation=crashed",
		"generations/crashed",
	}
	if got := corpus.Orphans(s); !reflect.DeepEqual(got, want) {
		t.Errorf("Orphans = %q\nwant %q", got, want)
	}

	// FindGeneration finds the live one and the ones it superseded.
	for _, tc := range []struct{ id, found, by string }{
		{"m", "m", ""},
		{"a", "a", "m"},
		{"b", "b", "m"},
		{"crashed", "", ""},
		{"nope", "", ""},
	} {
		g, by, err := corpus.FindGeneration(s, tc.id)
		if err != nil {
			t.Fatalf("FindGeneration(%s): %v", tc.id, err)
		}
		found := ""
		if g != nil {
			found = g.GenerationID
		}
		if found != tc.found || by != tc.by {
			t.Errorf("FindGeneration(%s) = %q superseded by %q, want %q by %q", tc.id, found, by, tc.found, tc.by)
		}
	}

	// A superseded manifest that changed since the commit pinned it is an
	// integrity failure, not a silent answer.
	path := filepath.Join(root, "generations", "a", "manifest.json")
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, append(data, '\n'), 0o644))
	if _, _, err := corpus.FindGeneration(s, "a"); code(err) != fault.ArtifactIntegrityFailed {
		t.Errorf("FindGeneration over an edited superseded manifest: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
