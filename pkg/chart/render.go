package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/runset"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
)

// Operation names of the pictures.
const (
	OpComparison = "render.comparison"
	OpScaling    = "render.scaling"
	OpReport     = "report"
)

// ComparisonRequest is what render comparison draws: two runs (the
// benchstat view of compare RUN_A RUN_B), two run sets (experiment
// compare's), or one experiment (every variant's run set against the
// first variant's, on the declared rule). Bench and Sets carry the
// options of the two kinds of comparison; their ids come from Inputs.
type ComparisonRequest struct {
	Inputs []string
	Output string
	Bench  compare.BenchRequest
	Sets   compare.ConfirmRequest
	// PNG asks for the picture as PNG too, in the result (MCP's image).
	PNG bool
}

// PictureResult says what was drawn and where.
type PictureResult struct {
	SchemaVersion  int      `json:"schema_version"`
	Operation      string   `json:"operation"`
	Path           string   `json:"path"`
	Format         string   `json:"format"`
	Bytes          int64    `json:"bytes"`
	CorpusCommitID string   `json:"corpus_commit_id"`
	Inputs         []string `json:"inputs"`
	// Drawn counts what the picture shows: lines of a comparison, series
	// of a scaling picture, sections of a report.
	Drawn       int      `json:"drawn"`
	Limitations []string `json:"limitations"`
	// PNG is the picture as PNG when asked (ComparisonRequest.PNG).
	PNG []byte `json:"-"`
}

// RenderComparison draws a comparison and writes it to req.Output
// (relative to base; .svg or .png).
func RenderComparison(ctx context.Context, ws *workspace.Workspace, req ComparisonRequest, base string) (*PictureResult, error) {
	format, err := FormatOf(req.Output)
	if err != nil {
		return nil, err
	}
	out, err := analysis.OutputPath(ws, req.Output, base)
	if err != nil {
		return nil, err
	}
	c, commit, lim, err := ComparisonOf(ctx, ws, req)
	if err != nil {
		return nil, err
	}
	lines := 0
	for _, r := range c.Rows {
		lines += len(r.Samples)
	}
	res := &PictureResult{SchemaVersion: 1, Operation: OpComparison, Format: format, CorpusCommitID: commit,
		Inputs: req.Inputs, Drawn: lines, Limitations: lim}
	return res, write(res, out, format, req.PNG, func(f string) ([]byte, error) { return Comparison(c, f) })
}

// write draws the picture in format into out, and as PNG too if asked.
func write(res *PictureResult, out, format string, png bool, draw func(string) ([]byte, error)) error {
	b, err := draw(format)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(out, b, 0o644); err != nil {
		return fault.Wrap(fault.InvalidArguments, err, "write %s", out).With("field", "output")
	}
	res.Path, res.Bytes = out, int64(len(b))
	switch {
	case png && format == PNG:
		res.PNG = b
	case png:
		if res.PNG, err = draw(PNG); err != nil {
			return err
		}
	}
	return nil
}

// ComparisonOf reads what a comparison picture draws, at one pinned
// commit per comparison, and the limitations that qualify it.
func ComparisonOf(ctx context.Context, ws *workspace.Workspace, req ComparisonRequest) (*ComparisonChart, string, []string, error) {
	in := req.Inputs
	switch {
	case len(in) == 2 && runset.IsID(in[0]) && runset.IsID(in[1]):
		s := req.Sets
		s.Baseline, s.Candidate = in[0], in[1]
		return setsComparison(ctx, ws, s, []string{"baseline", "candidate"}, []string{s.Baseline, s.Candidate})
	case len(in) == 2 && (runset.IsID(in[0]) || runset.IsID(in[1])):
		return nil, "", nil, fault.New(fault.InvalidArguments, "a comparison takes two runs or two run sets, not one of each").With("field", "inputs")
	case len(in) == 2:
		b := req.Bench
		b.RunA, b.RunB = in[0], in[1]
		return benchComparison(ctx, ws, b)
	case len(in) == 1:
		return experimentComparison(ctx, ws, in[0])
	}
	return nil, "", nil, fault.New(fault.InvalidArguments, "a comparison takes two runs, two run sets or one experiment, not %d inputs", len(in)).With("field", "inputs")
}

