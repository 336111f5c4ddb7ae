package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/version"
)

// CompactResult says what a compaction did.
type CompactResult struct {
	SchemaVersion int              `json:"schema_version"`
	Compacted     bool             `json:"compacted"`
	GenerationID  string           `json:"generation_id,omitempty"`
	CommitID      string           `json:"commit_id"`
	Superseded    []string         `json:"superseded_generations"`
	FilesBefore   int              `json:"files_before"`
	FilesAfter    int              `json:"files_after"`
	Rows          map[string]int64 `json:"rows"`
}

// Compact rewrites the head's generations into one segment per table and
// publishes it as a generation that supersedes them. Rows keep their
// original publication columns, so "latest revision" rules and provenance
// are unchanged; the old files stay on disk, reachable through the new
// manifest's supersedes list, until retention removes them. With one file
// per table already, it does nothing.
func (p *Publisher) Compact(ctx context.Context) (*CompactResult, error) {
	snap, err := corpus.Pin(p.WS.Root)
	if err != nil {
		return nil, err
	}
	res := &CompactResult{SchemaVersion: 1, CommitID: snap.Commit.CommitID, Superseded: []string{}, Rows: map[string]int64{}}
	for _, files := range snap.Files {
		res.FilesBefore += len(files)
	}
	res.FilesAfter = res.FilesBefore
	needed := false
	for _, files := range snap.Files {
		if len(files) > 1 {
			needed = true
		}
	}
	if !needed || len(snap.Generations) < 2 {
		for t, n := range snap.Rows {
			res.Rows[t] = n
		}
		return res, nil
	}
	st, err := NewStage(p.WS.Root, Name, version.Version(), p.now())
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	tables := snap.Tables()
	var files []corpus.GenerationFile
	for _, name := range tables {
		t, ok := schema.Lookup(name)
		if !ok {
			return nil, fault.New(fault.EvidenceSchemaMismatch, "the corpus has a table %q this flameox does not know", name)
		}
		path := filepath.Join(st.Dir, name+".parquet")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		rows, err := schema.Copy(ctx, t, f, snap.Files[name])
		if err == nil {
			err = f.Sync()
		}
		f.Close()
		if err != nil {
			return nil, fault.Wrap(fault.EvidenceSchemaMismatch, err, "compact %s", name)
		}
		if rows != snap.Rows[name] {
			return nil, fault.New(fault.ArtifactIntegrityFailed, "compacting %s read %d rows; the manifests record %d", name, rows, snap.Rows[name])
		}
		sum, size, err := hashFile(path)
		if err != nil {
			return nil, err
		}
		files = append(files, corpus.GenerationFile{
			Path:  fmt.Sprintf("evidence/%s/generation=%s/part-00000.parquet", name, st.ID),
			Table: name, SchemaMajor: t.Major, SchemaMinor: t.Minor, SHA256: sum, ByteLength: size, RowCount: rows,
		})
		res.Rows[name] = rows
	}
	for _, g := range snap.Generations {
		res.Superseded = append(res.Superseded, g.GenerationID)
	}
	sort.Strings(res.Superseded)
	c, err := Commit(ctx, p.WS, st, files, Meta{Publisher: Name + " compact", PublisherVersion: version.Version(), Supersedes: res.Superseded})
	if err != nil {
		return nil, err
	}
	res.Compacted, res.GenerationID, res.CommitID, res.FilesAfter = true, st.ID, c.Commit.CommitID, len(files)
	return res, nil
}
