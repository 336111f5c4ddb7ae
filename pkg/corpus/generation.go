package corpus

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

// GenerationVersion is the generation manifest format version.
const GenerationVersion = 1

// Generation is generations/<id>/manifest.json: the exact files one
// publication added, with their hashes, sizes, row counts and schemas, the
// inputs they were made from, who made them, and the generations they
// supersede.
type Generation struct {
	SchemaVersion    int              `json:"schema_version"`
	GenerationID     string           `json:"generation_id"`
	CreatedAt        time.Time        `json:"created_at"`
	InputCommitID    string           `json:"input_commit_id"`
	InputRunIDs      []string         `json:"input_run_ids"`
	InputArtifactIDs []string         `json:"input_artifact_ids"`
	Publisher        string           `json:"publisher"`
	PublisherVersion string           `json:"publisher_version"`
	Files            []GenerationFile `json:"files"`
	Supersedes       []string         `json:"supersedes"`
	// Extractions records which extractor (and version) made which rows
	// from which artifact, with the limitations it reported.
	Extractions []Extraction `json:"extractions,omitempty"`
}

// Extraction is the provenance of rows extracted from one artifact.
type Extraction struct {
	RunID       string           `json:"run_id"`
	ArtifactID  string           `json:"artifact_id"`
	Extractor   string           `json:"extractor"`
	Version     string           `json:"version"`
	Rows        map[string]int64 `json:"rows"`
	Limitations []string         `json:"limitations"`
}

// GenerationFile is one Parquet file of a generation.
type GenerationFile struct {
	// Path is workspace-relative: evidence/<table>/generation=<id>/part-<n>.parquet.
	Path        string `json:"path"`
	Table       string `json:"table"`
	SchemaMajor int    `json:"schema_major"`
	SchemaMinor int    `json:"schema_minor"`
	SHA256      string `json:"sha256"` // digest form, sha256:<hex>
	ByteLength  int64  `json:"byte_length"`
	RowCount    int64  `json:"row_count"`
}

// GenerationRel is the workspace-relative manifest path of a generation.
func GenerationRel(id string) string { return "generations/" + id + "/manifest.json" }

// ReadGeneration loads a generation manifest named by ref and, when verify
// is set, checks it against the digest the commit pinned.
func ReadGeneration(root string, ref GenerationRef, verify bool) (*Generation, error) {
	path := filepath.Join(root, filepath.FromSlash(ref.Manifest))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read generation manifest %s", ref.Manifest).With("file", ref.Manifest)
	}
	if got := digest.Bytes(b); verify && got != ref.ManifestSHA256 {
		return nil, fault.New(fault.ArtifactIntegrityFailed, "generation manifest %s changed since it was committed", ref.Manifest).With("file", ref.Manifest)
	}
	var g Generation
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "decode generation manifest %s", ref.Manifest).With("file", ref.Manifest)
	}
	if g.SchemaVersion != GenerationVersion || g.GenerationID != ref.GenerationID {
		return nil, fault.New(fault.WorkspaceInvalid, "generation manifest %s does not describe generation %s (version %d)", ref.Manifest, ref.GenerationID, g.SchemaVersion).With("file", ref.Manifest)
	}
	for _, f := range g.Files {
		if !safeRel(f.Path) || !strings.HasPrefix(f.Path, "evidence/"+f.Table+"/") {
			return nil, fault.New(fault.ArtifactIntegrityFailed, "generation %s lists an unsafe path %q", g.GenerationID, f.Path).With("file", ref.Manifest)
		}
	}
	return &g, nil
}

// safeRel reports whether p is a clean relative slash path without "..".
func safeRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}