// benchComparison is compare RUN_A RUN_B drawn: per benchmark and unit,
// each run's values over the old median (so rows of different scales
// share the axis), the median with benchstat's interval.
func benchComparison(ctx context.Context, ws *workspace.Workspace, req compare.BenchRequest) (*ComparisonChart, string, []string, error) {
	v, err := compare.CompareRuns(ctx, ws, req)
	if err != nil {
		return nil, "", nil, err
	}
	c := &ComparisonChart{Title: fmt.Sprintf("old %s vs new %s", short(v.RunA), short(v.RunB)), Confidence: v.Confidence, Threshold: v.Threshold}
	units := map[string]bool{}
	lim := []string{"values are drawn over the old run's median of the same benchmark and unit; bars are the medians' " +
		fmt.Sprintf("%g%% distribution-free intervals (benchstat's)", v.Confidence*100), "validity: " + v.Validity.Status}
	lines := 0
	var rowUnits, rowTables []string
	for _, r := range v.Rows {
		if lines+2 > MaxLines {
			lim = append(lim, fmt.Sprintf("%d of %d rows drawn (at most %d lines): narrow with --filter", len(c.Rows), len(v.Rows), MaxLines))
			break
		}
		ref := math.NaN()
		if r.Old != nil && r.Old.Center != nil && *r.Old.Center != 0 {
			ref = *r.Old.Center
		} else if r.New != nil && r.New.Center != nil && *r.New.Center != 0 {
			ref = *r.New.Center
		}
		if math.IsNaN(ref) {
			continue
		}
		row := Row{Name: r.Benchmark, Note: strings.TrimSpace(r.Delta + " " + r.Decision)}
		rowTables = append(rowTables, r.Table)
		units[r.Unit] = true
		for _, side := range []struct {
			name string
			s    *compare.CellSummary
			id   string
		}{{"old", r.Old, v.RunA}, {"new", r.New, v.RunB}} {
			if side.s == nil {
				continue
			}
			smp := Sample{Variant: side.name, IDs: []string{side.id}}
			for _, x := range side.s.Values {
				smp.Values = append(smp.Values, x/ref)
			}
			smp.Center, smp.Lo, smp.Hi = over(side.s.Center, ref), over(side.s.Lo, ref), over(side.s.Hi, ref)
			row.Samples = append(row.Samples, smp)
		}
		lines += len(row.Samples)
		c.Rows = append(c.Rows, row)
		rowUnits = append(rowUnits, r.Unit)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for u := range units {
			if !yield(u) {
				return
			}
		}
	})
	if t := slices.Compact(slices.Sorted(slices.Values(rowTables))); len(t) > 1 { // configurations differ: name each row's
		for i := range c.Rows {
			c.Rows[i].Name = "[" + rowTables[i] + "] " + c.Rows[i].Name
		}
	}
	if len(names) > 1 { // more than one unit: name it on each row
		for i := range c.Rows {
			c.Rows[i].Name += " " + rowUnits[i]
		}
	}
	c.Axis = "value / old median (" + strings.Join(names, ", ") + ")"
	return c, v.CorpusCommitID, lim, nil
}

func over(x *float64, ref float64) *float64 {
	if x == nil {
		return nil
	}
	y := *x / ref
	return &y
}

// short is an id cut for a title.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// eligible is compare's rule for a member that enters a comparison: it
// succeeded and has a positive, finite median of the metric.
func eligible(m query.SetMember) bool {
	ok := m.TrialOutcome == inquiry.TrialSucceeded || (m.TrialOutcome == "" && m.ExecutionStatus == "succeeded")
	return ok && m.Median != nil && *m.Median > 0 && !math.IsInf(*m.Median, 0)
}

