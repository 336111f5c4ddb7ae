package fleet

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/version"
	"github.com/flameox/flameox/pkg/workspace"
)

// ManifestVersion is the format version of DIR/manifests/<workspace>.json.
const ManifestVersion = 1

// ManifestFormat names the file's format.
const ManifestFormat = "flameox.corpus-export"

// Partition columns of every exported table (directory names, not columns
// in the files).
const (
	PartitionWorkspace = "workspace_id"
	PartitionDate      = "date"
)

// StagingDir is the export's work directory inside DIR: dot-prefixed, so
// Spark, Trino and DuckDB globs over a table directory never see it.
const StagingDir = ".flameox-staging"

// ExportRequest is one `flameox export corpus`.
type ExportRequest struct {
	To string `json:"to"`
	// Since, when set, leaves out the rows a commit already held (a commit
	// id or a unique prefix of its hex); a later export without it adds
	// them.
	Since            string   `json:"since,omitempty"`
	Tables           []string `json:"tables,omitempty"`
	IncludeSensitive bool     `json:"include_sensitive,omitempty"`
}

// Manifest is DIR/manifests/<workspace_id>.json: what DIR holds of one
// workspace, written last by every export.
type Manifest struct {
	SchemaVersion    int                       `json:"schema_version"`
	Format           string                    `json:"format"`
	WorkspaceID      string                    `json:"workspace_id"`
	CommitID         string                    `json:"commit_id"`
	CommitCreatedAt  time.Time                 `json:"commit_created_at"`
	ExportedAt       time.Time                 `json:"exported_at"`
	FlameoxVersion   string                    `json:"flameox_version"`
	IncludeSensitive bool                      `json:"include_sensitive"`
	Tables           map[string]*ManifestTable `json:"tables"`
	Files            []ManifestFile            `json:"files"`
}

// ManifestTable is one table of an export.
type ManifestTable struct {
	Schema      string `json:"schema"` // e.g. runs@1.2: the newest minor of its files
	SchemaMajor int    `json:"schema_major"`
	SchemaMinor int    `json:"schema_minor"`
	Rows        int64  `json:"rows"`
	Files       int    `json:"files"`
	// Generations are the evidence generations whose rows of this table
	// DIR holds (or deliberately left out: sensitive rows): generations
	// are immutable and rows keep their generation id through compaction,
	// so the next export skips exactly these.
	Generations []string `json:"generations"`
}

// ManifestFile is one Parquet file of the export.
type ManifestFile struct {
	Path       string `json:"path"` // relative to DIR, slash-separated
	Table      string `json:"table"`
	Date       string `json:"date"`
	CommitID   string `json:"commit_id"` // the export that wrote it
	Rows       int64  `json:"rows"`
	SHA256     string `json:"sha256"`
	ByteLength int64  `json:"byte_length"`
}

// ExportResult is what one export did.
type ExportResult struct {
	SchemaVersion    int                    `json:"schema_version"`
	Dir              string                 `json:"dir"`
	Manifest         string                 `json:"manifest"`
	WorkspaceID      string                 `json:"workspace_id"`
	CommitID         string                 `json:"commit_id"`
	PreviousCommitID string                 `json:"previous_commit_id,omitempty"`
	SinceCommitID    string                 `json:"since_commit_id,omitempty"`
	UpToDate         bool                   `json:"up_to_date"`
	Written          []ManifestFile         `json:"written"`
	Removed          []string               `json:"removed,omitempty"` // files of an interrupted export, removed first
	Tables           map[string]TableResult `json:"tables"`
	Excluded         []string               `json:"excluded,omitempty"` // what was left out, unless --include-sensitive
}

// TableResult counts one table's rows: written now and in DIR in all.
type TableResult struct {
	RowsWritten  int64 `json:"rows_written"`
	FilesWritten int   `json:"files_written"`
	Rows         int64 `json:"rows"`
	Files        int   `json:"files"`
}

