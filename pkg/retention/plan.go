package retention

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// SchemaVersion of plans, trash manifests and results.
const SchemaVersion = 1

// The kinds of item gc collects.
const (
	KindStaging    = "staging"           // staging/<name> whose owner is gone
	KindOrphan     = "orphan_generation" // a generation no commit or generation names
	KindSuperseded = "superseded_files"  // Parquet files of a superseded generation no kept commit lists
	KindArtifact   = "artifact"          // an object no run registers and nothing references
	KindTempObject = "incomplete_object" // artifacts/sha256/ab/.tmp-*: an object never placed
	KindCommit     = "commit"            // a commit beyond the kept history that nothing references
)

// Options override the configured policy for one plan.
type Options struct {
	// Now is the time the plan is made at (time.Now when zero).
	Now time.Time
	// MinAge: nothing younger is collected (retention.min_age_seconds
	// when nil); staging whose owner is provably gone is collected at any
	// age.
	MinAge *time.Duration
	// KeepCommits: HEAD and this many commits before it are roots
	// (retention.keep_commits when nil).
	KeepCommits *int
}

// Item is one thing gc would move to trash: what, where, how big, why.
type Item struct {
	Kind   string   `json:"kind"`
	ID     string   `json:"id"`
	Paths  []string `json:"paths"` // workspace-relative
	Bytes  int64    `json:"bytes"`
	Files  int      `json:"files"`
	Reason string   `json:"reason"`
}

// Roots summarises what the plan kept and why.
type Roots struct {
	HeadCommitID string `json:"head_commit_id"`
	// Commits are the root commits: HEAD, its kept history and every
	// commit an analysis, run set, comparison or finding names. Their
	// whole inventories are kept.
	Commits int `json:"commits"`
	// PinnedCommits are kept only for provenance: the input commits of
	// compactions, which `evidence get generation` reads to verify a
	// superseded manifest.
	PinnedCommits int `json:"pinned_commits"`
	// Generations whose files are kept; ManifestsOnly whose manifests are
	// kept (superseded: their rows live on in the superseding segment).
	Generations   int `json:"generations"`
	ManifestsOnly int `json:"manifests_only"`
	// Artifacts referenced: registered by a run, named by evidence or by a
	// kept generation's inputs.
	Artifacts int `json:"artifacts"`
	// ReferencedBy counts evidence references per owner type (analysis,
	// comparison, finding) and run sets, whose targets are roots.
	ReferencedBy map[string]int `json:"referenced_by"`
}

// KindTotal is the count and bytes of one kind.
type KindTotal struct {
	Items int   `json:"items"`
	Bytes int64 `json:"bytes"`
}

// Plan is gc's dry run: what no retention root reaches.
type Plan struct {
	SchemaVersion int                  `json:"schema_version"`
	PlanDigest    string               `json:"plan_digest"`
	CreatedAt     time.Time            `json:"created_at"`
	Cutoff        time.Time            `json:"cutoff"`
	KeepCommits   int                  `json:"keep_commits"`
	Roots         Roots                `json:"roots"`
	Items         []Item               `json:"items"`
	ByKind        map[string]KindTotal `json:"by_kind"`
	TotalBytes    int64                `json:"total_bytes"`
	// Interrupted names trash whose gc or restore stopped half-way; the
	// next gc --apply, restore or purge puts it back first.
	Interrupted []string `json:"interrupted"`
}

// lightGen is the part of a generation manifest the plan needs.
type lightGen struct {
	GenerationID     string      `json:"generation_id"`
	InputCommitID    string      `json:"input_commit_id"`
	InputArtifactIDs []string    `json:"input_artifact_ids"`
	Files            []lightFile `json:"files"`
	Supersedes       []string    `json:"supersedes"`
}

// lightFile is the part of a manifest's file the plan needs.
type lightFile struct {
	Table      string `json:"table"`
	ByteLength int64  `json:"byte_length"`
}