// setsComparison draws run sets of one metric: each set's per-run
// medians (the eligible members, as the comparison counts them), their
// median with its order-statistic interval, and each candidate's paired
// ratio against the first set with its interval and decision.
func setsComparison(ctx context.Context, ws *workspace.Workspace, req compare.ConfirmRequest, labels, ids []string) (*ComparisonChart, string, []string, error) {
	if len(ids) < 2 || len(labels) != len(ids) {
		return nil, "", nil, fault.New(fault.InvalidArguments, "a comparison of run sets needs two or more, each with a label")
	}
	var c *ComparisonChart
	var commit string
	var lim []string
	for i := 1; i < len(ids); i++ {
		r := req
		r.Baseline, r.Candidate = ids[0], ids[i]
		cmp, err := compare.Confirm(ctx, ws, r)
		if err != nil {
			return nil, "", nil, err
		}
		if c == nil {
			what := cmp.Metric
			if cmp.Subject != "" {
				what += " of " + cmp.Subject
			}
			c = &ComparisonChart{Title: what, Axis: fmt.Sprintf("per-run median (%s)", cmp.Unit), Threshold: cmp.Threshold, Confidence: cmp.Confidence}
			commit = cmp.CorpusCommitID
			lim = append(lim, "points are the eligible runs' medians of "+cmp.Metric+"; bars are each set's median with its "+
				fmt.Sprintf("%g%% order-statistic interval; the ratio panel is the paired comparison (%s)", cmp.Confidence*100, cmp.Method))
		}
		e := Effect{Name: labels[i] + " / " + labels[0], Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Decision: cmp.Decision}
		if cmp.Ratio != nil && !cmp.Degenerate {
			e.Ratio, e.Lo, e.Hi = *cmp.Ratio, *cmp.RatioLow, *cmp.RatioHigh
		}
		c.Effects = append(c.Effects, e)
		lim = append(lim, fmt.Sprintf("%s vs %s: %s, %s", labels[i], labels[0], cmp.Decision, cmp.Validity))
	}
	sets, err := query.RunSetsEvidence(ctx, ws, req.Metric, req.Subject, ids...)
	if err != nil {
		return nil, "", nil, err
	}
	row := Row{Name: c.Title}
	for i, s := range sets {
		smp := Sample{Variant: labels[i] + " (" + short(s.RunSetID) + ")"}
		for _, m := range s.Members {
			if eligible(m) {
				smp.Values = append(smp.Values, *m.Median)
				smp.IDs = append(smp.IDs, m.RunID)
			}
		}
		if len(smp.Values) > 0 {
			iv, err := stats.MedianInterval(smp.Values, stats.Options{Method: stats.OrderStatistic, Confidence: c.Confidence})
			if err == nil {
				smp.Center = &iv.Estimate
				if !iv.Degenerate {
					smp.Lo, smp.Hi = &iv.Lo, &iv.Hi
				}
			}
		}
		row.Samples = append(row.Samples, smp)
		if s.CorpusCommitID != commit {
			lim = append(lim, "the corpus advanced while the picture was read: the values are at "+s.CorpusCommitID+", the comparison at "+commit)
		}
	}
	c.Rows = []Row{row}
	return c, commit, lim, nil
}

// experimentComparison draws every variant's run set of an experiment on
// its primary metric, each candidate against the first variant on the
// declared rule (as experiment run's comparisons are made).
func experimentComparison(ctx context.Context, ws *workspace.Workspace, id string) (*ComparisonChart, string, []string, error) {
	e, err := query.GetExperiment(ctx, ws, query.GetExperimentRequest{ExperimentID: id, Limit: 1})
	if err != nil {
		return nil, "", nil, err
	}
	labels, ids := experimentSets(e.Variants, e.RunSets)
	if len(ids) < 2 {
		return nil, "", nil, fault.New(fault.NotFound, "experiment %s has %d frozen run set(s): a comparison needs two", id, len(ids)).With("experiment_id", id)
	}
	if e.PrimaryMetric == "" {
		return nil, "", nil, fault.New(fault.InvalidArguments, "experiment %s declares no primary metric to compare on", id)
	}
	req := compare.ConfirmRequest{Metric: e.PrimaryMetric, Polarity: e.Polarity, Threshold: e.PracticalThreshold, Confidence: e.ConfidenceLevel}
	return setsComparison(ctx, ws, req, labels, ids)
}

