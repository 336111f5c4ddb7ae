package publish

import (
	"context"
	"fmt"
	"math"
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
	needed := false
	for _, files := range snap.Files {
		if len(files) > 1 {
			needed = true
		}
	}
	var plan *corpus.CompactionPlan
	if needed {
		plan = corpus.PlanCompaction(snap, math.MaxInt64, 2) // every live generation
	}
	return p.compact(ctx, snap, plan)
}

// Automatic compaction: a publication that leaves AutoCompactGenerations
// live generations in one size tier merges them into one segment. One
// capture is one generation of a few rows, and every generation costs each
// later publication (the commit lists and digests them all) and each
// reader (one more file per table to bind and open), so without it an
// agent's hundredth capture and query pay for the ninety-nine before.
// The tiers (AutoCompactTiers) are row-count bands: under 2,000 rows, then
// 2,000 to 100,000. A merge takes generations from one band only, so small
// generations are never merged into a large segment that would be copied
// again at every merge; a row is rewritten about once per tier, and
// nothing of 100,000 rows or more is rewritten automatically.
var (
	AutoCompactGenerations = 32
	AutoCompactTiers       = []int64{2000, 100000}
)

// autoCompact merges the first tier that has AutoCompactGenerations
// generations.
func (p *Publisher) autoCompact(ctx context.Context) (*CompactResult, error) {
	snap, err := corpus.Pin(p.WS.Root)
	if err != nil {
		return nil, err
	}
	lo := int64(0)
	for _, hi := range AutoCompactTiers {
		if plan := corpus.PlanCompactionBand(snap, lo, hi, AutoCompactGenerations); plan != nil {
			return p.compact(ctx, snap, plan)
		}
		lo = hi
	}
	return p.compact(ctx, snap, nil)
}

// CompactSmall merges the live generations with fewer than smallRows rows
// into one segment when there are at least minGenerations of them, and
// does nothing otherwise.
func (p *Publisher) CompactSmall(ctx context.Context, smallRows int64, minGenerations int) (*CompactResult, error) {
	snap, err := corpus.Pin(p.WS.Root)
	if err != nil {
		return nil, err
	}
	return p.compact(ctx, snap, corpus.PlanCompaction(snap, smallRows, minGenerations))
}

// compact carries out plan (nil: nothing to do) on snap.
func (p *Publisher) compact(ctx context.Context, snap *corpus.Snapshot, plan *corpus.CompactionPlan) (*CompactResult, error) {
	res := &CompactResult{SchemaVersion: 1, CommitID: snap.Commit.CommitID, Superseded: []string{}, Rows: map[string]int64{}}
	for _, files := range snap.Files {
		res.FilesBefore += len(files)
	}
	res.FilesAfter = res.FilesBefore
	if plan == nil || len(plan.Supersedes) < 2 {
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
	tables := make([]string, 0, len(plan.Files))
	for name := range plan.Files {
		tables = append(tables, name)
	}
	sort.Strings(tables)
	var files []corpus.GenerationFile
	replaced := 0
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
		rows, err := schema.Copy(ctx, t, f, plan.Files[name])
		if err == nil {
			err = f.Sync()
		}
		f.Close()
		if err != nil {
			return nil, fault.Wrap(fault.EvidenceSchemaMismatch, err, "compact %s", name)
		}
		if rows != plan.Rows[name] {
			return nil, fault.New(fault.ArtifactIntegrityFailed, "compacting %s read %d rows; the manifests record %d", name, rows, plan.Rows[name])
		}
		sum, size, err := hashFile(path)
		if err != nil {
			return nil, err
		}
		files = append(files, corpus.GenerationFile{
			Path:  fmt.Sprintf("evidence/%s/generation=%s/part-00000.parquet", name, st.ID),
			Table: name, SchemaMajor: t.Major, SchemaMinor: t.Minor, SHA256: sum, ByteLength: size, RowCount: rows,
		})
		replaced += len(plan.Files[name])
	}
	res.Superseded = append(res.Superseded, plan.Supersedes...)
	sort.Strings(res.Superseded)
	c, err := Commit(ctx, p.WS, st, files, Meta{Publisher: Name + " compact", PublisherVersion: version.Version(), Supersedes: res.Superseded})
	if err != nil {
		return nil, err
	}
	for t, n := range snap.Rows {
		res.Rows[t] = n
	}
	res.Compacted, res.GenerationID, res.CommitID = true, st.ID, c.Commit.CommitID
	res.FilesAfter = res.FilesBefore - replaced + len(files)
	return res, nil
}
