// Command comparetime splits the time of a run-set comparison
// (scripts/bench/compare.sh): in one process, the median over rounds of
// opening the workspace and a catalog reader, reading both run sets'
// evidence (the query), the profile changes' lookup (analysis.DiffMerged),
// the interval alone on the paired log ratios (the statistics), and
// compare.Confirm whole with each method. With -benchfmt it also writes
// each side's per-block values, the ones the comparison pairs, as go test
// -bench output for benchstat.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
)

func main() {
	wsDir := flag.String("workspace", "", "workspace (.diagnostics)")
	base := flag.String("base", "", "baseline run set")
	cand := flag.String("cand", "", "candidate run set")
	metric := flag.String("metric", "process.wall_time", "metric")
	rounds := flag.Int("rounds", 10, "rounds (the median is printed)")
	out := flag.String("benchfmt", "", "directory to write base.txt and cand.txt in")
	flag.Parse()
	if err := run(*wsDir, *base, *cand, *metric, *rounds, *out); err != nil {
		fmt.Fprintln(os.Stderr, "comparetime:", err)
		os.Exit(1)
	}
}

func run(wsDir, base, cand, metric string, rounds int, out string) error {
	ctx := context.Background()
	ws, err := workspace.Open(wsDir)
	if err != nil {
		return err
	}
	sets, err := query.RunSetsEvidence(ctx, ws, metric, "", base, cand)
	if err != nil {
		return err
	}
	eb, ec := sets[0], sets[1]
	xs, ys := paired(eb), paired(ec)
	var bx, cy []float64
	for block, x := range xs {
		if y, ok := ys[block]; ok {
			bx, cy = append(bx, x), append(cy, y)
		}
	}
	lr, err := stats.PairedLogRatios(bx, cy)
	if err != nil {
		return err
	}
	if out != "" {
		for name, vs := range map[string]map[string]float64{"base.txt": xs, "cand.txt": ys} {
			if err := writeBenchfmt(filepath.Join(out, name), vs); err != nil {
				return err
			}
		}
	}
	steps := []struct {
		name string
		f    func() error
	}{
		{"workspace.Open", func() error { _, err := workspace.Open(wsDir); return err }},
		{"query.Open + Close (one catalog reader on HEAD)", func() error {
			s, err := query.Open(ctx, ws)
			if err == nil {
				s.Close()
			}
			return err
		}},
		{"query.RunSetsEvidence, both sets (the query)", func() error {
			_, err := query.RunSetsEvidence(ctx, ws, metric, "", base, cand)
			return err
		}},
		{"stats.MedianInterval order_statistic", func() error {
			_, err := stats.MedianInterval(lr, stats.Options{Method: stats.OrderStatistic})
			return err
		}},
		{"stats.MedianInterval bca, 9999 resamples", func() error {
			_, err := stats.MedianInterval(lr, stats.Options{Method: stats.BCa, Resamples: 9999, Seed: 1})
			return err
		}},
		{"analysis.DiffMerged, 64 runs a side (the profile changes)", func() error {
			_, err := analysis.DiffMerged(ctx, ws, analysis.MergedDiffRequest{Base: profileRuns(eb), Candidate: profileRuns(ec), Limit: compare.ProfileTop})
			return err
		}},
		{"compare.Confirm order_statistic (whole)", func() error {
			_, err := compare.Confirm(ctx, ws, compare.ConfirmRequest{Baseline: base, Candidate: cand, Metric: metric})
			return err
		}},
		{"compare.Confirm bca, 9999 resamples (whole)", func() error {
			_, err := compare.Confirm(ctx, ws, compare.ConfirmRequest{Baseline: base, Candidate: cand, Metric: metric, Method: stats.BCa, Resamples: 9999})
			return err
		}},
		// What one process gains when its sessions share readers, as the
		// MCP server's do (query.WithReaders): a fresh cache each round.
		{"compare.Confirm order_statistic, readers shared (query.WithReaders)", func() error {
			p := query.NewReaders()
			defer p.Close()
			_, err := compare.Confirm(query.WithReaders(ctx, p), ws, compare.ConfirmRequest{Baseline: base, Candidate: cand, Metric: metric})
			return err
		}},
		{"compare.Confirm bca, 9999 resamples, readers shared (query.WithReaders)", func() error {
			p := query.NewReaders()
			defer p.Close()
			_, err := compare.Confirm(query.WithReaders(ctx, p), ws, compare.ConfirmRequest{Baseline: base, Candidate: cand, Metric: metric, Method: stats.BCa, Resamples: 9999})
			return err
		}},
	}
	fmt.Printf("%d + %d members, %d complete blocks\n", len(eb.Members), len(ec.Members), len(lr))
	for _, s := range steps {
		var ds []time.Duration
		for range rounds {
			start := time.Now()
			if err := s.f(); err != nil {
				return err
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		fmt.Printf("%9.2f ms median of %d (min %.2f, max %.2f)  %s\n", ms(ds[len(ds)/2]), rounds, ms(ds[0]), ms(ds[len(ds)-1]), s.name)
	}
	return nil
}

// paired maps each block to the median of its run's values of the metric,
// as the comparison pairs them (one run per variant and block).
func paired(e *query.SetEvidence) map[string]float64 {
	out := map[string]float64{}
	for _, m := range e.Members {
		if m.Median != nil && *m.Median > 0 && !math.IsInf(*m.Median, 0) && m.BlockID != "" {
			out[m.BlockID] = *m.Median
		}
	}
	return out
}

// profileRuns are the runs whose profiles a comparison looks up: a
// side's first analysis.MaxMergedInputs runs with a value, by block.
func profileRuns(e *query.SetEvidence) []string {
	var ids []string
	for _, m := range e.Members {
		if m.Median != nil && len(ids) < analysis.MaxMergedInputs {
			ids = append(ids, m.RunID)
		}
	}
	return ids
}

func writeBenchfmt(path string, vs map[string]float64) error {
	blocks := make([]string, 0, len(vs))
	for b := range vs {
		blocks = append(blocks, b)
	}
	slices.Sort(blocks)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "goos: linux\ngoarch: amd64\npkg: flameox/bench")
	for _, b := range blocks {
		fmt.Fprintf(f, "BenchmarkWallTime 1 %.0f ns/op\n", vs[b])
	}
	return f.Close()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
