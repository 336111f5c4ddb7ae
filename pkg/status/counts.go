package status

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

var (
	qRunStates = catalog.Query{Name: "status.run_states", Version: "1", SQL: `
SELECT run_id, run_type, execution_status, capture_status, validation_status FROM runs_current`}
	qObjects = catalog.Query{Name: "status.objects", Version: "1", SQL: `
SELECT artifact_id, kind, max(byte_length) FROM artifacts_current GROUP BY artifact_id, kind`}
)

// countPublished counts runs and objects from the pinned corpus, then adds
// what is on disk but not (yet) published: run directories without a
// published revision, and stored objects no published registration names.
// Only those few manifests are read, so status stays fast at scale.
func countPublished(ctx context.Context, ws *workspace.Workspace, st *Status, rows map[string]int64) error {
	if rows["runs"] == 0 && rows["artifacts"] == 0 {
		// Nothing published: no DuckDB instance for nothing (a fresh
		// workspace's status, and `flameox init`, skip its start-up;
		// docs/performance.md).
		if err := unpublishedRuns(ws, st, map[string]bool{}, []string{}); err != nil {
			return err
		}
		return unregisteredObjects(ws, st, map[string]bool{})
	}
	s, err := query.OpenTables(ctx, ws, "runs_current", "artifacts_current") // binding a view reads its footers
	if err != nil {
		return err
	}
	defer s.Close()
	published := map[string]bool{}
	openRuns := []string{}
	err = s.R.Scan(ctx, qRunStates, nil, func(rows *sql.Rows) error {
		for rows.Next() {
			var id, typ, ex, cap, val string
			if err := rows.Scan(&id, &typ, &ex, &cap, &val); err != nil {
				return err
			}
			published[id] = true
			addRun(st, typ, ex, cap, val)
			if cap == run.CapturePending || cap == run.CaptureRunning || !run.Validation.Terminal(val) || !run.Execution.Terminal(ex) {
				openRuns = append(openRuns, id)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	registered := map[string]bool{}
	err = s.R.Scan(ctx, qObjects, nil, func(rows *sql.Rows) error {
		for rows.Next() {
			var id, kind string
			var size uint64
			if err := rows.Scan(&id, &kind, &size); err != nil {
				return err
			}
			if !registered[id] {
				registered[id] = true
				st.Artifacts.Objects++
				st.Artifacts.Bytes += int64(size)
			}
			ks := st.Artifacts.ByKind[kind]
			ks.Objects++
			ks.Bytes += int64(size)
			st.Artifacts.ByKind[kind] = ks
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := unpublishedRuns(ws, st, published, openRuns); err != nil {
		return err
	}
	return unregisteredObjects(ws, st, registered)
}

func addRun(st *Status, typ, ex, cap, val string) {
	st.Runs.Total++
	st.Runs.ByType[typ]++
	st.Runs.ByExecution[ex]++
	st.Runs.ByCapture[cap]++
	st.Runs.ByValidation[val]++
}

func unpublishedRuns(ws *workspace.Workspace, st *Status, published map[string]bool, open []string) error {
	ents, err := os.ReadDir(ws.Path("runs"))
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "list runs").With("file", "runs")
	}
	store := &run.Store{Root: ws.Root}
	check := func(m *run.Manifest) {
		if m.CaptureStatus == run.CaptureQuarantined {
			st.QuarantinedRuns = append(st.QuarantinedRuns, m.RunID)
		}
		if stale(m) {
			st.StaleRuns = append(st.StaleRuns, m.RunID)
		}
	}
	for _, id := range open {
		if m, err := store.Get(id); err == nil {
			check(m)
		}
	}
	for _, e := range ents {
		id := e.Name()
		if !e.IsDir() || !run.ValidID(id) || published[id] {
			continue
		}
		m, err := store.Get(id)
		if err != nil {
			w := "unreadable run " + id + ": " + fault.As(err).Message
			if run.Damage(err) != "" {
				w += " (`flameox recover` removes or quarantines it)"
			}
			st.Warnings = append(st.Warnings, w)
			continue
		}
		st.Runs.Unpublished++
		addRun(st, m.RunType, m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus)
		check(m)
	}
	return nil
}

func unregisteredObjects(ws *workspace.Workspace, st *Status, registered map[string]bool) error {
	base := ws.Path("artifacts", "sha256")
	shards, err := os.ReadDir(base)
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "read artifact store").With("file", "artifacts/sha256")
	}
	store := &artifact.Store{Root: ws.Root}
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue
		}
		objs, err := os.ReadDir(filepath.Join(base, sh.Name()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			if len(o.Name()) != 64 || strings.HasPrefix(o.Name(), ".") || registered["sha256:"+o.Name()] {
				continue
			}
			c, _, err := store.Stat("sha256:" + o.Name())
			if err != nil {
				st.Warnings = append(st.Warnings, "damaged object sha256:"+o.Name()+": "+fault.As(err).Message)
				continue
			}
			st.Artifacts.Objects++
			st.Artifacts.Bytes += c.ByteLength
			ks := st.Artifacts.ByKind["unpublished"]
			ks.Objects++
			ks.Bytes += c.ByteLength
			st.Artifacts.ByKind["unpublished"] = ks
		}
	}
	return nil
}

var qPublishedRevisions = catalog.Query{Name: "status.published_revisions", Version: "1", SQL: `
SELECT run_id, revision FROM runs_current`}

// PublishedRevisions maps every run the published corpus holds to the
// newest revision it holds; `flameox recover` publishes the terminal runs
// it lacks.
func PublishedRevisions(ctx context.Context, ws *workspace.Workspace) (map[string]int, error) {
	out := map[string]int{}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		return nil, err
	}
	if snap.Rows["runs"] == 0 {
		return out, nil
	}
	s, err := query.OpenTables(ctx, ws, "runs_current")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	err = s.R.Scan(ctx, qPublishedRevisions, nil, func(rows *sql.Rows) error {
		for rows.Next() {
			var id string
			var rev int
			if err := rows.Scan(&id, &rev); err != nil {
				return err
			}
			out[id] = rev
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
