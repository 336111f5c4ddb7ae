package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/oplog"
	"github.com/flameox/flameox/pkg/workspace"
)

// The named steps of the commit protocol, in order. A crash at any of them
// before HeadReplaced leaves HEAD where it was and only invisible orphans
// behind; the crash-injection tests kill a publisher at each one.
const (
	StepStaged         = "publish.staged"
	StepManifestStaged = "publish.manifest_staged"
	StepLocked         = "publish.locked"
	StepFilesMoved     = "publish.files_moved"
	StepManifestMoved  = "publish.manifest_moved"
	StepCommitWritten  = "publish.commit_written"
	StepHeadReplaced   = "publish.head_replaced"
)

// Steps lists the protocol steps in order.
func Steps() []string {
	return []string{StepStaged, StepManifestStaged, StepLocked, StepFilesMoved, StepManifestMoved, StepCommitWritten, StepHeadReplaced}
}

// Meta describes a generation beyond its files.
type Meta struct {
	InputRunIDs      []string
	InputArtifactIDs []string
	Publisher        string
	PublisherVersion string
	// Supersedes lists generations this one replaces; they must be in the
	// inventory at commit time.
	Supersedes []string
	// Extractions is the provenance of extracted rows.
	Extractions []corpus.Extraction
	// Check, when set, runs under the write lock with the HEAD the new
	// commit will be based on, before any file moves: a publication whose
	// validity depends on what the corpus already holds (a compare-and-swap
	// on a revision, an id that must be new) refuses there, and no other
	// publisher can change that HEAD until this one is done.
	Check func(head corpus.Commit) error
}

// Committed is the outcome of a publication.
type Committed struct {
	Generation *corpus.Generation
	Commit     corpus.Commit
}

// Commit runs the commit protocol for a finished stage (SPEC §3): stage the
// manifest; take the write lock; read HEAD; move files and manifest to their
// final paths (an existing file must be byte-identical); write the new
// immutable commit; fsync; atomically replace corpus/HEAD as the last step.
// HEAD may have moved since the stage began: the new commit is based on the
// HEAD read under the lock, so concurrent publishers serialize without
// losing each other's generations.
func Commit(ctx context.Context, ws *workspace.Workspace, st *Stage, files []corpus.GenerationFile, meta Meta) (done *Committed, err error) {
	defer func() { logCommit(ws.Root, st.ID, meta, done, err) }()
	faultpoint.Hit(StepStaged)
	inputHead, err := corpus.HeadID(ws.Root)
	if err != nil {
		return nil, err
	}
	gen := &corpus.Generation{
		SchemaVersion: corpus.GenerationVersion, GenerationID: st.ID, CreatedAt: st.PublishedAt,
		InputCommitID: inputHead, InputRunIDs: sorted(meta.InputRunIDs), InputArtifactIDs: sorted(meta.InputArtifactIDs),
		Publisher: meta.Publisher, PublisherVersion: meta.PublisherVersion, Files: files, Supersedes: sorted(meta.Supersedes),
		Extractions: meta.Extractions,
	}
	if gen.Files == nil {
		gen.Files = []corpus.GenerationFile{}
	}
	manifest, err := durable.MarshalIndent(gen)
	if err != nil {
		return nil, err
	}
	stagedManifest := filepath.Join(st.Dir, "manifest.json")
	// Only the bytes need to be durable: the manifest's staging name never
	// has to survive a crash, and place syncs its final directory.
	if err := durable.WriteSynced(stagedManifest, manifest, 0o400); err != nil {
		return nil, err
	}
	faultpoint.Hit(StepManifestStaged)

	release, err := ws.Locks().Lock(ctx, lock.Write, false)
	if err != nil {
		return nil, err
	}
	defer release()
	faultpoint.Hit(StepLocked)
	head, err := corpus.Head(ws.Root)
	if err != nil {
		return nil, err
	}
	if meta.Check != nil {
		if err := meta.Check(head); err != nil {
			return nil, err
		}
	}
	inventory, err := nextInventory(head, meta.Supersedes)
	if err != nil {
		return nil, err
	}

	moves := make([]move, 0, len(files))
	for _, f := range files {
		moves = append(moves, move{filepath.Join(st.Dir, f.Table+".parquet"), filepath.Join(ws.Root, filepath.FromSlash(f.Path))})
	}
	if err := place(moves...); err != nil {
		return nil, err
	}
	faultpoint.Hit(StepFilesMoved)
	manifestRel := corpus.GenerationRel(st.ID)
	if err := place(move{stagedManifest, filepath.Join(ws.Root, filepath.FromSlash(manifestRel))}); err != nil {
		return nil, err
	}
	faultpoint.Hit(StepManifestMoved)

	inventory = append(inventory, corpus.GenerationRef{GenerationID: st.ID, Manifest: manifestRel, ManifestSHA256: digest.Bytes(manifest)})
	parent := head.CommitID
	c, err := corpus.NewCommit(&parent, inventory, st.PublishedAt)
	if err != nil {
		return nil, err
	}
	if err := corpus.WriteCommit(ws.Root, c); err != nil {
		return nil, err
	}
	faultpoint.Hit(StepCommitWritten)
	if err := corpus.SetHead(ws.Root, c.CommitID); err != nil {
		return nil, err
	}
	faultpoint.Hit(StepHeadReplaced)
	return &Committed{Generation: gen, Commit: c}, nil
}