// supersededGen is what the plan needs of a manifest it keeps only for
// provenance: encoding/json skips the fields it does not name faster
// than it stores them, and a corpus holds one such manifest per capture.
type supersededGen struct {
	GenerationID  string      `json:"generation_id"`
	InputCommitID string      `json:"input_commit_id"`
	Files         []lightFile `json:"files"`
	Supersedes    []string    `json:"supersedes"`
}

func (o Options) resolve(ws *workspace.Workspace) (now time.Time, minAge time.Duration, keep int) {
	now = o.Now
	if now.IsZero() {
		now = time.Now()
	}
	minAge = ws.Config.Retention.MinAge()
	if o.MinAge != nil {
		minAge = *o.MinAge
	}
	keep = ws.Config.Retention.KeepCommits
	if o.KeepCommits != nil {
		keep = *o.KeepCommits
	}
	return now.UTC(), minAge, keep
}

// MakePlan computes gc's dry run. It only reads: no lock is taken, and a
// publication running meanwhile can only add roots, which Apply sees
// because it plans again under the write lock.
func MakePlan(ctx context.Context, ws *workspace.Workspace, opt Options) (*Plan, error) {
	now, minAge, keep := opt.resolve(ws)
	root := ws.Root
	// Every directory gc reads or moves from must be the workspace's own:
	// a symlinked one would lead outside it.
	for _, top := range []string{"staging", "generations", "evidence", "artifacts", "corpus", "runs", "quarantine", "trash"} {
		if fi, err := os.Lstat(filepath.Join(root, top)); err == nil && !fi.IsDir() {
			return nil, fault.New(fault.WorkspaceInvalid, "%s is not a directory (a symlink?); gc reads nothing through it", top).With("file", top).
				Fix("Replace " + top + " with the workspace's own directory; `flameox validate` checks the rest.")
		}
	}
	cutoff := now.Add(-minAge)
	p := &Plan{SchemaVersion: SchemaVersion, CreatedAt: now, Cutoff: cutoff, KeepCommits: keep,
		Items: []Item{}, ByKind: map[string]KindTotal{}, Interrupted: []string{}}
	head, err := corpus.Head(root)
	if err != nil {
		return nil, err
	}
	p.Roots.HeadCommitID = head.CommitID
	p.Roots.ReferencedBy = map[string]int{}

	// Root commits: HEAD and its history.
	rootCommits := map[string]lightCommit{head.CommitID: {ParentCommitID: head.ParentCommitID, Generations: head.Generations}}
	c := rootCommits[head.CommitID]
	for i := 1; i <= keep && c.ParentCommitID != nil; i++ {
		id := *c.ParentCommitID
		parent, err := readCommit(root, id)
		if errors.Is(err, fs.ErrNotExist) {
			break // an older commit already collected ends the history
		}
		if err != nil {
			return nil, err
		}
		rootCommits[id] = parent
		c = parent
	}

	// References from the corpus: evidence_refs (analyses, comparisons,
	// findings), the commits analyses and run sets were made at, and
	// every registration the corpus holds.
	snap, err := corpus.Open(root, head)
	if err != nil {
		return nil, err
	}
	refCommits, refGens, needArtifacts := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, f := range snap.Files[schema.EvidenceRefs.Name] {
		err := schema.Scan(ctx, schema.EvidenceRefs, f, []string{"owner_type", "ref_type", "ref_id"}, func(row []any) error {
			owner, _ := row[0].(string)
			typ, _ := row[1].(string)
			id, _ := row[2].(string)
			p.Roots.ReferencedBy[owner]++
			switch typ {
			case "commit":
				refCommits[id] = true
			case "generation":
				refGens[id] = true
			case "artifact":
				needArtifacts[id] = true
			}
			return nil
		})
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "read evidence references")
		}
	}
	for _, t := range []*schema.Table{schema.Analyses, schema.RunSets} {
		for _, f := range snap.Files[t.Name] {
			err := schema.Scan(ctx, t, f, []string{"corpus_commit_id"}, func(row []any) error {
				if id, ok := row[0].(string); ok {
					refCommits[id] = true
				}
				if t == schema.RunSets {
					p.Roots.ReferencedBy["run_set"]++
				}
				return nil
			})
			if err != nil {
				return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "read %s", t.Name)
			}
		}
	}
	for _, f := range snap.Files[schema.Artifacts.Name] {
		err := schema.Scan(ctx, schema.Artifacts, f, []string{"artifact_id"}, func(row []any) error {
			if id, ok := row[0].(string); ok {
				needArtifacts[id] = true
			}
			return nil
		})
		if err != nil {
			return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "read artifact registrations")
		}
	}
	for id := range refCommits {
		if _, ok := rootCommits[id]; ok || !digest.Valid(id) {
			continue
		}
		c, err := readCommit(root, id)
		if err == nil {
			rootCommits[id] = c
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	p.Roots.Commits = len(rootCommits)

	// Generations: every generation in a root commit, and every one
	// evidence names, is kept whole; generations they supersede (through
	// chains of compactions) keep their manifests, for provenance.
	full := map[string]*lightGen{}
	for _, rc := range rootCommits {
		for _, ref := range rc.Generations {
			if full[ref.GenerationID] == nil {
				refGens[ref.GenerationID] = true
			}
		}
	}
	for id := range refGens {
		full[id] = nil
	}
	ids := make([]string, 0, len(full))
	for id := range full {
		ids = append(ids, id)
	}
	for id, g := range readGens(root, ids, true) {
		full[id] = g
	}
	manifests := map[string]*lightGen{}
	for id, g := range full {
		manifests[id] = g
	}
	frontier := []string{}
	for _, g := range full {
		if g != nil {
			frontier = append(frontier, g.Supersedes...)
		}
	}
	for len(frontier) > 0 {
		var next []string
		var todo []string
		for _, id := range frontier {
			if _, seen := manifests[id]; !seen {
				manifests[id] = nil
				todo = append(todo, id)
			}
		}
		for id, g := range readGens(root, todo, false) {
			manifests[id] = g
			if g != nil {
				next = append(next, g.Supersedes...)
			}
		}
		frontier = next
	}
	pinned := map[string]bool{}
	for _, g := range manifests {
		if g == nil {
			continue
		}
		if len(g.Supersedes) > 0 && g.InputCommitID != "" {
			if _, ok := rootCommits[g.InputCommitID]; !ok {
				pinned[g.InputCommitID] = true
			}
		}
		if _, isFull := full[g.GenerationID]; isFull {
			for _, a := range g.InputArtifactIDs {
				needArtifacts[a] = true
			}
		}
	}
	p.Roots.PinnedCommits = len(pinned)
	p.Roots.Generations = len(full)
	p.Roots.ManifestsOnly = len(manifests) - len(full)

	if err := ctx.Err(); err != nil {
		return nil, fault.Wrap(fault.ProcessCancelled, err, "gc plan cancelled")
	}
	p.planGenerations(root, full, manifests, cutoff)
	if err := p.planArtifacts(ctx, snap, needArtifacts, cutoff); err != nil {
		return nil, err
	}
	p.Roots.Artifacts = len(needArtifacts)
	p.planCommits(root, rootCommits, pinned, cutoff)
	p.planStaging(root, cutoff)
	p.Interrupted = interrupted(root)

	sort.Slice(p.Items, func(i, j int) bool {
		if p.Items[i].Kind != p.Items[j].Kind {
			return p.Items[i].Kind < p.Items[j].Kind
		}
		return p.Items[i].ID < p.Items[j].ID
	})
	for _, it := range p.Items {
		k := p.ByKind[it.Kind]
		k.Items++
		k.Bytes += it.Bytes
		p.ByKind[it.Kind] = k
		p.TotalBytes += it.Bytes
	}
	// The digest only has to tell two plans apart: JSON of structs in a
	// sorted slice is deterministic, and canonicalising (RFC 8785) a plan
	// of a hundred thousand items would cost more than making it.
	b, err := json.Marshal(struct {
		Head  string `json:"head"`
		Items []Item `json:"items"`
	}{head.CommitID, p.Items})
	if err != nil {
		return nil, err
	}
	p.PlanDigest = digest.Bytes(b)
	return p, nil
}

// lightCommit is the part of a commit the plan needs.
type lightCommit struct {
	ParentCommitID *string                `json:"parent_commit_id"`
	Generations    []corpus.GenerationRef `json:"generations"`
}

// readCommit reads what a root commit names without verifying its
// digests (validation does that): a damaged root can only keep more. A
// commit that is missing (collected earlier) is fs.ErrNotExist; one that
// does not parse stops the plan, since what it would keep is unknown.
func readCommit(root, id string) (lightCommit, error) {
	var c lightCommit
	if !digest.Valid(id) {
		return c, fault.New(fault.WorkspaceInvalid, "%q is not a commit id", id)
	}
	b, err := os.ReadFile(corpus.CommitPath(root, id))
	if errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return c, fault.Wrap(fault.WorkspaceInvalid, err, "read commit %s", id).With("file", "corpus/commits/"+strings.TrimPrefix(id, "sha256:")+".json").
			Fix("Run `flameox validate` and repair the workspace before collecting garbage.")
	}
	return c, nil
}

