package publish

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/version"
	"github.com/flameox/flameox/pkg/workspace"
)

// Name and Version identify this publisher in manifests and rows.
const Name = "fox-publish"

// Publisher publishes into one workspace.
type Publisher struct {
	WS  *workspace.Workspace
	Now func() time.Time
	// Extractors turn registered artifacts into evidence rows (by content).
	Extractors []adapter.Extractor
	// AutoCompact merges small generations after a publication (see
	// AutoCompactGenerations and AutoCompactTiers); the tools set it, tests
	// and benchmarks that count generations leave it off.
	AutoCompact bool
}

// RunRef names one run revision to publish.
type RunRef struct {
	RunID    string
	Revision int
}

// Result is what one publication produced.
type Result struct {
	GenerationID string              `json:"generation_id"`
	CommitID     string              `json:"commit_id"`
	ParentID     string              `json:"parent_commit_id"`
	Tables       map[string]int64    `json:"tables"`
	Runs         int                 `json:"runs"`
	Extractions  []corpus.Extraction `json:"extractions"`
	// Compaction is what automatic compaction did after the publication
	// (nil when it had nothing to do); CompactionError why it failed. The
	// publication stands either way.
	Compaction      *CompactResult `json:"compaction,omitempty"`
	CompactionError string         `json:"compaction_error,omitempty"`

	live int // generations in the new commit's inventory
}

// PublishRuns publishes the given run revisions as one generation. Each
// revision is read from its immutable revision file, so what is published
// is exactly what the record named, even if the run has moved on.
func (p *Publisher) PublishRuns(ctx context.Context, refs []RunRef) (*Result, error) {
	return p.publishRuns(ctx, refs, Meta{}, p.published)
}

// Republish publishes runs again, re-extracted from their stored native
// artifacts, as one generation that supersedes the generations named in
// supersedes: repair's way to replace a generation whose files are
// damaged (pkg/integrity). Every environment and source state row is
// written again, since a published marker may stand for a row in the
// damaged files. check, when set, runs under the write lock with the HEAD
// the new commit will be based on (Meta.Check).
func (p *Publisher) Republish(ctx context.Context, refs []RunRef, supersedes []string, check func(corpus.Commit) error) (*Result, error) {
	return p.publishRuns(ctx, refs, Meta{Supersedes: supersedes, Check: check}, func(string, string) bool { return false })
}

func (p *Publisher) publishRuns(ctx context.Context, refs []RunRef, meta Meta, published func(table, id string) bool) (*Result, error) {
	if len(refs) == 0 {
		return nil, fault.New(fault.InvalidArguments, "nothing to publish")
	}
	st, err := NewStage(p.WS.Root, Name, version.Version(), p.now())
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	rows := newRunRows(st, published)
	store := &run.Store{Root: p.WS.Root}
	meta.Publisher, meta.PublisherVersion = Name, version.Version()
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, fault.Wrap(fault.ProcessCancelled, err, "publication cancelled")
		}
		m, err := store.Revision(ref.RunID, ref.Revision)
		if err != nil {
			return nil, err
		}
		st.SetTrial(trialOf(m))
		if err := rows.add(m); err != nil {
			return nil, err
		}
		meta.InputRunIDs = append(meta.InputRunIDs, m.RunID)
		for _, a := range m.Artifacts {
			meta.InputArtifactIDs = append(meta.InputArtifactIDs, a.ArtifactID)
			if m.CaptureStatus == run.CaptureQuarantined {
				continue // its registrations are published, no evidence is extracted
			}
			ex, err := p.extract(ctx, m, a, st)
			if err != nil {
				return nil, err
			}
			meta.Extractions = append(meta.Extractions, ex...)
		}
	}
	st.SetTrial(nil)
	res, err := p.commit(ctx, st, meta, len(refs))
	if err != nil {
		return nil, err
	}
	p.markPublished(rows.written)
	// Fewer live generations than one merge takes: nothing to plan, so no
	// manifests to read (this runs after every capture).
	if p.AutoCompact && res.live >= AutoCompactGenerations {
		c, err := p.autoCompact(ctx)
		switch {
		case err != nil:
			res.CompactionError = fault.As(err).Message
		case c.Compacted:
			res.Compaction = c
		}
	}
	res.Extractions = meta.Extractions
	if res.Extractions == nil {
		res.Extractions = []corpus.Extraction{}
	}
	return res, nil
}

func (p *Publisher) commit(ctx context.Context, st *Stage, meta Meta, runs int) (*Result, error) {
	files, err := st.Finish()
	if err != nil {
		return nil, err
	}
	c, err := Commit(ctx, p.WS, st, files, meta)
	if err != nil {
		return nil, err
	}
	res := &Result{GenerationID: c.Generation.GenerationID, CommitID: c.Commit.CommitID, Tables: map[string]int64{}, Runs: runs,
		live: len(c.Commit.Generations)}
	if c.Commit.ParentCommitID != nil {
		res.ParentID = *c.Commit.ParentCommitID
	}
	for _, f := range files {
		res.Tables[f.Table] += f.RowCount
	}
	return res, nil
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Records returns the records describing a publication.
func Records(root string, res *Result, runIDs []string) (corpus.GenerationRecord, corpus.CommitRecord) {
	if runIDs == nil {
		runIDs = []string{}
	}
	g := corpus.GenerationRecord{
		Header:    record.Header{Record: record.KindGeneration, SchemaVersion: record.SchemaVersion},
		Workspace: root, GenerationID: res.GenerationID, Manifest: corpus.GenerationRel(res.GenerationID),
		Tables: res.Tables, InputRunIDs: runIDs,
	}
	c := corpus.CommitRecord{
		Header:    record.Header{Record: record.KindCommit, SchemaVersion: record.SchemaVersion},
		Workspace: root, CommitID: res.CommitID, ParentCommitID: res.ParentID, GenerationID: res.GenerationID,
	}
	return g, c
}

// trialOf is the experiment placement of run m's measurements, or nil.
func trialOf(m *run.Manifest) *schema.Trial {
	if m.Trial == nil {
		return nil
	}
	return &schema.Trial{TrialID: m.Trial.TrialID, VariantID: m.Trial.VariantID, BlockID: m.Trial.BlockID, OrderInBlock: m.Trial.OrderInBlock}
}
