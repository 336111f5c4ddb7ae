package integrity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/oplog"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/workspace"
)

// Action kinds of a repair plan.
const (
	ActionResumeQuarantine     = "resume_quarantine"
	ActionQuarantineArtifact   = "quarantine_artifact"
	ActionQuarantineFile       = "quarantine_superseded_file"
	ActionRepublishGeneration  = "republish_generation"
	ActionRebuildCatalog       = "rebuild_catalog"
	republishedTablesSentence  = "nothing: the rows are extracted again from the runs' intact native artifacts into a generation that supersedes this one; its damaged files then move to quarantine/"
	rebuildCatalogLossSentence = "nothing: catalog.duckdb is derived from the corpus"
)

// Action is one step of a repair plan.
type Action struct {
	Kind   string `json:"kind"`
	Target Ref    `json:"target"`
	// Because lists the problem codes the action answers.
	Because []string `json:"because"`
	// Files are the damaged files the action concerns.
	Files []string `json:"files"`
	// Runs are the runs a republication extracts again, or the runs whose
	// registrations of a quarantined artifact are kept.
	Runs  []string `json:"runs"`
	Does  string   `json:"does"`
	Loses string   `json:"loses"`
}

// Unresolved is a problem no action answers, and what that costs.
type Unresolved struct {
	Code    string `json:"code"`
	File    string `json:"file,omitempty"`
	Subject *Ref   `json:"subject,omitempty"`
	Message string `json:"message"`
	Why     string `json:"why"`
	Loses   string `json:"loses"`
}

// RepairPlan is what `flameox repair` prints: what is broken, what each
// action would do and what would be lost, under a digest that
// `flameox repair --apply PLAN_DIGEST` must name.
type RepairPlan struct {
	SchemaVersion int    `json:"schema_version"`
	CommitID      string `json:"corpus_commit_id"`
	// PlanDigest is pkg/digest's canonical-JSON digest of the plan without
	// this field and Apply.
	PlanDigest string       `json:"plan_digest"`
	Intact     bool         `json:"intact"`
	Actions    []Action     `json:"actions"`
	Unresolved []Unresolved `json:"unresolved"`
	// Apply is the command that carries the plan out ("" when there is
	// nothing to do).
	Apply string `json:"apply,omitempty"`
}

func (p *RepairPlan) computeDigest() (string, error) {
	return digest.Of(map[string]any{"schema_version": p.SchemaVersion, "corpus_commit_id": p.CommitID,
		"intact": p.Intact, "actions": p.Actions, "unresolved": p.Unresolved})
}

// derivedTables are the tables a run publication writes from a run's
// manifest and its artifacts: a generation holding only these can be
// published again from the runs.
var derivedTables = map[string]bool{"runs": true, "artifacts": true, "environments": true, "source_states": true,
	"measurements": true, "frames": true, "frame_measurements": true, "call_edges": true, "stacks": true, "observations": true}

// Plan validates ws fully and plans the repair of what it finds.
func Plan(ctx context.Context, ws *workspace.Workspace) (*RepairPlan, error) {
	st, err := scan(ctx, ws, Full, Options{}, false)
	if err != nil {
		return nil, err
	}
	return st.plan()
}