// readGens reads the manifests of ids in parallel (full: with the input
// artifacts, which only kept generations need); a missing or damaged
// one maps to nil (referenced all the same: validation reports damage).
func readGens(root string, ids []string, full bool) map[string]*lightGen {
	out := make(map[string]*lightGen, len(ids))
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), 8)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				var g *lightGen
				if validGenID(id) {
					if b, err := os.ReadFile(filepath.Join(root, "generations", id, "manifest.json")); err == nil {
						var lg lightGen
						var err error
						if full {
							err = json.Unmarshal(b, &lg)
						} else {
							var sg supersededGen
							err = json.Unmarshal(b, &sg)
							lg = lightGen{GenerationID: sg.GenerationID, InputCommitID: sg.InputCommitID, Files: sg.Files, Supersedes: sg.Supersedes}
						}
						if err == nil && lg.GenerationID == id {
							g = &lg
						}
					}
				}
				mu.Lock()
				out[id] = g
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	return out
}

// planGenerations lists orphaned generations (no kept commit or
// generation names them) and the files of superseded generations that no
// root needs.
func (p *Plan) planGenerations(root string, full, manifests map[string]*lightGen, cutoff time.Time) {
	orphans := map[string]*Item{}
	superseded := map[string]*Item{}
	ents, _ := os.ReadDir(filepath.Join(root, "generations"))
	for _, e := range ents {
		id := e.Name()
		if _, ok := manifests[id]; ok || !e.IsDir() || !validGenID(id) || !olderThan(e, cutoff) {
			continue
		}
		it := &Item{Kind: KindOrphan, ID: id, Reason: "no kept commit lists it and no kept generation supersedes it (a publication that stopped before HEAD moved)"}
		it.add(root, "generations/"+id)
		orphans[id] = it
	}
	tables, _ := os.ReadDir(filepath.Join(root, "evidence"))
	for _, t := range tables {
		if !t.IsDir() {
			continue
		}
		dirs, _ := os.ReadDir(filepath.Join(root, "evidence", t.Name()))
		for _, d := range dirs {
			id, ok := strings.CutPrefix(d.Name(), "generation=")
			if !ok || !d.IsDir() || !validGenID(id) {
				continue
			}
			rel := "evidence/" + t.Name() + "/" + d.Name()
			if _, keep := full[id]; keep {
				continue
			}
			if g, known := manifests[id]; known {
				if g == nil {
					continue // a damaged manifest: keep its files, validation reports it
				}
				it := superseded[id]
				if it == nil {
					it = &Item{Kind: KindSuperseded, ID: id, Reason: "superseded (its rows live on in the generation that replaced it); no kept commit lists it; its manifest stays for provenance"}
					superseded[id] = it
				}
				it.addFiles(rel, g, t.Name())
				continue
			}
			if !olderThan(d, cutoff) {
				continue
			}
			it := orphans[id]
			if it == nil {
				it = &Item{Kind: KindOrphan, ID: id, Reason: "no kept commit lists it and no kept generation supersedes it (a publication that stopped before HEAD moved)"}
				orphans[id] = it
			}
			it.add(root, rel)
		}
	}
	for _, m := range []map[string]*Item{orphans, superseded} {
		for _, it := range m {
			sort.Strings(it.Paths)
			p.Items = append(p.Items, *it)
		}
	}
}

