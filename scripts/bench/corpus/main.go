// Command corpus measures publication, compaction, catalog rebuild and a
// cohort query on a synthetic corpus of N runs with M measurements each,
// published in chunks of C runs (SPEC §10). It uses the same stage/commit
// code as fox-publish and the same locked-down reader as every query.
//
//	go run ./scripts/bench/corpus -runs 100000
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/uuid"
)

func main() {
	runs := flag.Int("runs", 100000, "runs in the corpus")
	chunk := flag.Int("chunk", 10000, "runs per publication")
	perRun := flag.Int("measurements", 4, "measurements per run")
	keep := flag.Bool("keep", false, "keep the workspace")
	at := flag.String("dir", "", "make the workspace in this empty directory and keep it (scripts/bench/export.sh exports it)")
	flag.Parse()
	if err := bench(*runs, *chunk, *perRun, *keep, *at); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

func bench(n, chunk, perRun int, keep bool, at string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flameox-corpus-bench-")
	if at != "" {
		dir, err, keep = at, os.MkdirAll(at, 0o755), true
	}
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	res, err := workspace.Init(ctx, dir, time.Now(), publish.FirstCommit)
	if err != nil {
		return err
	}
	ws := res.Workspace
	rng := rand.New(rand.NewPCG(1, 2))

	start := time.Now()
	for done := 0; done < n; done += chunk {
		m := min(chunk, n-done)
		if err := publishChunk(ctx, ws, rng, m, perRun); err != nil {
			return err
		}
	}
	publishTime := time.Since(start)

	start = time.Now()
	cres, err := (&publish.Publisher{WS: ws}).Compact(ctx)
	if err != nil {
		return err
	}
	compactTime := time.Since(start)

	start = time.Now()
	if _, err := catalog.Rebuild(ctx, ws.Root, ws.Locks()); err != nil {
		return err
	}
	rebuildTime := time.Since(start)

	var times []time.Duration
	var count, groups int64
	for i := 0; i < 7; i++ {
		start = time.Now()
		count, groups, err = query(ctx, ws.Root)
		if err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	snap, _ := corpus.Pin(ws.Root)
	files := 0
	for _, fs := range snap.Files {
		files += len(fs)
	}
	fmt.Printf("| %d | %d | %s | %s | %d → %d (%d tables) | %s | %s (median of 7; count=%d, groups=%d) |\n",
		n, n*perRun, publishTime.Round(time.Millisecond), compactTime.Round(time.Millisecond), cres.FilesBefore, files, len(snap.Files),
		rebuildTime.Round(time.Millisecond), times[3].Round(100*time.Microsecond), count, groups)
	return nil
}

var workloads = []string{"scan", "parse", "render", "index", "compress"}
var statuses = []string{"succeeded", "succeeded", "succeeded", "failed", "timed_out"}

func publishChunk(ctx context.Context, ws *workspace.Workspace, rng *rand.Rand, n, perRun int) error {
	st, err := publish.NewStage(ws.Root, "bench", "1", time.Now())
	if err != nil {
		return err
	}
	defer st.Discard()
	rw, err := st.Table(schema.Runs)
	if err != nil {
		return err
	}
	mw, err := st.Table(schema.Measurements)
	if err != nil {
		return err
	}
	r := runHandles(rw)
	mh := measurementHandles(mw)
	now := time.Now()
	for i := 0; i < n; i++ {
		id := uuid.NewString()
		wl := workloads[rng.IntN(len(workloads))]
		if err := r.row(id, wl, statuses[rng.IntN(len(statuses))], now); err != nil {
			return err
		}
		for j := 0; j < perRun; j++ {
			if err := mh.row(id, j, int64(1e6+rng.IntN(1e6))); err != nil {
				return err
			}
		}
	}
	files, err := st.Finish()
	if err != nil {
		return err
	}
	_, err = publish.Commit(ctx, ws, st, files, publish.Meta{Publisher: "bench", PublisherVersion: "1", InputRunIDs: nil})
	return err
}

func query(ctx context.Context, root string) (count, groups int64, err error) {
	r, err := catalog.OpenHead(ctx, root, catalog.Options{})
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	err = r.Scan(ctx, catalog.Query{Name: "bench.count", Version: "1",
		SQL: `SELECT count(*) FROM runs_current WHERE execution_status = $1 AND workload_name = $2`},
		[]any{"succeeded", "scan"}, func(rows *sql.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&count); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	if err != nil {
		return 0, 0, err
	}
	err = r.Scan(ctx, catalog.Query{Name: "bench.cohort", Version: "1",
		SQL: `SELECT r.workload_name, r.execution_status, count(*), median(m.value_int)
		      FROM runs_current r JOIN measurements m USING (run_id)
		      WHERE m.name = 'process.wall_time' AND NOT m.is_warmup
		      GROUP BY 1, 2 ORDER BY 1, 2`},
		nil, func(rows *sql.Rows) error {
			for rows.Next() {
				groups++
			}
			return rows.Err()
		})
	return count, groups, err
}