// logCommit appends the publication to the operation log (pkg/oplog):
// ids only, and a failure's code. The log never fails a publication.
func logCommit(root, generationID string, meta Meta, c *Committed, err error) {
	ids := map[string][]string{"generation_id": {generationID}}
	if c != nil {
		ids["commit_id"] = []string{c.Commit.CommitID}
		if c.Commit.ParentCommitID != nil {
			ids["parent_commit_id"] = []string{*c.Commit.ParentCommitID}
		}
	}
	if len(meta.Supersedes) > 0 {
		ids["supersedes"] = meta.Supersedes
	}
	if len(meta.InputRunIDs) > 0 {
		ids["run_id"] = sorted(meta.InputRunIDs)
	}
	oplog.Record(root, "publish.commit", ids, err)
}

// FirstCommit writes the first, empty commit of a new workspace's corpus and
// points corpus/HEAD at it: the workspace.FirstCommit that workspace.Init
// calls, under the write lock, when HEAD does not exist yet. It returns the
// workspace-relative paths it created.
func FirstCommit(root string, now time.Time) ([]string, error) {
	return corpus.InitHead(root, now)
}

// nextInventory removes superseded generations from head's inventory; each
// must be present, or another publisher already replaced it.
func nextInventory(head corpus.Commit, supersedes []string) ([]corpus.GenerationRef, error) {
	drop := map[string]bool{}
	for _, id := range supersedes {
		drop[id] = true
	}
	var out []corpus.GenerationRef
	for _, g := range head.Generations {
		if drop[g.GenerationID] {
			delete(drop, g.GenerationID)
			continue
		}
		out = append(out, g)
	}
	if len(drop) > 0 {
		missing := make([]string, 0, len(drop))
		for id := range drop {
			missing = append(missing, id)
		}
		sort.Strings(missing)
		return nil, fault.New(fault.RevisionConflict, "generations %v are no longer in the corpus head; another publication superseded them", missing).Retry()
	}
	return out, nil
}

// move is one staged file and its final path.
type move struct{ src, dst string }

// place moves staged files to their final paths. A target that exists (a
// retried publication) must hold exactly the same bytes. Every file is
// linked first and the directories are synced afterwards, so one journal
// commit carries them all.
func place(moves ...move) error {
	var dirs []string
	var done []string
	for _, m := range moves {
		dir := filepath.Dir(m.dst)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		if _, err := os.Lstat(m.dst); err == nil {
			a, errA := os.ReadFile(m.src)
			b, errB := os.ReadFile(m.dst)
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				return fault.New(fault.ArtifactIntegrityFailed, "%s already exists with other content", m.dst).With("file", m.dst)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		} else if err := os.Link(m.src, m.dst); err != nil {
			return fmt.Errorf("place %s: %w", m.dst, err)
		}
		dirs = append(dirs, dir, filepath.Dir(dir))
		done = append(done, m.src)
	}
	if err := durable.SyncDirs(dirs...); err != nil {
		return err
	}
	for _, src := range done {
		if err := os.Remove(src); err != nil {
			return err
		}
	}
	return nil
}

func sorted(in []string) []string {
	out := append([]string{}, in...)
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[i-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}