// addFiles adds a superseded generation's table directory, sized from its
// manifest (no file reads: a corpus holds many of them).
func (it *Item) addFiles(rel string, g *lightGen, table string) {
	it.Paths = append(it.Paths, rel)
	for _, f := range g.Files {
		if f.Table == table {
			it.Bytes += f.ByteLength
			it.Files++
		}
	}
}

// planArtifacts lists objects nothing needs. The corpus's registrations
// explain almost every object; only for the rest are run directories read
// (for any artifact id their files mention): every run the corpus does
// not hold, or holds at a revision whose capture was still open (a later
// revision may register more), and every quarantined run directory. A
// run the corpus holds with a finished capture registers nothing new.
func (p *Plan) planArtifacts(ctx context.Context, snap *corpus.Snapshot, need map[string]bool, cutoff time.Time) error {
	root := snap.Root
	type cand struct {
		id, rel string
	}
	var pending []cand
	base := filepath.Join(root, "artifacts", "sha256")
	shards, _ := os.ReadDir(base)
	for _, s := range shards {
		if !s.IsDir() || len(s.Name()) != 2 {
			continue
		}
		objs, _ := os.ReadDir(filepath.Join(base, s.Name()))
		for _, o := range objs {
			rel := "artifacts/sha256/" + s.Name() + "/" + o.Name()
			if strings.HasPrefix(o.Name(), ".tmp-") {
				if olderThan(o, cutoff) {
					it := Item{Kind: KindTempObject, ID: o.Name(), Reason: "an object directory never placed (an import that stopped while placing)"}
					it.add(root, rel)
					p.Items = append(p.Items, it)
				}
				continue
			}
			if !o.IsDir() || !(len(o.Name()) == 64 && allHex([]byte(o.Name()))) || !strings.HasPrefix(o.Name(), s.Name()) {
				continue
			}
			id := "sha256:" + o.Name()
			if !need[id] && olderThan(o, cutoff) {
				pending = append(pending, cand{id, rel})
			}
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// Runs whose newest published revision has a finished capture.
	type pub struct {
		rev    int32
		closed bool
	}
	published := map[string]pub{}
	for _, f := range snap.Files[schema.Runs.Name] {
		err := schema.Scan(ctx, schema.Runs, f, []string{"run_id", "revision", "capture_status"}, func(row []any) error {
			id, _ := row[0].(string)
			rev, _ := row[1].(int32)
			cs, _ := row[2].(string)
			if old, ok := published[id]; !ok || rev >= old.rev {
				published[id] = pub{rev, cs != run.CapturePending && cs != run.CaptureRunning}
			}
			return nil
		})
		if err != nil {
			return fault.Wrap(fault.ArtifactIntegrityFailed, err, "read published runs")
		}
	}
	mentioned := map[string]bool{}
	read := func(dir string) error {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".json") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			artifactIDs(b, mentioned)
			return nil
		})
		if err != nil {
			// Never collect an artifact a run we could not read might register.
			return fault.Wrap(fault.WorkspaceInvalid, err, "read the runs that may register artifacts")
		}
		return nil
	}
	runs, err := os.ReadDir(filepath.Join(root, "runs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fault.Wrap(fault.WorkspaceInvalid, err, "list runs")
	}
	for _, e := range runs {
		if pb, ok := published[e.Name()]; ok && pb.closed {
			continue
		}
		if err := read(filepath.Join(root, "runs", e.Name())); err != nil {
			return err
		}
	}
	if err := read(filepath.Join(root, "quarantine", "runs")); err != nil {
		return err
	}
	for _, c := range pending {
		if mentioned[c.id] {
			need[c.id] = true
			continue
		}
		it := Item{Kind: KindArtifact, ID: c.id, Reason: "no run registers it and no evidence names it"}
		it.add(root, c.rel)
		p.Items = append(p.Items, it)
	}
	return nil
}