// sensitiveObservations are observation names whose values are command
// lines or host names: pyperf records the benchmark's argv as
// metadata "command" and the machine's "hostname" (the environment
// record never holds a host name, SPEC §3).
var sensitiveObservations = []string{"pyperf.metadata.command", "pyperf.metadata.hostname"}

// redactedColumns are set to null unless sensitive data is included: the
// execution identity holds the command line and environment.
var redactedColumns = map[string][]string{"runs": {"execution_identity_json"}}

// exclusions says in words what an export without --include-sensitive
// leaves out.
var exclusions = []string{
	"rows of artifacts whose effective sensitivity is sensitive (any registration says so), in every table with artifact_id",
	"runs.execution_identity_json (the execution identity: argv and environment)",
	"observations " + strings.Join(sensitiveObservations, ", ") + " (argv, host name)",
	"credentials in measurements.subject command lines (hyperfine names results by command), redacted as workload argv are",
}

// timeColumns are the columns that date a row of a table without run_id,
// in order of preference.
var timeColumns = []string{"started_at", "created_at", "observed_at", "registered_at"}

var tableName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) })

var partName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^workspace_id=([0-9a-f-]+)/date=(\d{4}-\d{2}-\d{2})/part-[0-9a-f]+-\d+\.parquet$`)
})

// Export writes the workspace's pinned commit as a Hive-partitioned Parquet
// dataset under req.To (docs/fleet.md): only the rows of generations DIR
// does not hold yet, each file staged under DIR/.flameox-staging, synced,
// then renamed into place, and the manifest replaced last. It reads one
// pinned commit and never takes the workspace write lock.
func Export(ctx context.Context, ws *workspace.Workspace, req ExportRequest, now time.Time) (*ExportResult, error) {
	if req.To == "" {
		return nil, fault.New(fault.InvalidArguments, "export corpus needs --to DIR").Fix("Name the directory to write, e.g. --to ../flameox-export.")
	}
	dir, err := filepath.Abs(req.To)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve %s", req.To)
	}
	if inside(dir, ws.Root) || inside(ws.Root, dir) {
		return nil, fault.New(fault.InvalidArguments, "%s overlaps the workspace %s", dir, ws.Root).
			Fix("Export outside .diagnostics, e.g. --to ../flameox-export.")
	}
	tables, err := exportTables(req.Tables)
	if err != nil {
		return nil, err
	}
	wsID := ws.Meta.WorkspaceID
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "create %s", dir)
	}
	unlock, err := lockExport(ctx, dir, wsID)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// Readers hold the retention lock shared so that garbage collection
	// does not remove the pinned commit's files while they are read.
	release, err := ws.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	defer release()
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		return nil, err
	}
	res := &ExportResult{SchemaVersion: 1, Dir: dir, Manifest: manifestPath(dir, wsID), WorkspaceID: wsID,
		CommitID: snap.Commit.CommitID, Tables: map[string]TableResult{}, Written: []ManifestFile{}}
	if !req.IncludeSensitive {
		res.Excluded = exclusions
	}
	man, err := ReadManifest(dir, wsID)
	if err != nil {
		return nil, err
	}
	if man == nil {
		man = &Manifest{SchemaVersion: ManifestVersion, Format: ManifestFormat, WorkspaceID: wsID,
			IncludeSensitive: req.IncludeSensitive, Tables: map[string]*ManifestTable{}, Files: []ManifestFile{}}
	} else {
		res.PreviousCommitID = man.CommitID
		if man.IncludeSensitive != req.IncludeSensitive {
			return nil, fault.New(fault.InvalidArguments, "%s holds an export made %s --include-sensitive", dir, map[bool]string{true: "with", false: "without"}[man.IncludeSensitive]).
				Fix("Export into another directory, or repeat the flag as the first export had it.")
		}
	}
	for _, f := range man.Files {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.ByteLength {
			return nil, fault.New(fault.ArtifactIntegrityFailed, "%s lists %s, which is missing or changed", res.Manifest, f.Path).With("file", f.Path).
				Fix("Restore the file, or remove " + res.Manifest + " and the workspace's workspace_id=" + wsID + " directories to export everything again.")
		}
	}
	if res.Removed, err = cleanInterrupted(dir, wsID, man); err != nil {
		return nil, err
	}
	var since map[string]bool
	if req.Since != "" {
		c, err := resolveCommit(ws.Root, req.Since)
		if err != nil {
			return nil, err
		}
		res.SinceCommitID = c.CommitID
		if since, err = reachable(ws.Root, c); err != nil {
			return nil, err
		}
	}

	plans := planTables(snap, man, tables, since)
	if len(plans) == 0 {
		if man.CommitID == snap.Commit.CommitID {
			res.UpToDate = true
			summarize(res, man)
			return res, nil
		}
	}
	staging := filepath.Join(dir, StagingDir, wsID+"-"+durable.RandomHex(6))
	defer os.RemoveAll(staging)
	if len(plans) > 0 {
		if err := os.MkdirAll(staging, 0o755); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "create %s", staging)
		}
	}
	staged, err := stage(ctx, snap, plans, staging, wsID, req.IncludeSensitive, since)
	if err != nil {
		return nil, err
	}
	faultpoint.Hit("export.staged")
	written, err := place(dir, staged, snap.Commit.CommitID)
	if err != nil {
		return nil, err
	}
	faultpoint.Hit("export.placed")
	for _, p := range plans {
		t := man.Tables[p.table.Name]
		if t == nil {
			t = &ManifestTable{}
			man.Tables[p.table.Name] = t
		}
		t.Schema, t.SchemaMajor, t.SchemaMinor = p.table.ID(), p.table.Major, p.table.Minor
		t.Generations = union(t.Generations, p.consumed)
	}
	man.Files = append(man.Files, written...)
	sort.Slice(man.Files, func(i, j int) bool { return man.Files[i].Path < man.Files[j].Path })
	man.CommitID, man.CommitCreatedAt = snap.Commit.CommitID, snap.Commit.CreatedAt
	man.ExportedAt, man.FlameoxVersion = now.UTC().Truncate(time.Microsecond), version.Version()
	recount(man)
	if err := durable.WriteJSON(res.Manifest, man, 0o644); err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "write %s", res.Manifest)
	}
	faultpoint.Hit("export.manifest_written")
	res.Written = written
	summarize(res, man)
	for _, f := range written {
		tr := res.Tables[f.Table]
		tr.RowsWritten += f.Rows
		tr.FilesWritten++
		res.Tables[f.Table] = tr
	}
	return res, nil
}

// ReadManifest reads DIR/manifests/<workspace_id>.json, nil when there is
// none yet.
func ReadManifest(dir, workspaceID string) (*Manifest, error) {
	path := manifestPath(dir, workspaceID)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", path).With("file", path)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "decode %s", path).With("file", path)
	}
	if m.SchemaVersion != ManifestVersion || m.Format != ManifestFormat || m.WorkspaceID != workspaceID {
		return nil, fault.New(fault.WorkspaceInvalid, "%s is not a flameox export manifest (version %d) of workspace %s", path, ManifestVersion, workspaceID).With("file", path)
	}
	if m.Tables == nil {
		m.Tables = map[string]*ManifestTable{}
	}
	for _, f := range m.Files {
		// The table is a path component readers join: a plain name, never
		// ".." or "manifests".
		if !tableName().MatchString(f.Table) || f.Table == "manifests" || !partName().MatchString(strings.TrimPrefix(f.Path, f.Table+"/")) || !strings.HasPrefix(f.Path, f.Table+"/workspace_id="+workspaceID+"/") {
			return nil, fault.New(fault.WorkspaceInvalid, "%s lists an unexpected path %q", path, f.Path).With("file", path)
		}
	}
	return &m, nil
}

func manifestPath(dir, wsID string) string { return filepath.Join(dir, "manifests", wsID+".json") }

// lockExport serializes exports of one workspace into one directory (two
// workspaces export side by side: their files never share a directory).
func lockExport(ctx context.Context, dir, wsID string) (func(), error) {
	fl := flock.New(filepath.Join(dir, "manifests", "."+wsID+".lock"))
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ok, err := fl.TryLockContext(wctx, 20*time.Millisecond)
	if err != nil || !ok {
		if ctx.Err() != nil {
			return nil, fault.Wrap(fault.ProcessCancelled, ctx.Err(), "waiting for the export lock")
		}
		return nil, fault.New(fault.WriteLockTimeout, "another export of workspace %s into %s is running", wsID, dir).Retry().
			Fix("Retry when it finishes.")
	}
	return func() { fl.Close() }, nil
}

// exportTables validates --tables (default: every table).
func exportTables(names []string) ([]*schema.Table, error) {
	if len(names) == 0 {
		return schema.Tables(), nil
	}
	var out []*schema.Table
	for _, n := range names {
		t, ok := schema.Lookup(n)
		if !ok {
			all := []string{}
			for _, t := range schema.Tables() {
				all = append(all, t.Name)
			}
			return nil, fault.New(fault.InvalidArguments, "unknown table %q", n).With("table", n).
				Fix("Tables are " + strings.Join(all, ", ") + " (docs/tables.md).")
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// cleanInterrupted removes what an interrupted export of this workspace
// left: its staging directories, and complete part files it had renamed
// into place but not yet listed in the manifest (the next export writes
// their rows again under its own names). It runs under the export lock.
func cleanInterrupted(dir, wsID string, man *Manifest) ([]string, error) {
	stale, _ := filepath.Glob(filepath.Join(dir, StagingDir, wsID+"-*"))
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "remove %s", s)
		}
	}
	listed := make(map[string]bool, len(man.Files))
	for _, f := range man.Files {
		listed[f.Path] = true
	}
	var removed []string
	for _, t := range schema.Tables() {
		root := filepath.Join(dir, t.Name, PartitionWorkspace+"="+wsID)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if listed[rel] || !(strings.HasPrefix(d.Name(), "part-") && strings.HasSuffix(d.Name(), ".parquet")) {
				return nil
			}
			if err := os.Remove(p); err != nil {
				return err
			}
			removed = append(removed, rel)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fault.Wrap(fault.InternalError, err, "clean %s", root)
		}
	}
	return removed, nil
}

// tablePlan is one table's new rows: the live files that hold some, and
// the generation ids DIR holds afterwards.
type tablePlan struct {
	table    *schema.Table
	paths    []string
	files    []corpus.GenerationFile // beside paths: size, digest, rows, schema minor
	filter   []string                // rows of these generations are in DIR already (or left out by --since)
	consumed []string                // generation ids to record
	compact  bool                    // some file is a compaction's (rows of other generations inside)
	// subjects maps the subjects (command lines) that redactCommand
	// changes to their redacted text.
	subjects map[string]string
}

func planTables(snap *corpus.Snapshot, man *Manifest, tables []*schema.Table, since map[string]bool) []*tablePlan {
	superseded := snap.Superseded()
	var out []*tablePlan
	for _, t := range tables {
		done := map[string]bool{}
		if mt := man.Tables[t.Name]; mt != nil {
			for _, g := range mt.Generations {
				done[g] = true
			}
		}
		p := &tablePlan{table: t}
		for _, g := range snap.Generations {
			if superseded[g.GenerationID] || done[g.GenerationID] || since[g.GenerationID] {
				continue
			}
			has := false
			for _, f := range g.Files {
				if f.Table == t.Name {
					p.paths = append(p.paths, filepath.Join(snap.Root, filepath.FromSlash(f.Path)))
					p.files = append(p.files, f)
					has = true
				}
			}
			if has {
				p.consumed = append(p.consumed, g.GenerationID)
				p.compact = p.compact || len(g.Supersedes) > 0
			}
		}
		if len(p.paths) == 0 {
			continue
		}
		for g := range done {
			p.filter = append(p.filter, g)
		}
		for g := range since {
			if !done[g] {
				p.filter = append(p.filter, g)
			}
		}
		sort.Strings(p.filter)
		out = append(out, p)
	}
	return out
}

// stagedFile is a file written under staging, hashed and synced.
type stagedFile struct {
	abs string
	ManifestFile
}

// stage writes every plan's rows under staging with DuckDB.
func stage(ctx context.Context, snap *corpus.Snapshot, plans []*tablePlan, staging, wsID string, sensitive bool, since map[string]bool) ([]stagedFile, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	abs, err := filepath.Abs(snap.Root)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve %s", snap.Root)
	}
	snap.Root = abs
	for _, p := range plans {
		for i, path := range p.paths {
			if !filepath.IsAbs(path) {
				p.paths[i] = filepath.Join(abs, path)
			}
		}
	}
	r, err := catalog.OpenExport(ctx, snap, catalog.Options{Threads: runtime.NumCPU(), MemoryLimitBytes: 2 << 30,
		QueryTimeout: time.Hour, MaxSpillBytes: 16 << 30}, staging)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Materialize(ctx, "export_run_dates", `SELECT run_id, min(coalesce(started_at, created_at)) AS t FROM runs GROUP BY run_id`); err != nil {
		return nil, err
	}
	if !sensitive {
		if err := r.Materialize(ctx, "export_sensitive_artifacts", `SELECT DISTINCT artifact_id FROM artifacts WHERE sensitivity = 'sensitive'`); err != nil {
			return nil, err
		}
	}
	short := corpus.Short(snap.Commit.CommitID)
	var out []stagedFile
	for _, p := range plans {
		// Record the generations of the rows read, not only of the files:
		// a compaction's file holds rows of the generations it merged.
		if p.compact {
			ids, err := r.Distinct(ctx, p.table.Name, p.paths, "evidence_generation_id")
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !since[id] {
					p.consumed = append(p.consumed, id)
				}
			}
		}
		if !sensitive && p.table.Index("subject") >= 0 {
			if p.subjects, err = redactedSubjects(ctx, r, p); err != nil {
				return nil, err
			}
		}
		whole, rewrite, err := splitWhole(ctx, r, p, sensitive)
		if err != nil {
			return nil, err
		}
		for i, w := range whole {
			dst := filepath.Join(staging, p.table.Name+"-whole", strconv.Itoa(i)+".parquet")
			sum, size, err := copySync(w.path, dst)
			if err != nil {
				return nil, err
			}
			if sum != w.file.SHA256 || size != w.file.ByteLength {
				return nil, fault.New(fault.ArtifactIntegrityFailed, "evidence file %s does not match its generation manifest", w.file.Path).With("file", w.file.Path)
			}
			out = append(out, stagedFile{abs: dst, ManifestFile: ManifestFile{
				Path:  p.table.Name + "/" + PartitionWorkspace + "=" + wsID + "/" + PartitionDate + "=" + w.date + "/part-" + short + "-0.parquet",
				Table: p.table.Name, Date: w.date, CommitID: snap.Commit.CommitID, Rows: w.file.RowCount, SHA256: sum, ByteLength: size}})
		}
		if len(rewrite) == 0 {
			continue
		}
		tdir := filepath.Join(staging, p.table.Name)
		files, err := r.CopyPartitioned(ctx, catalog.PartitionedCopy{
			Table: p.table.Name, Paths: rewrite, SQL: selectSQL(p, wsID, sensitive),
			PartitionBy: []string{PartitionWorkspace, PartitionDate}, Dir: tdir, Pattern: "part-" + short + "-{i}",
			KV: map[string]string{"flameox.table": p.table.Name, "flameox.schema": p.table.ID(),
				"flameox.workspace_id": wsID, "flameox.commit_id": snap.Commit.CommitID, "flameox.version": version.Version()},
		})
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			rel, err := filepath.Rel(tdir, f.Path)
			if err != nil {
				return nil, fault.Wrap(fault.InternalError, err, "staged file %s", f.Path)
			}
			rel = filepath.ToSlash(rel)
			m := partName().FindStringSubmatch(rel)
			if m == nil || m[1] != wsID {
				return nil, fault.New(fault.InternalError, "DuckDB wrote %s, not a part of the export layout", rel)
			}
			sum, size, err := hashSync(f.Path)
			if err != nil {
				return nil, err
			}
			out = append(out, stagedFile{abs: f.Path, ManifestFile: ManifestFile{Path: p.table.Name + "/" + rel, Table: p.table.Name,
				Date: m[2], CommitID: snap.Commit.CommitID, Rows: f.Rows, SHA256: sum, ByteLength: size}})
		}
	}
	return out, nil
}

// rowSQL is the curated text that places and filters one table's new
// rows: the FROM clause over new_rows (n) with the run dates joined, the
// time whose day is the date partition, the conditions a row must meet to
// be exported, and the REPLACE list of redacted columns.
type rowSQL struct {
	from, when, replace string
	keep, redacted      []string
	changed             []string // conditions of rows whose values the export changes
}

func rowParts(p *tablePlan, sensitive bool) rowSQL {
	t := p.table
	has := func(c string) bool { return t.Index(c) >= 0 }
	var r rowSQL
	var when []string
	r.from = "new_rows n"
	if has("run_id") {
		r.from += " LEFT JOIN export_run_dates rd ON rd.run_id = n.run_id"
		when = append(when, "rd.t")
	}
	for _, c := range timeColumns {
		if has(c) {
			when = append(when, "n."+c)
			break
		}
	}
	r.when = "coalesce(" + strings.Join(append(when, "n.published_at"), ", ") + ")"
	if len(p.filter) > 0 {
		r.keep = append(r.keep, "n.evidence_generation_id NOT IN ("+strings.Join(quote(p.filter), ", ")+")")
	}
	if !sensitive {
		if has("artifact_id") {
			r.keep = append(r.keep, "(n.artifact_id IS NULL OR n.artifact_id NOT IN (SELECT artifact_id FROM export_sensitive_artifacts))")
		}
		if t.Name == "observations" {
			r.keep = append(r.keep, "n.name NOT IN ("+strings.Join(quote(sensitiveObservations), ", ")+")")
		}
		var rs []string
		for _, c := range redactedColumns[t.Name] {
			rs = append(rs, "NULL::VARCHAR AS "+c)
			r.redacted = append(r.redacted, c)
		}
		if len(p.subjects) > 0 {
			keys := make([]string, 0, len(p.subjects))
			for k := range p.subjects {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var when []string
			for _, k := range keys {
				when = append(when, "WHEN "+quote([]string{k})[0]+" THEN "+quote([]string{p.subjects[k]})[0])
			}
			rs = append(rs, "CASE subject "+strings.Join(when, " ")+" ELSE subject END AS subject")
			r.changed = append(r.changed, "n.subject IN ("+strings.Join(quote(keys), ", ")+")")
		}
		if len(rs) > 0 {
			r.replace = " REPLACE (" + strings.Join(rs, ", ") + ")"
		}
	}
	return r
}

// forceRewrite makes every file go through DuckDB (tests cover both ways).
var forceRewrite bool

// wholeFile is an evidence file exported as it is.
type wholeFile struct {
	path string
	file corpus.GenerationFile
	date string
}

// splitWhole sorts a plan's files into those exported byte for byte and
// those DuckDB rewrites. An evidence file is immutable and already a
// Parquet file of the table's columns, so one whose rows all fall on one
// day, none of which the export drops or changes, at the table's current
// minor, becomes a part by copying it: no decoding or encoding at all.
// Captures publish one small generation each, and a compaction's segment
// of one day is one such file too.
func splitWhole(ctx context.Context, r *catalog.Reader, p *tablePlan, sensitive bool) ([]wholeFile, []string, error) {
	if forceRewrite {
		return nil, p.paths, nil
	}
	var whole []wholeFile
	var rewrite []string
	q := wholeSQL(p, sensitive)
	for i, path := range p.paths {
		f := p.files[i]
		if f.SchemaMinor != p.table.Minor || f.SchemaMajor != p.table.Major {
			rewrite = append(rewrite, path)
			continue
		}
		var first, last string
		var bad int64
		err := r.ScanRows(ctx, catalog.Query{Name: "export.whole." + p.table.Name, Version: "1", SQL: q}, p.table.Name, []string{path}, func(rows *sql.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&first, &last, &bad); err != nil {
					return err
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, nil, err
		}
		if first != "" && first == last && bad == 0 {
			whole = append(whole, wholeFile{path: path, file: f, date: first})
		} else {
			rewrite = append(rewrite, path)
		}
	}
	return whole, rewrite, nil
}

// redactedSubjects reads the distinct subjects of a plan's files and
// returns those redactCommand changes.
func redactedSubjects(ctx context.Context, r *catalog.Reader, p *tablePlan) (map[string]string, error) {
	out := map[string]string{}
	err := r.ScanRows(ctx, catalog.Query{Name: "export.subjects." + p.table.Name, Version: "1",
		SQL: `SELECT DISTINCT subject FROM new_rows WHERE subject IS NOT NULL`}, p.table.Name, p.paths, func(rows *sql.Rows) error {
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			if red := redactCommand(s); red != s {
				out[s] = red
			}
		}
		return rows.Err()
	})
	return out, err
}

// copySync copies src to a new file dst (its directory created), fsyncs
// it, and returns its digest and size.
func copySync(src, dst string) (string, int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, fault.Wrap(fault.InternalError, err, "create %s", filepath.Dir(dst))
	}
	in, err := os.Open(src)
	if err != nil {
		return "", 0, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", src)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", 0, fault.Wrap(fault.InternalError, err, "create %s", dst)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fault.Wrap(fault.InternalError, err, "copy %s", src)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// selectSQL is the curated SELECT of one table's new rows with the two
// partition columns.
func selectSQL(p *tablePlan, wsID string, sensitive bool) string {
	r := rowParts(p, sensitive)
	q := "SELECT n.*, " + r.when + " AS export_row_time FROM " + r.from
	if len(r.keep) > 0 {
		q += " WHERE " + strings.Join(r.keep, " AND ")
	}
	return "SELECT * EXCLUDE (export_row_time)" + r.replace + ", " + quote([]string{wsID})[0] + " AS " + PartitionWorkspace +
		", CAST(export_row_time AS DATE) AS " + PartitionDate + " FROM (" + q + ")"
}

// wholeSQL asks of new_rows (one file) whether the file can be exported
// as it is: the first and last day of its rows, and how many rows the
// export would drop or change.
func wholeSQL(p *tablePlan, sensitive bool) string {
	r := rowParts(p, sensitive)
	var bad []string
	if len(r.keep) > 0 {
		bad = append(bad, "NOT ("+strings.Join(r.keep, " AND ")+")")
	}
	for _, c := range r.redacted {
		bad = append(bad, "n."+c+" IS NOT NULL")
	}
	bad = append(bad, r.changed...)
	if len(bad) == 0 {
		bad = []string{"false"}
	}
	return "SELECT coalesce(CAST(min(d) AS VARCHAR), ''), coalesce(CAST(max(d) AS VARCHAR), ''), count(*) FILTER (WHERE bad) FROM (SELECT CAST(" + r.when +
		" AS DATE) AS d, (" + strings.Join(bad, " OR ") + ") AS bad FROM " + r.from + ")"
}

func quote(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return out
}

// hashSync fsyncs a staged file and returns its digest and size.
func hashSync(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fault.Wrap(fault.InternalError, err, "open %s", path)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return "", 0, fault.Wrap(fault.InternalError, err, "hash %s", path)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// place renames the staged files to their final names and syncs the
// directories; a reader sees each file whole or not at all.
func place(dir string, staged []stagedFile, commitID string) ([]ManifestFile, error) {
	out := make([]ManifestFile, 0, len(staged))
	var dirs []string
	short := corpus.Short(commitID)
	for _, s := range staged {
		// DuckDB numbers each copy's files from 0; an earlier export of
		// the same commit (other --tables, --since) may hold those names,
		// so a file takes the next free number of its partition.
		parent := filepath.Join(dir, filepath.FromSlash(path.Dir(s.Path)))
		var final string
		for n := 0; ; n++ {
			final = filepath.Join(parent, fmt.Sprintf("part-%s-%d.parquet", short, n))
			if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
				break
			}
		}
		s.Path = path.Dir(s.Path) + "/" + filepath.Base(final)
		for d := parent; d != dir && !slices.Contains(dirs, d); d = filepath.Dir(d) {
			dirs = append(dirs, d)
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "create %s", parent)
		}
		if err := os.Rename(s.abs, final); err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "rename into %s", final)
		}
		faultpoint.Hit("export.file_renamed")
		out = append(out, s.ManifestFile)
	}
	dirs = append(dirs, dir)
	if err := durable.SyncDirs(dirs...); err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "sync %s", dir)
	}
	return out, nil
}

// recount sets each table's rows and files from the file list.
func recount(m *Manifest) {
	for _, t := range m.Tables {
		t.Rows, t.Files = 0, 0
	}
	for _, f := range m.Files {
		if t := m.Tables[f.Table]; t != nil {
			t.Rows += f.Rows
			t.Files++
		}
	}
}

func summarize(res *ExportResult, m *Manifest) {
	for name, t := range m.Tables {
		tr := res.Tables[name]
		tr.Rows, tr.Files = t.Rows, t.Files
		res.Tables[name] = tr
	}
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..")
}

// resolveCommit finds a commit by id or a unique prefix of its hex.
func resolveCommit(root, id string) (corpus.Commit, error) {
	hexID := strings.TrimPrefix(id, "sha256:")
	if len(hexID) == 64 {
		return corpus.Read(root, "sha256:"+hexID)
	}
	matches, _ := filepath.Glob(filepath.Join(root, "corpus", "commits", hexID+"*.json"))
	if len(hexID) < 4 || len(matches) != 1 {
		return corpus.Commit{}, fault.New(fault.InvalidArguments, "--since %q names %d commits", id, len(matches)).
			Fix("Give a commit id (sha256:…) or at least 4 hex digits of one; `flameox status` shows the head.")
	}
	return corpus.Read(root, "sha256:"+strings.TrimSuffix(filepath.Base(matches[0]), ".json"))
}

// reachable returns every generation id whose rows commit c holds: its
// generations and, through compactions, the ones they merged (whose rows
// keep their generation ids).
func reachable(root string, c corpus.Commit) (map[string]bool, error) {
	out := map[string]bool{}
	var queue []*corpus.Generation
	for _, ref := range c.Generations {
		g, err := corpus.ReadGeneration(root, ref, true)
		if err != nil {
			return nil, err
		}
		out[g.GenerationID] = true
		queue = append(queue, g)
	}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if len(g.Supersedes) == 0 {
			continue
		}
		in, err := corpus.Read(root, g.InputCommitID)
		if err != nil {
			return nil, err
		}
		for _, ref := range in.Generations {
			if !slices.Contains(g.Supersedes, ref.GenerationID) || out[ref.GenerationID] {
				continue
			}
			old, err := corpus.ReadGeneration(root, ref, true)
			if err != nil {
				return nil, err
			}
			out[old.GenerationID] = true
			queue = append(queue, old)
		}
	}
	return out, nil
}

// String is a one-line summary of a result.
func (r *ExportResult) String() string {
	var rows int64
	for _, f := range r.Written {
		rows += f.Rows
	}
	return fmt.Sprintf("%d file(s), %d row(s)", len(r.Written), rows)
}
