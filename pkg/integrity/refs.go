package integrity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/run"
)

// liveFile is one readable Parquet file of a HEAD generation.
type liveFile struct {
	gen  *corpus.Generation
	file corpus.GenerationFile
	abs  string
}

// liveFiles are the files of HEAD's generations that passed the quick
// checks, by table.
func (s *state) liveFiles() map[string][]liveFile {
	out := map[string][]liveFile{}
	for _, g := range s.gens {
		for _, f := range g.Files {
			if s.fileDamaged(g, f) {
				continue
			}
			out[f.Table] = append(out[f.Table], liveFile{gen: g, file: f, abs: filepath.Join(s.root, filepath.FromSlash(f.Path))})
		}
	}
	return out
}

// fileDamaged reports whether a check already found f damaged.
func (s *state) fileDamaged(_ *corpus.Generation, f corpus.GenerationFile) bool {
	return s.damagedFiles[f.Path]
}

// checkReferences reads each Parquet file's footer (row count, schema)
// and every reference between the corpus's records.
func (s *state) checkReferences(ctx context.Context) error {
	files := s.liveFiles()
	tables := make([]string, 0, len(files))
	for t := range files {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	readable := map[string][]liveFile{}
	for _, t := range tables {
		tab, ok := schema.Lookup(t)
		for _, lf := range files[t] {
			if err := ctx.Err(); err != nil {
				return fault.Wrap(fault.ProcessCancelled, err, "validation cancelled")
			}
			p := Problem{Severity: SeverityError, Code: CodeEvidenceUnreadable, File: lf.file.Path,
				Subject: &Ref{Type: "generation", ID: lf.gen.GenerationID}, Remediation: repairFix}
			if !ok {
				p.Message = fmt.Sprintf("%s names table %q, which this flameox does not know", lf.file.Path, t)
				s.addFileProblem(lf.gen.GenerationID, p)
				continue
			}
			var n int64
			err := schema.Scan(ctx, tab, lf.abs, nil, func([]any) error { n++; return nil })
			switch {
			case err != nil:
				p.Message = fmt.Sprintf("%s cannot be read as table %s: %v", lf.file.Path, t, err)
			case n != lf.file.RowCount:
				p.Expected, p.Found = fmt.Sprintf("%d rows", lf.file.RowCount), fmt.Sprintf("%d rows", n)
				p.Message = fmt.Sprintf("%s holds %d rows; its manifest records %d", lf.file.Path, n, lf.file.RowCount)
			default:
				readable[t] = append(readable[t], lf)
				continue
			}
			s.addFileProblem(lf.gen.GenerationID, p)
		}
	}
	r := &refChecker{s: s, files: readable, commits: map[string]bool{}}
	return r.run(ctx)
}

func (s *state) addFileProblem(gen string, p Problem) {
	s.generationDamaged(gen, p.Code)
	s.damagedFiles[p.File] = true
	s.col.add(p)
}

// refChecker resolves the references the corpus's rows and manifests make.
type refChecker struct {
	s       *state
	files   map[string][]liveFile
	commits map[string]bool
	snap    *corpus.Snapshot
}

func (r *refChecker) scan(ctx context.Context, t *schema.Table, cols []string, fn func(lf liveFile, row []any)) {
	for _, lf := range r.files[t.Name] {
		err := schema.Scan(ctx, t, lf.abs, cols, func(row []any) error { fn(lf, row); return nil })
		if err != nil && ctx.Err() == nil {
			r.s.addFileProblem(lf.gen.GenerationID, Problem{Severity: SeverityError, Code: CodeEvidenceUnreadable, File: lf.file.Path,
				Subject: &Ref{Type: "generation", ID: lf.gen.GenerationID}, Message: fmt.Sprintf("%s cannot be read: %v", lf.file.Path, err), Remediation: repairFix})
		}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// idSet collects the ids of a table's id column.
func (r *refChecker) idSet(ctx context.Context, t *schema.Table, col string) map[string]bool {
	out := map[string]bool{}
	r.scan(ctx, t, []string{col}, func(_ liveFile, row []any) {
		if id := str(row[0]); id != "" {
			out[id] = true
		}
	})
	return out
}

func (r *refChecker) commitOK(id string) bool {
	if ok, seen := r.commits[id]; seen {
		return ok
	}
	_, err := corpus.Read(r.s.root, id)
	r.commits[id] = err == nil
	return err == nil
}

func (r *refChecker) runOK(id string) bool {
	if _, ok := r.s.runs[id]; ok {
		return true
	}
	if !run.ValidID(id) {
		return false
	}
	_, err := os.Lstat(filepath.Join(r.s.root, "runs", id))
	return err == nil
}

// artifactState is "ok", "quarantined" or "missing".
func (r *refChecker) artifactState(id string) string {
	if _, ok := r.s.objects[id]; ok {
		return "ok"
	}
	if _, ok := r.s.quarantined[id]; ok {
		return "quarantined"
	}
	return "missing"
}

func (r *refChecker) generationOK(id string) bool {
	for _, g := range r.s.gens {
		if g.GenerationID == id {
			return true
		}
	}
	if r.s.unreadable[id] {
		return true // reported already
	}
	if r.snap == nil {
		if r.s.head == nil {
			return false
		}
		r.snap = &corpus.Snapshot{Root: r.s.root, Commit: *r.s.head, Generations: r.s.gens}
	}
	g, _, err := corpus.FindGeneration(r.snap, id)
	return err == nil && g != nil
}

// dangling records a reference from (file, owner) to a missing record.
func (r *refChecker) dangling(file string, owner Ref, typ, id, what string) {
	r.s.col.add(Problem{Severity: SeverityError, Code: CodeDanglingReference, File: file, Subject: &Ref{Type: typ, ID: id},
		Expected: typ + " " + id, Found: "missing", Dependents: []Ref{owner},
		Message: fmt.Sprintf("%s %s references %s %s, which %s", owner.Type, owner.ID, typ, id, what), Remediation: backupFix})
	r.s.depend(typ, id, owner)
}

// artifactRef checks a reference to an artifact; one that repair set
// aside is a warning, its registrations are kept on purpose.
func (r *refChecker) artifactRef(file string, owner Ref, id string) {
	r.s.res.Checked.References++
	r.s.depend("artifact", id, owner)
	switch r.artifactState(id) {
	case "ok":
	case "quarantined":
		r.s.warnQuarantined(id)
	default:
		r.dangling(file, owner, "artifact", id, "is not in the artifact store")
	}
}

func (s *state) warnQuarantined(id string) {
	for _, p := range s.col.problems {
		if p.Code == CodeArtifactQuarantined && p.Subject != nil && p.Subject.ID == id {
			return
		}
	}
	s.col.add(Problem{Severity: SeverityWarning, Code: CodeArtifactQuarantined, File: s.quarantined[id], Subject: &Ref{Type: "artifact", ID: id},
		Message:     fmt.Sprintf("%s was quarantined by repair; its registrations are kept, its bytes are set aside in %s", id, s.quarantined[id]),
		Remediation: Remediation{Command: "flameox quarantine show " + strings.TrimPrefix(s.quarantined[id], "quarantine/"), Note: "re-import the original file to place the object again"}})
}

func (r *refChecker) run(ctx context.Context) error {
	s := r.s
	// Registrations and generation inputs.
	for _, id := range sortedKeys(s.runs) {
		m := s.runs[id]
		for _, reg := range m.Artifacts {
			r.artifactRef(run.ManifestRel(id), Ref{Type: "run", ID: id, Relation: "registers " + reg.RegistrationID}, reg.ArtifactID)
			if o, ok := s.objects[reg.ArtifactID]; ok && o.payload != "" && reg.PayloadPath != o.rel+"/"+o.content.PayloadName {
				s.col.add(Problem{Severity: SeverityError, Code: CodeDanglingReference, File: run.ManifestRel(id), Subject: &Ref{Type: "artifact", ID: reg.ArtifactID},
					Expected: o.rel + "/" + o.content.PayloadName, Found: reg.PayloadPath,
					Message: fmt.Sprintf("registration %s of run %s names payload %s; the object's payload is %s", reg.RegistrationID, id, reg.PayloadPath, o.rel+"/"+o.content.PayloadName), Remediation: backupFix})
			}
		}
	}
	for _, g := range s.gens {
		file := corpus.GenerationRel(g.GenerationID)
		owner := Ref{Type: "generation", ID: g.GenerationID, Relation: "input"}
		for _, rid := range g.InputRunIDs {
			s.res.Checked.References++
			if !r.runOK(rid) {
				r.dangling(file, owner, "run", rid, "has no directory in runs/")
			}
		}
		for _, aid := range g.InputArtifactIDs {
			r.artifactRef(file, owner, aid)
		}
		if g.InputCommitID != "" {
			s.res.Checked.References++
			// The commit a generation was published on may be collected
			// once it falls out of the kept history; that is no damage.
			if !r.commitOK(g.InputCommitID) && !(retention.CommitCollected(s.root, g.InputCommitID) && !exists(corpus.CommitPath(s.root, g.InputCommitID))) {
				r.dangling(file, owner, "commit", g.InputCommitID, "cannot be read")
			}
		}
	}

	// Rows: runs and artifacts tables against runs/ and the store.
	r.scan(ctx, schema.Runs, []string{"run_id"}, func(lf liveFile, row []any) {
		id := str(row[0])
		s.res.Checked.References++
		if id != "" && !r.runOK(id) {
			r.dangling(lf.file.Path, Ref{Type: "generation", ID: lf.gen.GenerationID, Relation: "rows"}, "run", id, "has no directory in runs/")
		}
	})
	r.scan(ctx, schema.Artifacts, []string{"artifact_id", "run_id"}, func(lf liveFile, row []any) {
		if id := str(row[0]); id != "" {
			r.artifactRef(lf.file.Path, Ref{Type: "run", ID: str(row[1]), Relation: "registration row"}, id)
		}
	})

	// Owners and what they reference.
	analyses := r.idSet(ctx, schema.Analyses, "analysis_id")
	comparisons := r.idSet(ctx, schema.Comparisons, "comparison_id")
	findings := r.idSet(ctx, schema.Findings, "finding_id")
	runSets := r.idSet(ctx, schema.RunSets, "run_set_id")
	trials := r.idSet(ctx, schema.Trials, "trial_id")
	owners := map[string]map[string]bool{"analysis": analyses, "comparison": comparisons, "finding": findings}

	r.scan(ctx, schema.Analyses, []string{"analysis_id", "corpus_commit_id"}, func(lf liveFile, row []any) {
		s.res.Checked.References++
		if c := str(row[1]); c != "" && !r.commitOK(c) {
			r.dangling(lf.file.Path, Ref{Type: "analysis", ID: str(row[0]), Relation: "read"}, "commit", c, "cannot be read")
		}
	})
	r.scan(ctx, schema.RunSets, []string{"run_set_id", "corpus_commit_id", "members_json"}, func(lf liveFile, row []any) {
		owner := Ref{Type: "run_set", ID: str(row[0]), Relation: "member"}
		s.res.Checked.References++
		if c := str(row[1]); c != "" && !r.commitOK(c) {
			r.dangling(lf.file.Path, Ref{Type: "run_set", ID: owner.ID, Relation: "frozen at"}, "commit", c, "cannot be read")
		}
		members, err := inquiry.DecodeMembers(str(row[2]))
		if err != nil {
			s.addFileProblem(lf.gen.GenerationID, Problem{Severity: SeverityError, Code: CodeEvidenceUnreadable, File: lf.file.Path, Subject: &Ref{Type: "run_set", ID: owner.ID},
				Message: fmt.Sprintf("run set %s has unreadable members_json: %v", owner.ID, err), Remediation: backupFix})
			return
		}
		for _, m := range members {
			s.res.Checked.References++
			s.depend("run", m.RunID, owner)
			if !r.runOK(m.RunID) {
				r.dangling(lf.file.Path, owner, "run", m.RunID, "has no directory in runs/")
			}
		}
	})
	r.scan(ctx, schema.Comparisons, []string{"comparison_id", "baseline_run_set_id", "candidate_run_set_id"}, func(lf liveFile, row []any) {
		owner := Ref{Type: "comparison", ID: str(row[0]), Relation: "compares"}
		for _, rs := range []string{str(row[1]), str(row[2])} {
			s.res.Checked.References++
			s.depend("run_set", rs, owner)
			if rs != "" && !runSets[rs] {
				r.dangling(lf.file.Path, owner, "run_set", rs, "is not in the run_sets table")
			}
		}
	})
	r.scan(ctx, schema.EvidenceRefs, []string{"owner_type", "owner_id", "ref_type", "ref_id", "relation"}, func(lf liveFile, row []any) {
		ot, oid, rt, rid, rel := str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4])
		owner := Ref{Type: ot, ID: oid, Relation: rel}
		s.res.Checked.References++
		if set, ok := owners[ot]; ok && !set[oid] {
			r.dangling(lf.file.Path, Ref{Type: "evidence_ref", ID: oid}, ot, oid, "is not in its table")
		}
		var ok bool
		switch rt {
		case "artifact":
			r.artifactRef(lf.file.Path, owner, rid)
			return
		case "run":
			ok = r.runOK(rid)
		case "commit":
			ok = r.commitOK(rid)
		case "generation":
			ok = r.generationOK(rid)
		case "analysis":
			ok = analyses[rid]
		case "comparison":
			ok = comparisons[rid]
		case "run_set":
			ok = runSets[rid]
		case "trial":
			ok = trials[rid]
		default:
			return // observations are addressed within their run's rows
		}
		s.depend(rt, rid, owner)
		if !ok {
			r.dangling(lf.file.Path, owner, rt, rid, "does not exist")
		}
	})
	if err := ctx.Err(); err != nil {
		return fault.Wrap(fault.ProcessCancelled, err, "validation cancelled")
	}
	return nil
}

// checkCatalog compares catalog.duckdb with HEAD. A stale catalog is a
// warning (queries never use it; every publication leaves it behind); one
// holding anything flameox does not put there is an error.
func (s *state) checkCatalog(ctx context.Context) {
	if s.head == nil {
		return
	}
	res, err := catalog.Validate(ctx, s.root)
	if err != nil {
		s.catalogBad = true
		s.col.add(Problem{Severity: SeverityError, Code: CodeCatalogInvalid, File: catalog.FileName, Message: fault.As(err).Message,
			Remediation: Remediation{Command: "flameox catalog rebuild", MCPTool: "validate_catalog"}})
		return
	}
	switch {
	case !res.Valid:
		s.catalogBad = true
		msg := "catalog.duckdb holds what flameox does not put there"
		if len(res.Problems) > 0 {
			msg += ": " + res.Problems[0]
			if len(res.Problems) > 1 {
				msg += fmt.Sprintf(" (and %d more)", len(res.Problems)-1)
			}
		}
		s.col.add(Problem{Severity: SeverityError, Code: CodeCatalogInvalid, File: catalog.FileName, Message: msg,
			Remediation: Remediation{Command: "flameox catalog rebuild", MCPTool: "validate_catalog"}})
	case res.Status != nil && res.Status.Exists && !res.Status.Fresh:
		s.catalogBad = true
		s.col.add(Problem{Severity: SeverityWarning, Code: CodeCatalogStale, File: catalog.FileName,
			Expected: s.res.CommitID, Found: res.Status.CommitID,
			Message:     "catalog.duckdb was built at another commit than HEAD (queries do not use it)",
			Remediation: Remediation{Command: "flameox catalog rebuild", MCPTool: "catalog_status"}})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
