package corpus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

var t0 = time.Date(2026, 11, 29, 17, 0, 0, 123456789, time.UTC)

// newRoot makes the directories workspace.Init makes for the corpus.
func newRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"corpus/commits", "generations", "evidence"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// commit writes a commit over gens with the given parent and points HEAD at
// it, the way a publication ends.
func commit(t *testing.T, root string, parent *string, gens ...corpus.GenerationRef) corpus.Commit {
	t.Helper()
	c, err := corpus.NewCommit(parent, gens, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := corpus.WriteCommit(root, c); err != nil {
		t.Fatal(err)
	}
	if err := corpus.SetHead(root, c.CommitID); err != nil {
		t.Fatal(err)
	}
	return c
}

func code(err error) fault.Code {
	if err == nil {
		return ""
	}
	return fault.As(err).Code
}

func TestHeadRoundTrip(t *testing.T) {
	root := newRoot(t)
	first := commit(t, root, nil)
	if first.Generations == nil || len(first.Generations) != 0 {
		t.Errorf("empty commit lists generations %#v, want []", first.Generations)
	}
	second := commit(t, root, &first.CommitID)
	id, err := corpus.HeadID(root)
	if err != nil || id != second.CommitID {
		t.Fatalf("HeadID = %q, %v; want %q", id, err, second.CommitID)
	}
	head, err := corpus.Head(root)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(head, second) {
		t.Errorf("Head = %+v\nwant %+v", head, second)
	}
	if head.ParentCommitID == nil || *head.ParentCommitID != first.CommitID {
		t.Errorf("parent = %v, want %s", head.ParentCommitID, first.CommitID)
	}
	// The older commit stays readable: commits are immutable.
	if _, err := corpus.Read(root, first.CommitID); err != nil {
		t.Errorf("Read(first): %v", err)
	}
	if !head.CreatedAt.Equal(t0.Truncate(time.Microsecond)) {
		t.Errorf("CreatedAt = %v, want %v truncated to microseconds", head.CreatedAt, t0)
	}
}

func TestHeadIDRejects(t *testing.T) {
	valid := digest.Bytes([]byte("x"))
	for _, tc := range []struct {
		name, head string
		want       fault.Code
	}{
		{"missing", "", fault.WorkspaceInvalid},
		{"empty", "\n", fault.WorkspaceInvalid},
		{"not a digest", "main\n", fault.WorkspaceInvalid},
		{"bare hex", strings.TrimPrefix(valid, "sha256:") + "\n", fault.WorkspaceInvalid},
		{"two lines", valid + "\n" + valid + "\n", fault.WorkspaceInvalid},
		{"no newline", valid, ""},
		{"one line", valid + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			if tc.name != "missing" {
				if err := os.WriteFile(filepath.Join(root, "corpus", "HEAD"), []byte(tc.head), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			id, err := corpus.HeadID(root)
			if got := code(err); got != tc.want {
				t.Fatalf("HeadID(%q) = %q, %v; want code %q", tc.head, id, err, tc.want)
			}
			if err == nil && id != valid {
				t.Errorf("HeadID = %q, want %q", id, valid)
			}
			if err != nil && fault.As(err).Details["file"] != "corpus/HEAD" {
				t.Errorf("error names file %q, want corpus/HEAD", fault.As(err).Details["file"])
			}
			if tc.want != "" {
				if _, err := corpus.Head(root); code(err) != tc.want {
					t.Errorf("Head: %v, want %s", err, tc.want)
				}
			}
		})
	}
}

func TestHeadNamesMissingCommit(t *testing.T) {
	root := newRoot(t)
	if err := corpus.SetHead(root, digest.Bytes([]byte("never written"))); err != nil {
		t.Fatal(err)
	}
	_, err := corpus.Head(root)
	if code(err) != fault.WorkspaceInvalid {
		t.Fatalf("Head over a missing commit: %v, want WORKSPACE_INVALID", err)
	}
	if f := fault.As(err).Details["file"]; !strings.HasPrefix(f, filepath.Join("corpus", "commits")) {
		t.Errorf("error names file %q, want the commit file", f)
	}
}

func TestNewCommitIsContentAddressed(t *testing.T) {
	a := corpus.GenerationRef{GenerationID: "a", Manifest: corpus.GenerationRel("a"), ManifestSHA256: digest.Bytes([]byte("a"))}
	b := corpus.GenerationRef{GenerationID: "b", Manifest: corpus.GenerationRel("b"), ManifestSHA256: digest.Bytes([]byte("b"))}
	parent := digest.Bytes([]byte("parent"))
	id := func(parent *string, now time.Time, gens ...corpus.GenerationRef) string {
		c, err := corpus.NewCommit(parent, gens, now)
		if err != nil {
			t.Fatal(err)
		}
		if !digest.Valid(c.CommitID) || !digest.Valid(c.InventoryDigest) {
			t.Fatalf("commit %+v has invalid ids", c)
		}
		return c.CommitID
	}
	base := id(&parent, t0, a, b)
	for _, tc := range []struct {
		name string
		id   string
		same bool
	}{
		{"generation order does not matter", id(&parent, t0, b, a), true},
		{"nanoseconds below a microsecond do not matter", id(&parent, t0.Add(100*time.Nanosecond), a, b), true},
		{"time zone does not matter", id(&parent, t0.In(time.FixedZone("X", 3600)), a, b), true},
		{"another parent", id(nil, t0, a, b), false},
		{"another time", id(&parent, t0.Add(time.Second), a, b), false},
		{"another inventory", id(&parent, t0, a), false},
	} {
		if (tc.id == base) != tc.same {
			t.Errorf("%s: id %s vs %s, same=%v", tc.name, tc.id, base, tc.same)
		}
	}
	// NewCommit sorts a copy: the caller's slice keeps its order.
	gens := []corpus.GenerationRef{b, a}
	if _, err := corpus.NewCommit(nil, gens, t0); err != nil {
		t.Fatal(err)
	}
	if gens[0].GenerationID != "b" {
		t.Errorf("NewCommit reordered the caller's slice: %v", gens)
	}
}

func TestWriteCommitIsImmutable(t *testing.T) {
	root := newRoot(t)
	c := commit(t, root, nil)
	if err := corpus.WriteCommit(root, c); err != nil {
		t.Errorf("rewriting the same commit: %v", err)
	}
	other := c
	other.CreatedAt = c.CreatedAt.Add(time.Second)
	err := corpus.WriteCommit(root, other)
	if code(err) != fault.ArtifactIntegrityFailed {
		t.Errorf("overwriting commit %s with other bytes: %v, want ARTIFACT_INTEGRITY_FAILED", c.CommitID, err)
	}
	if _, err := corpus.Read(root, c.CommitID); err != nil {
		t.Errorf("the original commit no longer reads: %v", err)
	}
}

// TestReadVerifies damages a stored commit in each way Read must notice.
func TestReadVerifies(t *testing.T) {
	ref := corpus.GenerationRef{GenerationID: "g", Manifest: corpus.GenerationRel("g"), ManifestSHA256: digest.Bytes([]byte("g"))}
	for _, tc := range []struct {
		name   string
		damage func(m map[string]any, c *corpus.Commit)
		want   fault.Code
	}{
		{"intact", func(map[string]any, *corpus.Commit) {}, ""},
		{"unknown field", func(m map[string]any, _ *corpus.Commit) { m["extra"] = 1 }, fault.WorkspaceInvalid},
		{"newer schema", func(m map[string]any, _ *corpus.Commit) { m["schema_version"] = 2 }, fault.WorkspaceInvalid},
		{"edited time", func(m map[string]any, _ *corpus.Commit) { m["created_at"] = "2020-01-01T00:00:00Z" }, fault.ArtifactIntegrityFailed},
		{"wrong commit_id", func(m map[string]any, _ *corpus.Commit) { m["commit_id"] = digest.Bytes(nil) }, fault.ArtifactIntegrityFailed},
		{"inventory edited, id recomputed", func(m map[string]any, c *corpus.Commit) {
			// A commit whose id matches its bytes but whose inventory
			// digest does not match its generations.
			c.Generations = nil
			m["generations"] = []any{}
		}, fault.ArtifactIntegrityFailed},
		{"not JSON", func(m map[string]any, _ *corpus.Commit) { m["__raw"] = "{" }, fault.WorkspaceInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			c := commit(t, root, nil, ref)
			path := corpus.CommitPath(root, c.CommitID)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			edited := c
			tc.damage(m, &edited)
			if edited.Generations == nil && c.Generations != nil {
				// Keep the file self-consistent except for the inventory.
				edited.Generations = []corpus.GenerationRef{}
				edited.CommitID = ""
				id, err := digest.Of(edited)
				if err != nil {
					t.Fatal(err)
				}
				m["commit_id"] = id
				c.CommitID = id
				path = corpus.CommitPath(root, id)
			}
			out, _ := json.Marshal(m)
			if raw, ok := m["__raw"].(string); ok {
				out = []byte(raw)
			}
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = corpus.Read(root, c.CommitID)
			if got := code(err); got != tc.want {
				t.Fatalf("Read: %v, want code %q", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(fault.As(err).Details["file"], "corpus") {
				t.Errorf("error names file %q", fault.As(err).Details["file"])
			}
		})
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"sha256:0123456789abcdef": "0123456789ab",
		"0123456789abcdef":        "0123456789ab",
		"sha256:abc":              "abc",
		"":                        "",
	} {
		if got := corpus.Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}
