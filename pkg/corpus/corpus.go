package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// SchemaVersion of commit files.
const SchemaVersion = 1

// GenerationRef names one generation manifest in a commit.
type GenerationRef struct {
	GenerationID string `json:"generation_id"`
	// Manifest is the workspace-relative path of the manifest.
	Manifest string `json:"manifest"`
	// ManifestSHA256 is digest.Bytes of the manifest file, so a commit pins
	// the manifest's exact bytes.
	ManifestSHA256 string `json:"manifest_sha256"`
}

// Commit is one immutable snapshot of the published corpus.
type Commit struct {
	SchemaVersion   int             `json:"schema_version"`
	CommitID        string          `json:"commit_id"`
	ParentCommitID  *string         `json:"parent_commit_id"`
	CreatedAt       time.Time       `json:"created_at"`
	Generations     []GenerationRef `json:"generations"`
	InventoryDigest string          `json:"inventory_digest"`
}

// Paths of the corpus inside a workspace root.
func headPath(root string) string { return filepath.Join(root, "corpus", "HEAD") }

// CommitPath returns the path of a commit file.
func CommitPath(root, id string) string {
	hex := strings.TrimPrefix(id, "sha256:")
	return filepath.Join(root, "corpus", "commits", hex+".json")
}

// NewCommit builds a commit over gens with its content address.
func NewCommit(parent *string, gens []GenerationRef, now time.Time) (Commit, error) {
	gens = append([]GenerationRef{}, gens...)
	sort.Slice(gens, func(i, j int) bool { return gens[i].GenerationID < gens[j].GenerationID })
	inv, err := digest.Of(map[string]any{"generations": gens})
	if err != nil {
		return Commit{}, err
	}
	c := Commit{SchemaVersion: SchemaVersion, ParentCommitID: parent, CreatedAt: now.UTC().Truncate(time.Microsecond), Generations: gens, InventoryDigest: inv}
	if c.Generations == nil {
		c.Generations = []GenerationRef{}
	}
	c.CommitID, err = c.computeID()
	return c, err
}

func (c Commit) computeID() (string, error) {
	c.CommitID = ""
	return digest.Of(c)
}

// WriteCommit stores c immutably. An existing file must hold the same bytes.
func WriteCommit(root string, c Commit) error {
	data, err := durable.MarshalIndent(c)
	if err != nil {
		return err
	}
	path := CommitPath(root, c.CommitID)
	err = durable.CreateExclusive(path, data, 0o644)
	if errors.Is(err, fs.ErrExist) {
		old, rerr := os.ReadFile(path)
		if rerr == nil && bytes.Equal(old, data) {
			return nil
		}
		return fault.New(fault.ArtifactIntegrityFailed, "commit %s already exists with other content", c.CommitID).With("file", rel(root, path))
	}
	return err
}

// InitHead writes the first, empty commit of a new corpus and points HEAD
// at it, returning the workspace-relative paths it created. Like SetHead,
// only pkg/publish calls it outside tests (publish.FirstCommit;
// pkg/internal/repocheck keeps it so).
func InitHead(root string, now time.Time) ([]string, error) {
	c, err := NewCommit(nil, nil, now)
	if err != nil {
		return nil, err
	}
	if err := WriteCommit(root, c); err != nil {
		return nil, err
	}
	if err := SetHead(root, c.CommitID); err != nil {
		return nil, err
	}
	return []string{"corpus/HEAD", "corpus/commits/" + strings.TrimPrefix(c.CommitID, "sha256:") + ".json"}, nil
}

// SetHead atomically points HEAD at id. It is the last step of every
// publication.
func SetHead(root, id string) error {
	return durable.WriteFile(headPath(root), []byte(id+"\n"), 0o644)
}

// HeadID reads the commit id in HEAD without verifying the commit.
func HeadID(root string) (string, error) {
	b, err := os.ReadFile(headPath(root))
	if err != nil {
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "read corpus/HEAD").With("file", "corpus/HEAD").
			Fix("The corpus head is missing; restore it from a backup or run `flameox validate --full` to inspect the workspace.")
	}
	id := strings.TrimSpace(string(b))
	if !digest.Valid(id) || strings.Count(string(b), "\n") > 1 {
		return "", fault.New(fault.WorkspaceInvalid, "corpus/HEAD does not hold a commit id").With("file", "corpus/HEAD")
	}
	return id, nil
}

// Head reads HEAD and the verified commit it names.
func Head(root string) (Commit, error) {
	id, err := HeadID(root)
	if err != nil {
		return Commit{}, err
	}
	return Read(root, id)
}

// Read loads a commit and verifies its content address and inventory.
func Read(root, id string) (Commit, error) {
	path := CommitPath(root, id)
	b, err := os.ReadFile(path)
	if err != nil {
		return Commit{}, fault.Wrap(fault.WorkspaceInvalid, err, "read commit %s", id).With("file", rel(root, path))
	}
	var c Commit
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Commit{}, fault.Wrap(fault.WorkspaceInvalid, err, "decode commit %s", id).With("file", rel(root, path))
	}
	if c.SchemaVersion != SchemaVersion {
		return Commit{}, fault.New(fault.WorkspaceInvalid, "commit %s has schema_version %d; this flameox reads %d", id, c.SchemaVersion, SchemaVersion).With("file", rel(root, path))
	}
	got, err := c.computeID()
	if err != nil {
		return Commit{}, err
	}
	if got != id || c.CommitID != id {
		return Commit{}, fault.New(fault.ArtifactIntegrityFailed, "commit %s does not match its content (computed %s)", id, got).With("file", rel(root, path))
	}
	inv, err := digest.Of(map[string]any{"generations": c.Generations})
	if err != nil {
		return Commit{}, err
	}
	if inv != c.InventoryDigest {
		return Commit{}, fault.New(fault.ArtifactIntegrityFailed, "commit %s inventory digest mismatch", id).With("file", rel(root, path))
	}
	return c, nil
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// Short returns the first 12 hex digits of a digest id, for display.
func Short(id string) string {
	h := strings.TrimPrefix(id, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}