func (s *state) plan() (*RepairPlan, error) {
	p := &RepairPlan{SchemaVersion: SchemaVersion, CommitID: s.res.CommitID, Actions: []Action{}, Unresolved: []Unresolved{}}
	res := s.result(Options{MaxProblems: -1})
	handled := map[int]bool{}
	// 0. Finish or withdraw quarantines a crash interrupted.
	for _, in := range s.interrupted {
		a := Action{Kind: ActionResumeQuarantine, Target: Ref{Type: "quarantine", ID: in.id}, Because: []string{CodeQuarantineInterrupted},
			Files: []string{"quarantine/" + in.id}, Runs: s.registeredBy(in.entry.ArtifactID()), Loses: "nothing"}
		if in.moved {
			a.Does = "close the journal of quarantine/" + in.id + ": " + in.entry.OriginalPath + " was moved there"
		} else {
			a.Does = "withdraw quarantine/" + in.id + ": " + in.entry.OriginalPath + " never moved (only the entry's manifest is removed)"
		}
		p.Actions = append(p.Actions, a)
	}
	for i, pr := range res.Problems {
		if pr.Code == CodeQuarantineInterrupted {
			handled[i] = true
		}
	}
	// 1. Quarantine damaged objects, keeping their registrations.
	for _, id := range sortedKeys(s.objects) {
		o := s.objects[id]
		if o.damaged == "" {
			continue
		}
		var files []string
		var because []string
		for i, pr := range res.Problems {
			if pr.Subject != nil && pr.Subject.Type == "artifact" && pr.Subject.ID == id && pr.Severity == SeverityError && pr.Code != CodeDanglingReference {
				handled[i] = true
				files = appendUnique(files, pr.File)
				because = appendUnique(because, pr.Code)
			}
		}
		runs := s.registeredBy(id)
		p.Actions = append(p.Actions, Action{Kind: ActionQuarantineArtifact, Target: Ref{Type: "artifact", ID: id}, Because: because, Files: files, Runs: runs,
			Does:  fmt.Sprintf("move %s to quarantine/ with a manifest; the %d run(s) registering it keep their registrations", o.rel, len(runs)),
			Loses: "the damaged bytes leave the store; re-extracting or opening those runs' copy needs the original file again (re-import it)"})
	}
	// 1b. Set aside damaged files of superseded generations: no reader
	// reads them, their rows live in the generation that replaced them.
	for i, pr := range res.Problems {
		if pr.Subject == nil || pr.Subject.Type != "generation" || s.supersededBy[pr.Subject.ID] == "" || pr.Severity != SeverityError {
			continue
		}
		handled[i] = true
		p.Actions = append(p.Actions, Action{Kind: ActionQuarantineFile, Target: Ref{Type: "file", ID: pr.File}, Because: []string{pr.Code},
			Files: []string{pr.File}, Runs: []string{},
			Does:  fmt.Sprintf("move %s to quarantine/ with a manifest: generation %s was superseded by %s", pr.File, pr.Subject.ID, s.supersededBy[pr.Subject.ID]),
			Loses: "nothing: the superseding generation holds these rows; only `flameox evidence get generation` of the old generation loses the file"})
	}
	// 2. Republish damaged generations from intact native artifacts.
	for _, g := range s.gens {
		codes := s.badGens[g.GenerationID]
		if len(codes) == 0 {
			continue
		}
		var files []string
		var idx []int
		for i, pr := range res.Problems {
			if pr.Subject != nil && pr.Subject.Type == "generation" && pr.Subject.ID == g.GenerationID && pr.Severity == SeverityError {
				idx = append(idx, i)
				files = appendUnique(files, pr.File)
			}
		}
		why := s.republishable(g)
		if why != "" {
			continue // reported as unresolved below
		}
		for _, i := range idx {
			handled[i] = true
		}
		p.Actions = append(p.Actions, Action{Kind: ActionRepublishGeneration, Target: Ref{Type: "generation", ID: g.GenerationID},
			Because: sortedCopy(codes), Files: files, Runs: sortedCopy(g.InputRunIDs),
			Does:  fmt.Sprintf("publish the %d run(s) of generation %s again from their native artifacts, superseding it", len(g.InputRunIDs), g.GenerationID),
			Loses: republishedTablesSentence})
	}
	// 3. Rebuild the catalog when it is stale or invalid, or after a
	// republication moves HEAD.
	needCatalog := s.catalogBad
	for _, a := range p.Actions {
		if a.Kind == ActionRepublishGeneration {
			needCatalog = true
		}
	}
	for i, pr := range res.Problems {
		if pr.Code == CodeCatalogStale || pr.Code == CodeCatalogInvalid {
			handled[i] = true
		}
	}
	if needCatalog && s.head != nil {
		p.Actions = append(p.Actions, Action{Kind: ActionRebuildCatalog, Target: Ref{Type: "file", ID: catalog.FileName}, Because: s.catalogCodes(res),
			Files: []string{catalog.FileName}, Runs: []string{}, Does: "rebuild catalog.duckdb at HEAD", Loses: rebuildCatalogLossSentence})
	}
	// Everything else is unresolved, with what it costs.
	for i, pr := range res.Problems {
		if handled[i] || pr.Code == CodeArtifactQuarantined {
			continue
		}
		u := Unresolved{Code: pr.Code, File: pr.File, Subject: pr.Subject, Message: pr.Message}
		switch {
		case pr.Code == CodeRunInvalid || pr.Code == CodeRunProjectionBehind:
			u.Why, u.Loses = "runs are recovered, not repaired: `flameox recover` rebuilds projections and quarantines unreadable runs", "nothing until recover runs"
		case pr.Subject != nil && pr.Subject.Type == "generation" && s.badGens[pr.Subject.ID] != nil && !s.unreadable[pr.Subject.ID]:
			g := s.generation(pr.Subject.ID)
			u.Why = s.republishable(g)
			u.Loses = lostRows(g, pr.File)
		case pr.Code == CodeManifestMissing || pr.Code == CodeManifestChanged || pr.Code == CodeManifestInvalid:
			u.Why = "the manifest is what says which files and rows the generation holds; no copy of it exists in the workspace"
			u.Loses = "every row of generation " + pr.Subject.ID + " unless the manifest is restored from a backup"
		case pr.Code == CodeDanglingReference:
			u.Why = "the referenced record is gone; nothing in the workspace holds it"
			u.Loses = "the reference stays unresolvable: restore the referenced record from a backup"
		default:
			u.Why = "no automatic repair exists for this problem"
			u.Loses = "restore the file from a backup"
		}
		p.Unresolved = append(p.Unresolved, u)
	}
	p.Intact = len(p.Actions) == 0 && len(p.Unresolved) == 0
	d, err := p.computeDigest()
	if err != nil {
		return nil, err
	}
	p.PlanDigest = d
	if len(p.Actions) > 0 {
		p.Apply = "flameox repair --apply " + d
	}
	return p, nil
}

