package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/profile/pproftest"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/runset"
	"github.com/flameox/flameox/pkg/workspace"
	gprof "github.com/google/pprof/profile"
)

const (
	cpuFixture  = "testdata/google-pprof__sample.cpu.pb.gz"
	heapFixture = "testdata/parca__alloc_objects.pb.gz"
)

// scaleWhere multiplies by k the samples with a frame named like sub; k 0
// drops them.
func scaleWhere(sub string, k int64) func(*gprof.Profile) {
	return func(p *gprof.Profile) {
		var kept []*gprof.Sample
		for _, s := range p.Sample {
			if pproftest.OnStack(s, sub) {
				if k == 0 {
					continue
				}
				for i := range s.Value {
					s.Value[i] *= k
				}
			}
			kept = append(kept, s)
		}
		p.Sample = kept
	}
}

// rename renames a function (gone from one side, new on the other).
func rename(from, to string) func(*gprof.Profile) {
	return func(p *gprof.Profile) {
		for _, fn := range p.Function {
			if fn.Name == from {
				fn.Name, fn.SystemName = to, to
			}
		}
	}
}

func both(edits ...func(*gprof.Profile)) func(*gprof.Profile) {
	return func(p *gprof.Profile) {
		for _, e := range edits {
			e(p)
		}
	}
}

