package integrity

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// Options bound a validation.
type Options struct {
	// MaxProblems is how many problems the result lists (default 100);
	// Total counts them all.
	MaxProblems int
	// MaxDependents is how many dependents each problem lists (default
	// 20); DependentsTotal counts them all.
	MaxDependents int
	// Workers is how many files full validation hashes at once (default
	// GOMAXPROCS).
	Workers int
}

const (
	defaultMaxProblems = 100
	maxDependents      = 20
)

// Validate checks ws at level and lists every problem it finds. It never
// takes the write lock: it holds the retention lock shared while it reads
// files, as every reader does, so garbage collection cannot move a file
// under it, and it reads HEAD once. An error is returned only when the
// validation itself could not run (cancelled, a lock timeout); a damaged
// workspace is a result with Valid false.
func Validate(ctx context.Context, ws *workspace.Workspace, level Level) (*IntegrityResult, error) {
	return ValidateWith(ctx, ws, level, Options{})
}

// ValidateWith is Validate with explicit bounds.
func ValidateWith(ctx context.Context, ws *workspace.Workspace, level Level, opts Options) (*IntegrityResult, error) {
	st, err := scan(ctx, ws, level, opts, false)
	if err != nil {
		return nil, err
	}
	return st.result(opts), nil
}

// objectInfo is what validation learned about one stored object.
type objectInfo struct {
	id      string
	rel     string // artifacts/sha256/ab/<hex>
	content artifact.Content
	payload string // absolute path, "" when unusable
	damaged string // the problem code, "" when intact so far
}

// state is one validation's findings, shared by Validate and Plan.
type state struct {
	root  string
	level Level
	col   collector
	res   *IntegrityResult

	head    *corpus.Commit
	gens    []*corpus.Generation
	badGens map[string][]string // generation id -> problem codes
	// damagedFiles are the evidence files a check found damaged.
	damagedFiles map[string]bool
	unreadable   map[string]bool // generations whose manifest cannot be read
	objects      map[string]*objectInfo
	// quarantined maps an artifact id to the quarantine entry holding it.
	quarantined map[string]string
	// interrupted are quarantine entries a crash left in state "moving".
	interrupted []interruption
	// superseded are replaced generations whose manifests remain.
	superseded []superseded
	// supersededBy maps a superseded generation to the one that replaced
	// it, for those whose files full validation found damaged.
	supersededBy map[string]string
	runs         map[string]*run.Manifest
	catalogBad   bool
	// deps maps "type:id" to the records that depend on it.
	deps map[string][]Ref
}

func key(typ, id string) string { return typ + ":" + id }

func (s *state) depend(typ, id string, on Ref) {
	k := key(typ, id)
	for _, r := range s.deps[k] {
		if r == on {
			return
		}
	}
	s.deps[k] = append(s.deps[k], on)
}

func (s *state) generationDamaged(id, code string) {
	for _, c := range s.badGens[id] {
		if c == code {
			return
		}
	}
	s.badGens[id] = append(s.badGens[id], code)
}

// result attaches dependents to every problem and bounds the list.
func (s *state) result(opts Options) *IntegrityResult {
	for i := range s.col.problems {
		p := &s.col.problems[i]
		if p.Subject == nil {
			continue
		}
		deps := mergeRefs(s.deps[key(p.Subject.Type, p.Subject.ID)])
		p.DependentsTotal = len(deps)
		maxDeps := opts.MaxDependents
		if maxDeps <= 0 {
			maxDeps = maxDependents
		}
		if len(deps) > maxDeps {
			deps = deps[:maxDeps]
		}
		p.Dependents = append([]Ref{}, deps...)
	}
	max := opts.MaxProblems
	if max == 0 {
		max = defaultMaxProblems
	}
	out := *s.res
	c := collector{problems: append([]Problem(nil), s.col.problems...)}
	c.finish(&out, max)
	return &out
}