func (s *state) catalogCodes(res *IntegrityResult) []string {
	var out []string
	for _, pr := range res.Problems {
		if pr.Code == CodeCatalogStale || pr.Code == CodeCatalogInvalid {
			out = appendUnique(out, pr.Code)
		}
	}
	if out == nil {
		out = []string{"HEAD_MOVED_BY_REPAIR"}
	}
	return out
}

func (s *state) generation(id string) *corpus.Generation {
	for _, g := range s.gens {
		if g.GenerationID == id {
			return g
		}
	}
	return nil
}

// republishable returns "" when generation g can be published again from
// its runs, else why not.
func (s *state) republishable(g *corpus.Generation) string {
	if g == nil {
		return "the generation's manifest cannot be read"
	}
	if g.Publisher != publish.Name || len(g.InputRunIDs) == 0 {
		return fmt.Sprintf("generation %s was published by %q, not from runs: its rows (compacted segments, analyses, findings, investigations) have no native artifact to be extracted from", g.GenerationID, g.Publisher)
	}
	for _, f := range g.Files {
		if !derivedTables[f.Table] {
			return fmt.Sprintf("generation %s holds table %s, which is not extracted from artifacts", g.GenerationID, f.Table)
		}
	}
	for _, id := range g.InputRunIDs {
		if _, ok := s.runs[id]; !ok {
			return fmt.Sprintf("run %s of generation %s cannot be read", id, g.GenerationID)
		}
	}
	for _, id := range g.InputArtifactIDs {
		o, ok := s.objects[id]
		if !ok || o.damaged != "" {
			return fmt.Sprintf("artifact %s that generation %s was extracted from is damaged or missing", id, g.GenerationID)
		}
	}
	return ""
}

func lostRows(g *corpus.Generation, file string) string {
	if g == nil {
		return "the rows of " + file
	}
	for _, f := range g.Files {
		if f.Path == file {
			return fmt.Sprintf("the %d row(s) of table %s in generation %s unless %s is restored from a backup", f.RowCount, f.Table, g.GenerationID, file)
		}
	}
	return "the rows of " + file
}