// freeze publishes one succeeded trial per run, block by block, and a
// run set of them, as an experiment's variant would have; it returns the
// set's id.
func freeze(t *testing.T, ws *workspace.Workspace, variant string, runs []string) string {
	t.Helper()
	ctx := context.Background()
	pub := publish.New(ws, publish.Options{Extractors: all.Registry().Extractors()})
	var bodies []any
	var members []inquiry.Member
	for i, r := range runs {
		order := int32(0)
		tr := &inquiry.Trial{TrialID: "tr-" + variant + "-" + experiment.BlockID(i+1), ExperimentID: "ex-profiles", VariantID: "va-" + variant,
			RunID: r, CombinationID: "co-" + variant, FactorsJSON: "{}", BlockID: experiment.BlockID(i + 1), OrderInBlock: &order,
			Attempt: 1, Outcome: inquiry.TrialSucceeded, ValidationStatus: "passed", FailureClass: "none"}
		bodies = append(bodies, tr)
		members = append(members, inquiry.Member{RunID: r, TrialID: tr.TrialID})
	}
	if _, err := pub.PublishInquiry(ctx, bodies); err != nil {
		t.Fatal(err)
	}
	rs, err := runset.Freeze(ctx, ws.Root, runset.Request{Selection: runset.Selection{Method: runset.MethodExperiment,
		ExperimentID: "ex-profiles", VariantID: "va-" + variant}, Members: members, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.PublishInquiry(ctx, []any{rs}); err != nil {
		t.Fatal(err)
	}
	return rs.RunSetID
}

// TestProfileChangesMatchGoToolPprof: two run sets whose runs carry real
// CPU profiles (imported, extracted and published) compare with their
// top profile changes, row for row those of the real
// `go tool pprof -top -diff_base=BASE C1 C2 C3` where BASE is the
// baseline's profiles merged by `go tool pprof -proto` (pprof keeps only
// the last of several -diff_base flags), with each side's totals and
// counts and the diff's limitations.
func TestProfileChangesMatchGoToolPprof(t *testing.T) {
	base := []string{
		cpuFixture,
		pproftest.Edit(t, cpuFixture, scaleWhere("evacuate", 0)),
	}
	cand := []string{
		pproftest.Edit(t, cpuFixture, both(scaleWhere("mapassign", 3), scaleWhere("math.Abs", 0), rename("runtime.memmove", "runtime.memmoveFast"))),
		pproftest.Edit(t, cpuFixture, both(scaleWhere("mapiternext", 2), rename("runtime.add", "runtime.addFast"))),
		pproftest.Edit(t, cpuFixture, scaleWhere("busyLoop", 1)),
	}
	ws, ids := capturetest.Published(t, "", append(append([]string{}, base...), cand...)...)
	bset, cset := freeze(t, ws, "base", ids[:2]), freeze(t, ws, "cand", ids[2:])
	c, err := Confirm(context.Background(), ws, ConfirmRequest{Baseline: bset, Candidate: cset, Metric: "profile.total", Subject: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	pc := c.ProfileChanges
	if pc == nil {
		t.Fatalf("no profile changes; limitations %q", c.Limitations)
	}

	merged := filepath.Join(t.TempDir(), "base.pb.gz")
	if err := os.WriteFile(merged, []byte(pproftest.Output(t, append([]string{"-proto"}, base...)...)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := pproftest.TopLabeled(t, cand[2], "cpu", "nanoseconds", "-diff_base="+merged, cand[0], cand[1])
	if len(want) <= ProfileTop {
		t.Fatalf("pprof printed %d rows: the top %d are not a cut", len(want), ProfileTop)
	}
	if len(pc.Rows) != ProfileTop || pc.Changed != int64(len(want)) {
		t.Fatalf("%d rows of %d changed, pprof has %d", len(pc.Rows), pc.Changed, len(want))
	}
	for i, r := range pc.Rows {
		if g := (pproftest.Row{Name: r.Function, Flat: r.SelfDelta, Cum: r.InclusiveDelta}); g != want[i].Row {
			t.Errorf("row %d: flameox %v, go tool pprof %v", i, g, want[i].Row)
		}
	}

	single := func(file string) int64 { // the sum of pprof's flat column
		var sum int64
		for _, r := range pproftest.Top(t, file, "cpu", "nanoseconds") {
			sum += r.Flat
		}
		return sum
	}
	bt, ct := single(base[0])+single(base[1]), single(cand[0])+single(cand[1])+single(cand[2])
	if pc.SampleType != "cpu" || pc.Unit != "nanoseconds" || pc.Baseline.Total != bt || pc.Candidate.Total != ct || pc.TotalDelta != ct-bt {
		t.Fatalf("type %s/%s, totals %d %d (delta %d), pprof %d %d", pc.SampleType, pc.Unit, pc.Baseline.Total, pc.Candidate.Total, pc.TotalDelta, bt, ct)
	}
	if b, k := pc.Baseline, pc.Candidate; b.Runs != 2 || b.WithProfile != 2 || b.Merged != 2 || k.Runs != 3 || k.WithProfile != 3 || k.Merged != 3 ||
		pc.Added != 2 || pc.Removed != 0 {
		t.Fatalf("sides %+v %+v, added %d, removed %d", pc.Baseline, pc.Candidate, pc.Added, pc.Removed)
	}
	joined := strings.Join(pc.Limitations, "\n")
	for _, s := range []string{"not causality", "different numbers of profiles (base 2, candidate 3)", "not normalised"} {
		if !strings.Contains(joined, s) {
			t.Errorf("limitations lack %q:\n%s", s, joined)
		}
	}
}

// TestProfileChangesNeedBothSides: a comparison of run sets without
// profiles has no profile changes and no error; one side with profiles
// and the other without says so; profiles of no common sample type say
// so; the bound on runs read is a limitation.
func TestProfileChangesNeedBothSides(t *testing.T) {
	ctx := context.Background()
	ws := capturetest.Workspace(t)
	cpu := capturetest.Import(t, ws, "", cpuFixture, pproftest.Edit(t, cpuFixture, scaleWhere("mapassign", 2)))
	heap := capturetest.Import(t, ws, "", heapFixture, pproftest.Edit(t, heapFixture, scaleWhere("yaml", 2)))
	bench := capturetest.Import(t, ws, "benchmark_samples", "testdata/golang-perf__old.txt", "testdata/golang-perf__new.txt")

	// Neither side profiled, through the whole comparison.
	bset, cset := freeze(t, ws, "old", bench[:1]), freeze(t, ws, "new", bench[1:])
	c, err := Confirm(ctx, ws, ConfirmRequest{Baseline: bset, Candidate: cset, Metric: "gobench.sec/op"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProfileChanges != nil || strings.Contains(strings.Join(c.Limitations, "\n"), "profile") {
		t.Fatalf("profile changes %+v, limitations %q", c.ProfileChanges, c.Limitations)
	}

	// The hook on sides read from the catalog: every run eligible.
	side := func(runs ...string) *query.SetEvidence {
		e := &query.SetEvidence{}
		one := 1.0
		for _, r := range runs {
			e.Members = append(e.Members, query.SetMember{RunID: r, TrialOutcome: inquiry.TrialSucceeded, Median: &one})
		}
		return e
	}
	for _, tc := range []struct {
		name       string
		base, cand *query.SetEvidence
		changes    bool
		lim        string
	}{
		{"only the baseline profiled", side(cpu...), side(bench...), false, "only the baseline's runs carry profiles (2 of 2 eligible runs read), the candidate's none"},
		{"only the candidate profiled", side(bench[0]), side(cpu[1]), false, "only the candidate's runs carry profiles (1 of 1 eligible runs read), the baseline's none"},
		{"no common sample type", side(cpu[0]), side(heap...), false, "no profile of one side has a sample type compatible"},
		{"a run without a profile on one side", side(cpu[0], bench[0]), side(cpu[1]), true, "base: 1 of 2 inputs have no extracted profile"},
		{"a heap profile among cpu profiles", side(cpu[0]), side(cpu[1], heap[0]), true, "candidate: " + heap[0] + " not merged: the profile has no sample type \"cpu\""},
		{"the bound", side(append(repeat(cpu[0], maxProfileRuns), cpu[0])...), side(cpu[1]), true, fmt.Sprintf("baseline: the profiles of the first %d of %d eligible runs (by block) are merged", maxProfileRuns, maxProfileRuns+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Comparison{}
			if err := c.profileChanges(ctx, ws, tc.base, tc.cand); err != nil {
				t.Fatal(err)
			}
			lim := c.Limitations
			if c.ProfileChanges != nil {
				lim = append(lim, c.ProfileChanges.Limitations...)
			}
			if (c.ProfileChanges != nil) != tc.changes || !strings.Contains(strings.Join(lim, "\n"), tc.lim) {
				t.Fatalf("profile changes %v, limitations:\n%s", c.ProfileChanges != nil, strings.Join(lim, "\n"))
			}
		})
	}
	if _, err := analysis.DiffMerged(ctx, ws, analysis.MergedDiffRequest{Base: repeat(cpu[0], analysis.MaxMergedInputs+1), Candidate: cpu}); err == nil {
		t.Fatal("a merged diff over the bound: no error")
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// BenchmarkProfileChangesWithoutProfiles is the hook's cost on two sides
// of 64 eligible runs none of which carries a profile (docs/performance.md).
func BenchmarkProfileChangesWithoutProfiles(b *testing.B) {
	t := &testing.T{}
	ws := capturetest.Workspace(t)
	var files []string
	for i := range 2 * maxProfileRuns {
		f := filepath.Join(b.TempDir(), "bench.txt")
		if err := os.WriteFile(f, []byte(fmt.Sprintf("BenchmarkX 1 %d ns/op\n", 100+i)), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
	}
	ids := capturetest.Import(t, ws, "benchmark_samples", files...)
	if t.Failed() {
		b.Fatal("import failed")
	}
	one := 1.0
	side := func(runs []string) *query.SetEvidence {
		e := &query.SetEvidence{}
		for _, r := range runs {
			e.Members = append(e.Members, query.SetMember{RunID: r, TrialOutcome: inquiry.TrialSucceeded, Median: &one})
		}
		return e
	}
	base, cand := side(ids[:maxProfileRuns]), side(ids[maxProfileRuns:])
	for b.Loop() {
		c := &Comparison{}
		if err := c.profileChanges(context.Background(), ws, base, cand); err != nil || c.ProfileChanges != nil {
			b.Fatal(err)
		}
	}
}