// mergeRefs sorts refs and merges those naming the same record, joining
// their relations.
func mergeRefs(refs []Ref) []Ref {
	out := []Ref{}
	at := map[string]int{}
	for _, r := range refs {
		k := key(r.Type, r.ID)
		if i, ok := at[k]; ok {
			if r.Relation != "" && !strings.Contains(out[i].Relation, r.Relation) {
				if out[i].Relation != "" {
					out[i].Relation += ", "
				}
				out[i].Relation += r.Relation
			}
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Type != out[b].Type {
			return out[a].Type < out[b].Type
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// scan runs the checks of level. held says the caller already holds the
// write and retention locks (repair's apply); otherwise scan takes the
// retention lock shared.
func scan(ctx context.Context, ws *workspace.Workspace, level Level, opts Options, held bool) (*state, error) {
	if !held {
		release, err := ws.Locks().Lock(ctx, lock.Retention, true)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	s := &state{root: ws.Root, level: level,
		res:     &IntegrityResult{SchemaVersion: SchemaVersion, Level: level},
		badGens: map[string][]string{}, damagedFiles: map[string]bool{}, unreadable: map[string]bool{}, objects: map[string]*objectInfo{},
		quarantined: map[string]string{}, supersededBy: map[string]string{}, runs: map[string]*run.Manifest{}, deps: map[string][]Ref{}}
	s.checkCorpus()
	if err := ctx.Err(); err != nil {
		return nil, fault.Wrap(fault.ProcessCancelled, err, "validation cancelled")
	}
	s.readQuarantine()
	s.checkObjects()
	s.checkRuns()
	if level.rank() >= Standard.rank() {
		if err := s.checkReferences(ctx); err != nil {
			return nil, err
		}
		s.checkCatalog(ctx)
	}
	if level.rank() >= Full.rank() {
		if err := s.hashAll(ctx, opts.Workers); err != nil {
			return nil, err
		}
	}
	return s, nil
}

var repairFix = Remediation{Command: "flameox repair", MCPTool: "validate_workspace",
	Note: "repair is CLI-only: a person runs `flameox repair` to see the plan and `flameox repair --apply PLAN_DIGEST` to carry it out; validate_workspace re-checks afterwards"}

var backupFix = Remediation{Command: "flameox repair", MCPTool: "validate_workspace",
	Note: "nothing in the workspace can rebuild this file: `flameox repair` lists what is lost; restore the file from a backup"}

var recoverFix = Remediation{Command: "flameox recover", MCPTool: "validate_workspace",
	Note: "recover rebuilds run projections and logs from the revisions (CLI-only)"}

// checkCorpus checks HEAD, the commit history, and the generations HEAD
// pins: each manifest against its pinned digest, each file's presence and
// size.
func (s *state) checkCorpus() {
	id, err := corpus.HeadID(s.root)
	if err != nil {
		s.col.add(Problem{Severity: SeverityError, Code: CodeHeadInvalid, File: "corpus/HEAD", Message: fault.As(err).Message, Remediation: backupFix})
		return
	}
	s.res.CommitID = id
	head, err := corpus.Read(s.root, id)
	if err != nil {
		s.commitProblem(id, err)
		return
	}
	s.head = &head
	s.res.Checked.Commits++
	// The history: each ancestor must verify. A broken link stops the walk.
	seen := map[string]bool{id: true}
	for c := head; c.ParentCommitID != nil && *c.ParentCommitID != ""; {
		pid := *c.ParentCommitID
		if seen[pid] {
			s.col.add(Problem{Severity: SeverityError, Code: CodeCommitInvalid, File: rel(corpus.CommitPath(s.root, pid)),
				Subject: &Ref{Type: "commit", ID: pid}, Message: "the commit history loops back to " + pid, Remediation: backupFix})
			break
		}
		seen[pid] = true
		parent, err := corpus.Read(s.root, pid)
		if err != nil {
			if retention.CommitCollected(s.root, pid) && !exists(corpus.CommitPath(s.root, pid)) {
				break // gc collected it: the retained history ends here
			}
			s.commitProblem(pid, err)
			break
		}
		s.res.Checked.Commits++
		c = parent
	}
	for _, ref := range head.Generations {
		s.checkGeneration(ref)
	}
	s.findSuperseded()
}

// superseded is a generation a live one replaced whose manifest is still
// on disk: its files stay until retention removes them, reachable through
// the superseding manifest (docs/storage.md), so full validation hashes
// those that are there.
type superseded struct {
	gen *corpus.Generation
	by  string
}

// findSuperseded follows the live generations' supersedes lists through
// chains of compactions, each manifest verified against the digest the
// superseding publication's input commit pinned (as corpus.FindGeneration
// does). A manifest or commit retention already removed ends the chain.
func (s *state) findSuperseded() {
	seen := map[string]bool{}
	for _, g := range s.gens {
		seen[g.GenerationID] = true
	}
	queue := append([]*corpus.Generation(nil), s.gens...)
	for len(queue) > 0 {
		sup := queue[0]
		queue = queue[1:]
		if len(sup.Supersedes) == 0 {
			continue
		}
		c, err := corpus.Read(s.root, sup.InputCommitID)
		if err != nil {
			continue
		}
		refs := map[string]corpus.GenerationRef{}
		for _, r := range c.Generations {
			refs[r.GenerationID] = r
		}
		for _, id := range sup.Supersedes {
			ref, ok := refs[id]
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			old, err := corpus.ReadGeneration(s.root, ref, true)
			if err != nil {
				continue
			}
			s.superseded = append(s.superseded, superseded{gen: old, by: sup.GenerationID})
			queue = append(queue, old)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (s *state) commitProblem(id string, err error) {
	fe := fault.As(err)
	s.col.add(Problem{Severity: SeverityError, Code: CodeCommitInvalid, File: rel(corpus.CommitPath(s.root, id)),
		Subject: &Ref{Type: "commit", ID: id}, Message: fe.Message, Remediation: backupFix})
}

func rel(abs string) string {
	// Commit paths are built from the root; keep the workspace-relative tail.
	if i := strings.Index(abs, string(filepath.Separator)+"corpus"+string(filepath.Separator)); i >= 0 {
		return filepath.ToSlash(abs[i+1:])
	}
	return filepath.ToSlash(abs)
}

func (s *state) checkGeneration(ref corpus.GenerationRef) {
	subject := &Ref{Type: "generation", ID: ref.GenerationID}
	s.depend("generation", ref.GenerationID, Ref{Type: "commit", ID: s.res.CommitID, Relation: "inventory"})
	g, err := corpus.ReadGeneration(s.root, ref, true)
	if err != nil {
		s.unreadable[ref.GenerationID] = true
		p := Problem{Severity: SeverityError, File: ref.Manifest, Subject: subject, Remediation: backupFix}
		b, rerr := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(ref.Manifest)))
		switch {
		case errors.Is(rerr, fs.ErrNotExist):
			p.Code, p.Expected = CodeManifestMissing, ref.ManifestSHA256
			p.Message = fmt.Sprintf("the manifest of generation %s is missing; HEAD lists it", ref.GenerationID)
		case rerr == nil && digest.Bytes(b) != ref.ManifestSHA256:
			p.Code, p.Expected, p.Found = CodeManifestChanged, ref.ManifestSHA256, digest.Bytes(b)
			p.Message = fmt.Sprintf("the manifest of generation %s is not the one HEAD pinned", ref.GenerationID)
		default:
			p.Code, p.Message = CodeManifestInvalid, fault.As(err).Message
		}
		s.generationDamaged(ref.GenerationID, p.Code)
		s.col.add(p)
		return
	}
	s.gens = append(s.gens, g)
	s.res.Checked.Generations++
	for _, rid := range g.InputRunIDs {
		s.depend("generation", g.GenerationID, Ref{Type: "run", ID: rid, Relation: "rows"})
	}
	for _, aid := range g.InputArtifactIDs {
		s.depend("artifact", aid, Ref{Type: "generation", ID: g.GenerationID, Relation: "extracted_from"})
	}
	for _, f := range g.Files {
		s.res.Checked.ParquetFiles++
		abs := filepath.Join(s.root, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(abs)
		p := Problem{Severity: SeverityError, File: f.Path, Subject: subject, Expected: f.SHA256, Remediation: repairFix}
		switch {
		case err != nil:
			p.Code = CodeEvidenceMissing
			p.Message = fmt.Sprintf("%s (table %s, %d rows of generation %s) is missing", f.Path, f.Table, f.RowCount, g.GenerationID)
		case !fi.Mode().IsRegular():
			p.Code = CodeEvidenceUnreadable
			p.Message = fmt.Sprintf("%s is not a regular file (%s)", f.Path, fi.Mode().Type())
		case fi.Size() != f.ByteLength:
			p.Code = CodeEvidenceSize
			p.Expected, p.Found = fmt.Sprintf("%d bytes", f.ByteLength), fmt.Sprintf("%d bytes", fi.Size())
			p.ByteRange = &ByteRange{Start: min(fi.Size(), f.ByteLength), End: max(fi.Size(), f.ByteLength)}
			p.Message = fmt.Sprintf("%s (table %s) has %d bytes; its manifest records %d", f.Path, f.Table, fi.Size(), f.ByteLength)
		default:
			continue
		}
		s.addFileProblem(g.GenerationID, p)
	}
}

// readQuarantine lists the artifacts that repair set aside.
func (s *state) readQuarantine() {
	ents, err := os.ReadDir(filepath.Join(s.root, "quarantine"))
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "runs" {
			continue
		}
		m, err := retention.ReadQuarantineManifest(s.root, e.Name())
		if err != nil {
			continue
		}
		aid := m.ArtifactID()
		switch m.State {
		case retention.StateQuarantined:
			if aid != "" {
				s.quarantined[aid] = "quarantine/" + e.Name()
			}
		case retention.StateMoving:
			_, err := os.Lstat(filepath.Join(s.root, "quarantine", e.Name(), filepath.FromSlash(m.StoredPath)))
			in := interruption{id: e.Name(), entry: m, moved: err == nil}
			s.interrupted = append(s.interrupted, in)
			what := "it never moved"
			if in.moved {
				what = "it moved, the journal was not closed"
				if aid != "" {
					s.quarantined[aid] = "quarantine/" + e.Name()
				}
			}
			p := Problem{Severity: SeverityWarning, Code: CodeQuarantineInterrupted, File: "quarantine/" + e.Name(),
				Message: "a repair was interrupted while quarantining " + m.OriginalPath + ": " + what, Remediation: repairFix}
			if aid != "" {
				p.Subject = &Ref{Type: "artifact", ID: aid}
			}
			s.col.add(p)
		}
	}
}

// checkObjects reads every artifact.json and checks the payload's presence
// and length (full validation re-hashes it later).
func (s *state) checkObjects() {
	store := &artifact.Store{Root: s.root}
	shards, err := os.ReadDir(filepath.Join(s.root, "artifacts", "sha256"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.col.add(Problem{Severity: SeverityError, Code: CodeArtifactInvalid, File: "artifacts/sha256", Message: err.Error(), Remediation: backupFix})
		}
		return
	}
	var ids []string
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(s.root, "artifacts", "sha256", sh.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".tmp-") || !strings.HasPrefix(name, sh.Name()) {
				continue // an interrupted placement: retention's business
			}
			if id := "sha256:" + name; digest.Valid(id) {
				ids = append(ids, id)
			}
		}
	}
	// Objects are independent: stat them on every core, report in order.
	type outcome struct {
		c       artifact.Content
		payload string
		size    int64
		err     error
		sizeErr error
	}
	out := make([]outcome, len(ids))
	parallel(len(ids), 0, func(i int) {
		var o outcome
		o.c, o.payload, o.err = store.Stat(ids[i])
		if o.err == nil {
			fi, err := os.Stat(o.payload)
			o.sizeErr = err
			if err == nil {
				o.size = fi.Size()
			}
		}
		out[i] = o
	})
	for i, id := range ids {
		s.res.Checked.Artifacts++
		o := &objectInfo{id: id, rel: artifact.ObjectRel(id)}
		s.objects[id] = o
		subject := &Ref{Type: "artifact", ID: id}
		r := out[i]
		if r.err != nil {
			fe := fault.As(r.err)
			o.damaged = CodeArtifactInvalid
			file := o.rel + "/artifact.json"
			if strings.Contains(fe.Message, "payload") {
				o.damaged, file = CodeArtifactMissing, o.rel
			}
			s.col.add(Problem{Severity: SeverityError, Code: o.damaged, File: file, Subject: subject, Message: fe.Message, Remediation: repairFix})
			continue
		}
		c := r.c
		o.content, o.payload = c, r.payload
		if r.sizeErr != nil {
			continue
		}
		if r.size != c.ByteLength {
			o.damaged = CodeArtifactSize
			s.col.add(Problem{Severity: SeverityError, Code: CodeArtifactSize, File: o.rel + "/" + c.PayloadName, Subject: subject,
				Expected: fmt.Sprintf("%d bytes", c.ByteLength), Found: fmt.Sprintf("%d bytes", r.size),
				ByteRange: &ByteRange{Start: min(r.size, c.ByteLength), End: max(r.size, c.ByteLength)},
				Message:   fmt.Sprintf("the payload of %s has %d bytes; artifact.json records %d", id, r.size, c.ByteLength), Remediation: repairFix})
		}
	}
}

// checkRuns reads every run (projection or newest revision) and records
// its registrations as dependents of their artifacts.
func (s *state) checkRuns() {
	store := &run.Store{Root: s.root}
	ids, err := store.IDs()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.col.add(Problem{Severity: SeverityError, Code: CodeRunInvalid, File: "runs", Message: err.Error(), Remediation: recoverFix})
		}
		return
	}
	// Runs are independent: read them on every core, merge in id order.
	type outcome struct {
		m     *run.Manifest
		fixes []string
		err   error
	}
	out := make([]outcome, len(ids))
	inspect := s.level.rank() >= Standard.rank()
	parallel(len(ids), 0, func(i int) {
		var o outcome
		if inspect {
			// Standard: also whether the projection and log are behind
			// the revisions (what `flameox recover` would rebuild).
			o.m, o.fixes, o.err = store.Inspect(ids[i])
		} else {
			o.m, o.err = store.Get(ids[i])
		}
		out[i] = o
	})
	for i, id := range ids {
		s.res.Checked.Runs++
		m, fixes, err := out[i].m, out[i].fixes, out[i].err
		if err != nil {
			fe := fault.As(err)
			file := fe.Details["file"]
			if file == "" {
				file = "runs/" + id
			}
			s.col.add(Problem{Severity: SeverityError, Code: CodeRunInvalid, File: file, Subject: &Ref{Type: "run", ID: id}, Message: fe.Message, Remediation: recoverFix})
			continue
		}
		if len(fixes) > 0 {
			s.col.add(Problem{Severity: SeverityWarning, Code: CodeRunProjectionBehind, File: run.ManifestRel(id), Subject: &Ref{Type: "run", ID: id},
				Message: "derived files of the run are behind its revisions: " + strings.Join(fixes, "; "), Remediation: recoverFix})
		}
		s.runs[id] = m
		for _, r := range m.Artifacts {
			s.depend("artifact", r.ArtifactID, Ref{Type: "run", ID: id, Relation: "registers " + r.RegistrationID})
		}
	}
}

// parallel calls fn(0..n-1) on at most workers goroutines (default
// GOMAXPROCS).
func parallel(n, workers int, fn func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