// registeredBy lists the runs that register artifact id.
func (s *state) registeredBy(id string) []string {
	var out []string
	for _, rid := range sortedKeys(s.runs) {
		for _, r := range s.runs[rid].Artifacts {
			if r.ArtifactID == id {
				out = appendUnique(out, rid)
			}
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// AppliedAction is the outcome of one action.
type AppliedAction struct {
	Kind   string `json:"kind"`
	Target Ref    `json:"target"`
	// Quarantine is the entry a quarantined artifact moved to.
	Quarantine string `json:"quarantine,omitempty"`
	// GenerationID and CommitID are a republication's.
	GenerationID string `json:"generation_id,omitempty"`
	CommitID     string `json:"commit_id,omitempty"`
}

// ApplyResult is what `flameox repair --apply` did.
type ApplyResult struct {
	SchemaVersion int             `json:"schema_version"`
	PlanDigest    string          `json:"plan_digest"`
	Applied       []AppliedAction `json:"applied"`
	// CommitID is HEAD after the repair.
	CommitID   string `json:"corpus_commit_id"`
	Unresolved int    `json:"unresolved"`
}

// Apply carries out the plan whose digest is planDigest, and nothing
// else. Under the write lock and the retention lock it validates fully
// again and recomputes the plan; a different digest (the workspace changed,
// or the digest is another plan's) refuses with REVISION_CONFLICT and
// changes nothing. It then quarantines the damaged artifacts, releases the
// locks, and republishes each damaged generation through pub (the commit
// protocol takes the write lock again and checks that HEAD is still the
// one the plan saw, or the one the previous republication made), and
// finally rebuilds the catalog.
func Apply(ctx context.Context, ws *workspace.Workspace, planDigest string, pub *publish.Publisher) (out *ApplyResult, err error) {
	// The operation log (.diagnostics/operations.jsonl) gets one line:
	// the plan and what was done, or why it was refused.
	defer func() {
		ids := map[string][]string{"plan_digest": {"invalid"}}
		if digest.Valid(planDigest) {
			ids["plan_digest"] = []string{planDigest}
		}
		if out != nil {
			for _, a := range out.Applied {
				ids[a.Kind] = append(ids[a.Kind], a.Target.ID)
			}
			if out.CommitID != "" {
				ids["commit_id"] = []string{out.CommitID}
			}
		}
		oplog.Record(ws.Root, "repair.apply", ids, err)
	}()
	if !digest.Valid(planDigest) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a plan digest (sha256:<64 hex>)", planDigest).
			Fix("Run `flameox repair` and pass the plan_digest it prints to --apply.")
	}
	locks := ws.Locks()
	releaseW, err := locks.Lock(ctx, lock.Write, false)
	if err != nil {
		return nil, err
	}
	releaseR, err := locks.Lock(ctx, lock.Retention, false)
	if err != nil {
		releaseW()
		return nil, err
	}
	unlock := func() {
		if releaseR != nil {
			releaseR()
			releaseW()
			releaseR, releaseW = nil, nil
		}
	}
	defer unlock()
	st, err := scan(ctx, ws, Full, Options{}, true)
	if err != nil {
		return nil, err
	}
	plan, err := st.plan()
	if err != nil {
		return nil, err
	}
	if plan.PlanDigest != planDigest {
		return nil, fault.New(fault.RevisionConflict, "repair plan %s is not the plan for the workspace as it is now (%s): it changed since the plan was made, or the digest names another plan; nothing was changed", planDigest, plan.PlanDigest).
			With("plan_digest", planDigest).With("current_plan_digest", plan.PlanDigest).
			Fix("Run `flameox repair` again, read the plan, and pass its plan_digest to `flameox repair --apply`.")
	}
	out = &ApplyResult{SchemaVersion: SchemaVersion, PlanDigest: planDigest, Applied: []AppliedAction{}, CommitID: plan.CommitID, Unresolved: len(plan.Unresolved)}
	now := time.Now().UTC()
	for _, in := range st.interrupted {
		if err := retention.ResumeQuarantine(ws.Root, in.id, in.entry, in.moved); err != nil {
			return out, err
		}
		out.Applied = append(out.Applied, AppliedAction{Kind: ActionResumeQuarantine, Target: Ref{Type: "quarantine", ID: in.id}, Quarantine: "quarantine/" + in.id})
	}
	for _, a := range plan.Actions {
		if a.Kind != ActionQuarantineArtifact {
			continue
		}
		reason := strings.Join(a.Because, ", ") + ": the payload no longer matches " + a.Target.ID
		for _, pr := range st.col.problems {
			if pr.Code == CodeArtifactDigest && pr.Subject != nil && pr.Subject.ID == a.Target.ID {
				reason += " (it hashes to " + pr.Found + ")"
			}
		}
		reason += fmt.Sprintf("; the registrations of %d run(s) are kept", len(a.Runs))
		qid, err := retention.SetAside(ctx, ws.Root, artifact.ObjectRel(a.Target.ID), "repair:"+planDigest, reason, now)
		if err != nil {
			return out, err
		}
		out.Applied = append(out.Applied, AppliedAction{Kind: a.Kind, Target: a.Target, Quarantine: qid})
	}
	for _, a := range plan.Actions {
		if a.Kind != ActionQuarantineFile {
			continue
		}
		qid, err := retention.SetAside(ctx, ws.Root, a.Target.ID, "repair:"+planDigest, strings.Join(a.Because, ", ")+": "+a.Does, now)
		if err != nil {
			return out, err
		}
		out.Applied = append(out.Applied, AppliedAction{Kind: a.Kind, Target: a.Target, Quarantine: qid})
	}
	unlock()
	faultpoint.Hit(StepQuarantined)
	expect := plan.CommitID
	for _, a := range plan.Actions {
		if a.Kind != ActionRepublishGeneration {
			continue
		}
		refs := make([]publish.RunRef, 0, len(a.Runs))
		for _, id := range a.Runs {
			refs = append(refs, publish.RunRef{RunID: id, Revision: st.runs[id].Revision})
		}
		want := expect
		res, err := pub.Republish(ctx, refs, []string{a.Target.ID}, func(head corpus.Commit) error {
			if head.CommitID != want {
				return fault.New(fault.RevisionConflict, "HEAD moved to %s while repair was republishing (expected %s)", head.CommitID, want).Retry().
					Fix("Run `flameox repair` again: the plan is recomputed from the workspace as it is now.")
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		expect = res.CommitID
		if res.Compaction != nil && res.Compaction.Compacted {
			expect = res.Compaction.CommitID // the publisher compacted right after
		}
		out.CommitID = expect
		out.Applied = append(out.Applied, AppliedAction{Kind: a.Kind, Target: a.Target, GenerationID: res.GenerationID, CommitID: res.CommitID})
		faultpoint.Hit(StepRepublished)
		// The damaged files are superseded now: set them aside, so full
		// validation does not find them again.
		if err := quarantineFiles(ctx, ws, a, planDigest, now, out); err != nil {
			return out, err
		}
	}
	for _, a := range plan.Actions {
		if a.Kind != ActionRebuildCatalog {
			continue
		}
		if _, err := catalog.Rebuild(ctx, ws.Root, ws.Locks()); err != nil {
			return out, err
		}
		out.Applied = append(out.Applied, AppliedAction{Kind: a.Kind, Target: a.Target})
	}
	return out, nil
}

// quarantineFiles moves the damaged files of a republished generation to
// quarantine under the write and retention locks.
func quarantineFiles(ctx context.Context, ws *workspace.Workspace, a Action, planDigest string, now time.Time, out *ApplyResult) error {
	locks := ws.Locks()
	releaseW, err := locks.Lock(ctx, lock.Write, false)
	if err != nil {
		return err
	}
	defer releaseW()
	releaseR, err := locks.Lock(ctx, lock.Retention, false)
	if err != nil {
		return err
	}
	defer releaseR()
	for _, f := range a.Files {
		if !strings.HasPrefix(f, "evidence/") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(ws.Root, filepath.FromSlash(f))); err != nil {
			continue // a missing file: nothing to set aside
		}
		qid, err := retention.SetAside(ctx, ws.Root, f, "repair:"+planDigest,
			fmt.Sprintf("%s: generation %s was republished from its native artifacts", strings.Join(a.Because, ", "), a.Target.ID), now)
		if err != nil {
			return err
		}
		out.Applied = append(out.Applied, AppliedAction{Kind: ActionQuarantineFile, Target: Ref{Type: "file", ID: f}, Quarantine: qid})
	}
	return nil
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func sortedCopy(in []string) []string {
	out := append([]string{}, in...)
	sort.Strings(out)
	return out
}