// experimentSets are an experiment's run sets in its variants' order,
// with their labels.
func experimentSets(variants []query.ExperimentVariant, sets []query.RunSetSummary) (labels, ids []string) {
	type sel struct {
		Label     string `json:"label"`
		VariantID string `json:"variant_id"`
	}
	order := map[string]int{}
	for i, v := range variants {
		order[v.VariantID] = i
	}
	type one struct {
		label, id string
		rank      int
	}
	var all []one
	for _, s := range sets {
		var x sel
		_ = json.Unmarshal(s.Selection, &x)
		rank, ok := order[x.VariantID]
		if !ok {
			rank = len(variants)
		}
		if x.Label == "" {
			x.Label = short(s.RunSetID)
		}
		all = append(all, one{x.Label, s.RunSetID, rank})
	}
	slices.SortStableFunc(all, func(a, b one) int { return a.rank - b.rank })
	for _, o := range all {
		labels, ids = append(labels, o.label), append(ids, o.id)
	}
	return labels, ids
}

// ScalingRequest is what render scaling draws: analyze scaling's request.
type ScalingRequest struct {
	analysis.ScalingRequest
	Output string
	PNG    bool
}

// RenderScaling draws an experiment's scaling analysis and writes it.
func RenderScaling(ctx context.Context, ws *workspace.Workspace, req ScalingRequest, base string) (*PictureResult, error) {
	format, err := FormatOf(req.Output)
	if err != nil {
		return nil, err
	}
	out, err := analysis.OutputPath(ws, req.Output, base)
	if err != nil {
		return nil, err
	}
	sres, err := analysis.Scaling(ctx, ws, req.ScalingRequest)
	if err != nil {
		return nil, err
	}
	c := ScalingOf(sres)
	res := &PictureResult{SchemaVersion: 1, Operation: OpScaling, Format: format, CorpusCommitID: sres.CorpusCommitID,
		Inputs: []string{req.ExperimentID}, Drawn: len(c.Series), Limitations: append([]string{}, sres.Limitations...)}
	return res, write(res, out, format, req.PNG, func(f string) ([]byte, error) { return Scaling(c, f) })
}

// ScalingOf is the picture of a scaling analysis: each series' included
// trials, its per-size medians, and every fitted model with its
// residuals at the measured sizes.
func ScalingOf(r *analysis.ScalingResult) *ScalingChart {
	c := &ScalingChart{Title: "scaling of " + r.ExperimentID, Parameter: r.Parameters.Parameter, Metric: r.Parameters.Metric}
	perVariant := map[string]int{}
	for _, s := range r.Series {
		perVariant[s.Variant]++
	}
	for _, s := range r.Series {
		name := s.Variant
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range s.Factors {
				if !yield(k) {
					return
				}
			}
		}) {
			if s.Factors[k] != s.Variant && k != r.Parameters.Parameter {
				name += " " + k + "=" + s.Factors[k]
			}
		}
		if c.Unit == "" {
			c.Unit = s.Unit
		}
		ss := ScalingSeries{Name: name, Min: s.MeasuredMin, Max: s.MeasuredMax, Choice: s.Choice.Decision}
		if s.Choice.Decision == stats.Chosen {
			ss.Choice += " " + s.Choice.Model
		}
		var sizes []float64
		for _, p := range s.Points {
			if p.Median != nil {
				ss.Medians = append(ss.Medians, Point{X: p.Input, Y: *p.Median})
			}
			if p.Observations > 0 {
				sizes = append(sizes, p.Input)
			}
		}
		slices.Sort(sizes)
		for _, t := range r.Trials {
			// The trials list carries no factors but the variant: a
			// variant split into several series shows its medians only.
			if t.Included && t.Variant == s.Variant && t.Input != nil && t.Median != nil && perVariant[s.Variant] == 1 {
				ss.Observations = append(ss.Observations, Point{X: *t.Input, Y: *t.Median, ID: t.RunID})
			}
		}
		best := s.Choice.Model
		if best == "" {
			lowest := math.Inf(1)
			for _, f := range s.Fits {
				if f.AICc != nil && *f.AICc < lowest {
					best, lowest = f.Model, *f.AICc
				}
			}
		}
		for _, f := range s.Fits {
			ss.Fits = append(ss.Fits, Curve{Model: f.Model, Formula: f.Formula, Intercept: f.Intercept, Slope: f.Slope,
				DeltaAICc: f.DeltaAICc, Sizes: sizes, Residuals: f.Residuals, Best: f.Model == best})
		}
		c.Series = append(c.Series, ss)
	}
	return c
}