// artifactIDs adds every "sha256:<64 lowercase hex>" in b to out.
func artifactIDs(b []byte, out map[string]bool) {
	const prefix = "sha256:"
	for {
		i := bytes.Index(b, []byte(prefix))
		if i < 0 {
			return
		}
		b = b[i+len(prefix):]
		if len(b) >= 64 && allHex(b[:64]) && (len(b) == 64 || !isHex(b[64])) {
			out[prefix+string(b[:64])] = true
			b = b[64:]
		}
	}
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

// validGenID is what a generation id may be (a UUID today): letters,
// digits, '-' and '_', at most 128, never a path. A hand-written check:
// the plan runs it on every entry of several large directories.
func validGenID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || (i > 0 && (c == '-' || c == '_'))
		if !ok {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// planCommits lists commits beyond the kept history that nothing names.
func (p *Plan) planCommits(root string, roots map[string]lightCommit, pinned map[string]bool, cutoff time.Time) {
	ents, _ := os.ReadDir(filepath.Join(root, "corpus", "commits"))
	for _, e := range ents {
		hex, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !(len(hex) == 64 && allHex([]byte(hex))) || !e.Type().IsRegular() {
			continue
		}
		id := "sha256:" + hex
		if _, ok := roots[id]; ok || pinned[id] {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.ModTime().After(cutoff) {
			continue
		}
		p.Items = append(p.Items, Item{Kind: KindCommit, ID: id, Paths: []string{"corpus/commits/" + e.Name()}, Bytes: fi.Size(), Files: 1,
			Reason: "older than the kept history (retention.keep_commits) and no analysis, run set, comparison, finding or compaction names it"})
	}
}

// planStaging lists staging directories whose owner is provably gone, or
// that have no readable owner and are older than the cutoff.
func (p *Plan) planStaging(root string, cutoff time.Time) {
	ents, _ := os.ReadDir(filepath.Join(root, "staging"))
	for _, e := range ents {
		if e.Name() == "duckdb-temp" || !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, "staging", e.Name())
		reason := ""
		b, err := os.ReadFile(filepath.Join(dir, artifact.StagingOwner))
		var o lease.Owner
		switch {
		case err == nil && json.Unmarshal(b, &o) == nil:
			if o.Check() == lease.Gone {
				reason = "its owner process is gone (a capture, import or publication that stopped)"
			}
		case olderThan(e, cutoff):
			reason = "it has no readable owner and is older than retention.min_age_seconds"
		}
		if reason == "" {
			continue
		}
		it := Item{Kind: KindStaging, ID: e.Name(), Reason: reason}
		it.add(root, "staging/"+e.Name())
		p.Items = append(p.Items, it)
	}
}

// add adds a workspace-relative path and counts its regular files.
func (it *Item) add(root, rel string) {
	it.Paths = append(it.Paths, rel)
	filepath.WalkDir(filepath.Join(root, filepath.FromSlash(rel)), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				it.Bytes += fi.Size()
				it.Files++
			}
		}
		return nil
	})
}

func olderThan(e fs.DirEntry, cutoff time.Time) bool {
	fi, err := e.Info()
	return err == nil && !fi.ModTime().After(cutoff)
}
