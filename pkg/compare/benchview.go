package compare

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// The decision vocabulary every comparison shares (pkg/stats has the
// confirmatory comparison's): non-significance is inconclusive, never
// equivalence. Validity: two unpaired runs are at best exploratory.
// Polarity says which direction of a unit is better.
const (
	decImprovement  = "meaningful_improvement"
	decRegression   = "meaningful_regression"
	decNoDifference = "no_meaningful_difference"
	decInconclusive = "inconclusive"
	decDescriptive  = "descriptive_only"

	validityExploratory = "exploratory"
	validityInvalid     = "invalid"

	polLower   = "lower_is_better"
	polHigher  = "higher_is_better"
	polNeutral = "neutral"
)

// BenchConfidence is the level of the medians' intervals, benchstat's
// default.
const BenchConfidence = 0.95

// BenchRequest asks for the benchstat view of two runs.
type BenchRequest struct {
	RunA      string  `json:"run_a" jsonschema:"baseline (old) run id"`
	RunB      string  `json:"run_b" jsonschema:"candidate (new) run id"`
	Filter    string  `json:"filter,omitempty" jsonschema:"benchstat -filter, e.g. /size:15"`
	Col       string  `json:"col,omitempty" jsonschema:"benchstat -col (default .file: the run)"`
	Row       string  `json:"row,omitempty" jsonschema:"benchstat -row (default .fullname)"`
	Ignore    string  `json:"ignore,omitempty" jsonschema:"benchstat -ignore, e.g. note"`
	Threshold float64 `json:"threshold,omitempty" jsonschema:"practical threshold, a fraction (default 0)"`
	Limit     int     `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
}

// Projection is the benchproc projection in force (benchstat's flags).
type Projection struct {
	Filter string `json:"filter"`
	Table  string `json:"table"`
	Row    string `json:"row"`
	Col    string `json:"col"`
	Ignore string `json:"ignore"`
}

// Validity qualifies every decision of a comparison.
type Validity struct {
	Status  string   `json:"status"`
	Reasons []string `json:"reasons"`
}

// CellSummary is one column's values of a benchmark and unit, as
// benchstat summarises them: the median and its distribution-free
// interval (benchmath.AssumeNothing). Lo and Hi are null when there are
// too few values for an interval.
type CellSummary struct {
	Column   string   `json:"column"`
	N        int      `json:"n"`
	Center   *float64 `json:"center"`
	Lo       *float64 `json:"lo"`
	Hi       *float64 `json:"hi"`
	Range    string   `json:"range"`
	Warnings []string `json:"warnings"`
	// Values are the cell's values (render comparison draws them); not
	// part of the result.
	Values []float64 `json:"-"`
}

// BenchRow is one benchmark and unit in one column against the baseline
// column: benchstat's cell pair, its delta ("~" where not significant),
// and the decision and validity every comparison carries.
type BenchRow struct {
	Table       string       `json:"table"`
	Benchmark   string       `json:"benchmark"`
	Unit        string       `json:"unit"`
	Old         *CellSummary `json:"old"`
	New         *CellSummary `json:"new"`
	Delta       string       `json:"delta"`
	Ratio       *float64     `json:"ratio"`
	P           *float64     `json:"p"`
	Alpha       float64      `json:"alpha"`
	Significant bool         `json:"significant"`
	Polarity    string       `json:"polarity"`
	Decision    string       `json:"decision"`
	Validity    string       `json:"validity"`
	Warnings    []string     `json:"warnings"`
}

// Geomean is benchstat's geomean line of one table and column.
type Geomean struct {
	Table    string   `json:"table"`
	Unit     string   `json:"unit"`
	Column   string   `json:"column"`
	Old      *float64 `json:"old"`
	New      *float64 `json:"new"`
	Delta    string   `json:"delta"`
	Warnings []string `json:"warnings"`
}

// BenchView is the result of `flameox compare RUN_A RUN_B` and MCP
// compare_runs.
type BenchView struct {
	SchemaVersion  int        `json:"schema_version"`
	CorpusCommitID string     `json:"corpus_commit_id"`
	RunA           string     `json:"run_a"`
	RunB           string     `json:"run_b"`
	Method         string     `json:"method"`
	Projection     Projection `json:"projection"`
	Confidence     float64    `json:"confidence"`
	Alpha          float64    `json:"alpha"`
	Threshold      float64    `json:"threshold"`
	Validity       Validity   `json:"validity"`
	Total          int        `json:"total"`
	Returned       int        `json:"returned"`
	Truncated      bool       `json:"truncated"`
	Rows           []BenchRow `json:"rows"`
	Geomeans       []Geomean  `json:"geomeans"`
	Warnings       []string   `json:"warnings"`
}

// BenchMethod names how the numbers are computed.
const BenchMethod = "benchstat: median with distribution-free interval, Mann-Whitney U test (golang.org/x/perf/benchmath AssumeNothing)"

// CompareRuns reads two runs' published go test or pyperf values from one
// snapshot and compares them as benchstat compares two files.
func CompareRuns(ctx context.Context, ws *workspace.Workspace, req BenchRequest) (*BenchView, error) {
	req.RunA, req.RunB = strings.TrimSpace(req.RunA), strings.TrimSpace(req.RunB)
	if req.RunA == "" || req.RunB == "" {
		return nil, fault.New(fault.InvalidArguments, "a comparison needs two run ids").With("field", "run_a, run_b")
	}
	if req.RunA == req.RunB {
		return nil, fault.New(fault.InvalidArguments, "run %s compared with itself", req.RunA).With("field", "run_b")
	}
	if _, err := query.Limit(req.Limit); err != nil {
		return nil, err
	}
	runs, err := query.ReadBenchRuns(ctx, ws, req.RunA, req.RunB)
	if err != nil {
		return nil, err
	}
	v, err := BuildBenchView(req, runs.Runs[0].Values, runs.Runs[1].Values)
	if err != nil {
		return nil, err
	}
	v.CorpusCommitID = runs.CorpusCommitID
	v.Validity = benchValidity(runs.Runs[0].Manifest, runs.Runs[1].Manifest)
	if slices.ContainsFunc(append(runs.Runs[0].Values, runs.Runs[1].Values...), func(x query.BenchValue) bool { return x.Producer == "pyperf" }) {
		v.Validity.Reasons = append(v.Validity.Reasons, "pyperf values are pooled over worker processes and tested as independent, as benchstat tests go test repetitions")
	}
	for i := range v.Rows {
		v.Rows[i].Validity = v.Validity.Status
	}
	return v, nil
}

// benchValidity: two unpaired runs are exploratory at best; every
// mismatch that can be seen in the manifests is named.
func benchValidity(a, b *run.Manifest) Validity {
	v := Validity{Status: validityExploratory, Reasons: []string{"unpaired runs: no blocks, order effects not controlled"}}
	add := func(format string, args ...any) { v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...)) }
	if a == nil || b == nil {
		return v
	}
	switch ea, eb := a.Environment, b.Environment; {
	case ea == nil || eb == nil:
		add("environment identity missing for at least one run")
	default:
		if ea.EnvironmentID != eb.EnvironmentID {
			add("different environment (environment_id %s vs %s)", ea.EnvironmentID, eb.EnvironmentID)
		}
		if ea.IdentityQuality != "exact" || eb.IdentityQuality != "exact" {
			add("environment identity is partial (%s, %s)", ea.IdentityQuality, eb.IdentityQuality)
		}
	}
	wa, wb := a.Workload, b.Workload
	switch {
	case wa == nil && wb == nil:
		add("imported results: the workload and collector that produced them are not recorded")
	case wa == nil || wb == nil:
		add("one run is imported, the other captured: different provenance")
	default:
		if wa.Name != wb.Name {
			add("different workloads (%s vs %s)", wa.Name, wb.Name)
		}
		if wa.DefinitionID != wb.DefinitionID {
			add("different workload definition (%s vs %s)", wa.DefinitionID, wb.DefinitionID)
		}
		if wa.Adapter != wb.Adapter {
			add("different adapter (%s vs %s)", wa.Adapter, wb.Adapter)
		}
		if wa.Collector != wb.Collector || wa.CollectorVersion != wb.CollectorVersion {
			add("different collector or version (%s %s vs %s %s)", wa.Collector, wa.CollectorVersion, wb.Collector, wb.CollectorVersion)
		}
	}
	for _, m := range []*run.Manifest{a, b} {
		if m.ValidationStatus == "failed" {
			add("run %s failed validation", m.RunID)
			v.Status = validityInvalid
		}
	}
	return v
}

// result converts one stored value back to the benchfmt.Result benchstat
// would have read from a file: the .file key names the run (benchstat's
// default column), the file configuration keys in sorted order, the full
// name with its GOMAXPROCS suffix, and one value in its tidied unit.
func result(label string, v query.BenchValue) *benchfmt.Result {
	r := &benchfmt.Result{Iters: 1}
	r.Config = append(r.Config, benchfmt.Config{Key: ".file", Value: []byte(label)})
	keys := make([]string, 0, len(v.Config))
	for k := range v.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r.Config = append(r.Config, benchfmt.Config{Key: k, Value: []byte(v.Config[k]), File: true})
	}
	if _, ok := v.Config["pkg"]; !ok && v.Worker != "" {
		r.Config = append(r.Config, benchfmt.Config{Key: "pkg", Value: []byte(v.Worker), File: true})
	}
	name := v.Subject
	if v.Procs != "" {
		name += "-" + v.Procs
	}
	r.Name = benchfmt.Name(name)
	r.Values = []benchfmt.Value{{Value: v.Value, Unit: v.Unit}}
	return r
}

type cellKey struct{ row, col benchproc.Key }

type cell struct {
	values  []float64
	residue map[benchproc.Key]struct{}
	sample  *benchmath.Sample
	summary benchmath.Summary
}

type table struct {
	rows, cols map[benchproc.Key]struct{}
	cells      map[cellKey]*cell
}

// BuildBenchView compares two runs' values. benchstat's table builder
// (cmd/benchstat/internal/benchtab) is internal to x/perf, so this is its
// glue, replicated: the same benchproc filter and projections (-table
// .config, -row, -col, -ignore with its residue), the same cells, and
// every number from benchmath (AssumeNothing: median, its interval, the
// Mann-Whitney U test) as benchstat computes them.
func BuildBenchView(req BenchRequest, a, b []query.BenchValue) (*BenchView, error) {
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	if req.Threshold < 0 || math.IsNaN(req.Threshold) || math.IsInf(req.Threshold, 0) {
		return nil, fault.New(fault.InvalidArguments, "threshold %v is not a fraction >= 0", req.Threshold).With("field", "threshold")
	}
	p := Projection{Filter: orDefault(req.Filter, "*"), Table: ".config", Row: orDefault(req.Row, ".fullname"), Col: orDefault(req.Col, ".file"), Ignore: req.Ignore}
	filter, err := benchproc.NewFilter(p.Filter)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "parsing filter %q", p.Filter).With("field", "filter")
	}
	var parser benchproc.ProjectionParser
	tableBy, _, err := parser.ParseWithUnit(p.Table, filter)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "parsing the table projection").With("field", "table")
	}
	rowBy, err := parser.Parse(p.Row, filter)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "parsing row %q", p.Row).With("field", "row")
	}
	colBy, err := parser.Parse(p.Col, filter)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "parsing col %q", p.Col).With("field", "col")
	}
	if _, err := parser.Parse(p.Ignore, filter); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "parsing ignore %q", p.Ignore).With("field", "ignore")
	}
	residue := parser.Residue()
	fields := tableBy.Fields()
	unitField := fields[len(fields)-1]

	v := &BenchView{SchemaVersion: 1, RunA: req.RunA, RunB: req.RunB, Method: BenchMethod, Projection: p,
		Confidence: BenchConfidence, Alpha: benchmath.DefaultThresholds.CompareAlpha, Threshold: req.Threshold,
		Validity: Validity{Status: validityExploratory, Reasons: []string{"unpaired runs: no blocks, order effects not controlled"}},
		Rows:     []BenchRow{}, Geomeans: []Geomean{}, Warnings: []string{}}
	tables := map[benchproc.Key]*table{}
	skipped := 0
	for side, values := range [][]query.BenchValue{a, b} {
		label := req.RunA
		if side == 1 {
			label = req.RunB
		}
		if label == "" {
			label = [2]string{"A", "B"}[side]
		}
		for _, x := range values {
			if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
				skipped++
				continue
			}
			res := result(label, x)
			if ok, err := filter.Apply(res); !ok || err != nil {
				continue
			}
			tableKeys := tableBy.ProjectValues(res)
			ck := cellKey{rowBy.Project(res), colBy.Project(res)}
			rk := residue.Project(res)
			for i, tk := range tableKeys {
				t := tables[tk]
				if t == nil {
					t = &table{rows: map[benchproc.Key]struct{}{}, cols: map[benchproc.Key]struct{}{}, cells: map[cellKey]*cell{}}
					tables[tk] = t
				}
				c := t.cells[ck]
				if c == nil {
					c = &cell{residue: map[benchproc.Key]struct{}{}}
					t.cells[ck] = c
					t.rows[ck.row], t.cols[ck.col] = struct{}{}, struct{}{}
				}
				c.values = append(c.values, res.Values[i].Value)
				c.residue[rk] = struct{}{}
			}
		}
	}
	if skipped > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%d values that are not finite numbers were left out", skipped))
	}
	if keys := differingKeys(a, b); len(keys) > 0 && !compared(tables) && len(a) > 0 && len(b) > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("no benchmark is in both runs under one configuration: they differ in %s; as in benchstat, --ignore %s compares them",
			strings.Join(keys, ", "), strings.Join(keys, ",")))
	}
	if len(tables) == 0 {
		v.Warnings = append(v.Warnings, "no go test or pyperf benchmark values to compare (after the filter)")
	}
	thresholds := benchmath.DefaultThresholds
	assumption := benchmath.AssumeNothing
	for _, tk := range sortedKeys(tables) {
		t := tables[tk]
		unit := tk.Get(unitField)
		label := tableLabel(tk)
		rows, cols := sortedKeys(t.rows), sortedKeys(t.cols)
		for _, c := range t.cells {
			c.sample = benchmath.NewSample(c.values, &thresholds)
			c.summary = assumption.Summary(c.sample, BenchConfidence)
			if nsk := benchproc.NonSingularFields(sortedKeys(c.residue)); len(nsk) > 0 {
				names := make([]string, len(nsk))
				for i, f := range nsk {
					names[i] = f.Name
				}
				c.sample.Warnings = append(c.sample.Warnings, fmt.Errorf("benchmarks vary in %s", strings.Join(names, ", ")))
			}
		}
		base := cols[0]
		pol := UnitPolarity(unit)
		for _, rk := range rows {
			old := t.cells[cellKey{rk, base}]
			emitted := false
			for _, ck := range cols[1:] {
				nw := t.cells[cellKey{rk, ck}]
				if nw == nil && old == nil {
					continue
				}
				emitted = true
				v.Rows = append(v.Rows, benchRow(label, rk.StringValues(), unit, pol, req.Threshold, base.StringValues(), ck.StringValues(), old, nw, assumption))
			}
			if !emitted && old != nil {
				v.Rows = append(v.Rows, benchRow(label, rk.StringValues(), unit, pol, req.Threshold, base.StringValues(), "", old, nil, assumption))
			}
		}
		if len(rows) > 1 {
			for _, ck := range cols[1:] {
				v.Geomeans = append(v.Geomeans, geomean(label, unit, t, rows, base, ck))
			}
		}
	}
	v.Total = len(v.Rows)
	if len(v.Rows) > limit {
		v.Rows, v.Truncated = v.Rows[:limit], true
	}
	v.Returned = len(v.Rows)
	return v, nil
}

func benchRow(tableLabel, name, unit, pol string, threshold float64, baseCol, col string, old, nw *cell, assumption benchmath.Assumption) BenchRow {
	r := BenchRow{Table: tableLabel, Benchmark: name, Unit: unit, Alpha: benchmath.DefaultThresholds.CompareAlpha, Polarity: pol,
		Validity: validityExploratory, Warnings: []string{}}
	r.Old, r.New = summaryOf(baseCol, old), summaryOf(col, nw)
	if old == nil || nw == nil {
		r.Decision = decInconclusive
		if pol == polNeutral {
			r.Decision = decDescriptive
		}
		if old == nil {
			r.Warnings = append(r.Warnings, "not in the baseline column")
		} else if col != "" {
			r.Warnings = append(r.Warnings, "not in column "+col)
		} else {
			r.Warnings = append(r.Warnings, "only one column: nothing to compare with")
		}
		return r
	}
	cmp := assumption.Compare(old.sample, nw.sample)
	for _, w := range cmp.Warnings {
		r.Warnings = append(r.Warnings, w.Error())
	}
	r.Delta = cmp.FormatDelta(old.summary.Center, nw.summary.Center)
	r.P, r.Alpha = finite(cmp.P), cmp.Alpha
	r.Significant = cmp.P < cmp.Alpha
	ratio := math.NaN()
	switch a, b := nw.summary.Center, old.summary.Center; {
	case a == b:
		ratio = 1
	case b != 0:
		ratio = a / b
	}
	r.Ratio = finite(ratio)
	lo, hi := ratioBounds(old.summary, nw.summary)
	r.Decision = decide(pol, r.Significant, ratio, lo, hi, threshold)
	// benchmath calls two constant samples that differ significantly
	// different whatever their size (p = 0 for 3 values against 1); a
	// decision needs as many values per side as a 95% interval for the
	// median does, benchstat's "need >= 6 samples".
	if need := stats.MinMedianN(1 - r.Alpha); (len(old.values) < need || len(nw.values) < need) && r.Decision != decDescriptive && r.Decision != decInconclusive {
		r.Decision = decInconclusive
		r.Warnings = append(r.Warnings, fmt.Sprintf("fewer than %d values on a side: too few for a decision", need))
	}
	return r
}

// decide is the decision of one benchmark and unit: descriptive_only
// without a polarity; otherwise, at threshold 0, benchstat's own verdict:
// a significant U test is a meaningful change in the direction the
// medians moved, anything else inconclusive (never "equivalent").
// Beyond a practical threshold the rule is the confirmatory comparison's,
// on the ratio's bounds [lo, hi] (ratioBounds): meaningful only when the
// change is significant and the whole of [lo, hi] lies beyond the
// threshold, no_meaningful_difference only when it lies inside it, else
// inconclusive. A point estimate past the threshold is not enough: the
// simulation in docs/statistics.md found half of all true 5% effects
// called meaningful at a threshold of 0.05, and the other half "no
// meaningful difference", when the medians' ratio alone decided.
func decide(pol string, significant bool, ratio, lo, hi, threshold float64) string {
	switch {
	case pol == polNeutral:
		return decDescriptive
	case threshold > 0 && lo >= 1-threshold && hi <= 1+threshold:
		return decNoDifference
	case !significant || math.IsNaN(ratio) || ratio == 1:
		return decInconclusive
	case threshold == 0 && (ratio < 1) == (pol == polLower):
		return decImprovement
	case threshold == 0:
		return decRegression
	}
	better, worse := hi < 1-threshold, lo > 1+threshold
	if pol == polHigher {
		better, worse = lo > 1+threshold, hi < 1-threshold
	}
	switch {
	case better:
		return decImprovement
	case worse:
		return decRegression
	}
	return decInconclusive
}

// ratioBounds bounds the ratio of the new median to the old from the two
// sides' distribution-free median intervals (benchmath's, as printed):
// [new.Lo / old.Hi, new.Hi / old.Lo], the ratio of medians whenever both
// intervals hold theirs. benchmath gives no interval for a ratio of
// medians of unpaired samples, and this one needs no statistic beyond
// benchstat's; it is conservative (docs/statistics.md reports its
// coverage). NaN when a side has no finite interval or the old one is
// not positive.
func ratioBounds(old, nw benchmath.Summary) (lo, hi float64) {
	for _, x := range []float64{old.Lo, old.Hi, nw.Lo, nw.Hi} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return math.NaN(), math.NaN()
		}
	}
	if !(old.Lo > 0) || nw.Lo < 0 {
		return math.NaN(), math.NaN()
	}
	return nw.Lo / old.Hi, nw.Hi / old.Lo
}

// UnitPolarity: lower is better for time, bytes and allocations per
// operation (and pyperf's seconds and bytes), higher for throughput
// (B/s); any other unit has no known direction.
func UnitPolarity(unit string) string {
	switch {
	case unit == "B/s" || strings.HasSuffix(unit, "-B/s"):
		return polHigher
	case unit == "sec" || unit == "sec/op" || strings.HasSuffix(unit, "-sec/op") || unit == "ns/op" || strings.HasSuffix(unit, "-ns/op"),
		unit == "B/op" || strings.HasSuffix(unit, "-B/op"), unit == "allocs/op" || strings.HasSuffix(unit, "-allocs/op"),
		unit == "bytes":
		return polLower
	}
	return polNeutral
}

func summaryOf(col string, c *cell) *CellSummary {
	if c == nil {
		return nil
	}
	s := &CellSummary{Column: col, N: len(c.values), Center: finite(c.summary.Center), Lo: finite(c.summary.Lo), Hi: finite(c.summary.Hi),
		Range: c.summary.PctRangeString(), Warnings: []string{}, Values: c.values}
	for _, w := range c.sample.Warnings {
		s.Warnings = append(s.Warnings, w.Error())
	}
	for _, w := range c.summary.Warnings {
		s.Warnings = append(s.Warnings, w.Error())
	}
	return s
}

// geomean is benchstat's summary line (summarizeCol): the geometric
// means of the medians and of the ratios, with its warnings.
func geomean(label, unit string, t *table, rows []benchproc.Key, base, col benchproc.Key) Geomean {
	g := Geomean{Table: label, Unit: unit, Column: col.StringValues(), Delta: "?", Warnings: []string{}}
	var olds, news, ratios []float64
	nBase, bad := 0, false
	for _, rk := range rows {
		o, n := t.cells[cellKey{rk, base}], t.cells[cellKey{rk, col}]
		if o != nil {
			nBase++
			olds = append(olds, o.summary.Center)
		}
		if n != nil {
			news = append(news, n.summary.Center)
		}
		if o != nil && n != nil {
			a, b := n.summary.Center, o.summary.Center
			switch {
			case a == b:
				ratios = append(ratios, 1)
			case b == 0:
				bad = true
			default:
				ratios = append(ratios, a/b)
			}
		}
	}
	if nBase != len(ratios) && !bad {
		g.Warnings = append(g.Warnings, "benchmark set differs from baseline; geomeans may not be comparable")
	}
	if gm, ok := geoMean(olds); ok {
		g.Old = &gm
	} else {
		g.Warnings = append(g.Warnings, "summaries must be >0 to compute geomean")
	}
	if gm, ok := geoMean(news); ok {
		g.New = &gm
	} else if g.Old != nil {
		g.Warnings = append(g.Warnings, "summaries must be >0 to compute geomean")
	}
	if !bad {
		if gm, ok := geoMean(ratios); ok {
			g.Delta = fmt.Sprintf("%+.2f%%", (gm-1)*100)
		} else {
			g.Warnings = append(g.Warnings, "ratios must be >0 to compute geomean")
		}
	}
	return g
}

// geoMean is exp(mean(log x)), as go-moremath's stats.GeoMean (what
// benchstat uses); false when a value is not > 0 or there is none.
func geoMean(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := 0.0
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return 0, false
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs))), true
}

func tableLabel(k benchproc.Key) string {
	var kv []string
	for _, f := range k.Projection().FlattenedFields() {
		if f.Name == ".unit" {
			continue
		}
		if val := k.Get(f); val != "" {
			kv = append(kv, f.Name+"="+val)
		}
	}
	return strings.Join(kv, " ")
}

func sortedKeys[V any](m map[benchproc.Key]V) []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// differingKeys are the configuration keys whose values the two runs do
// not share (a note: line, a toolchain), sorted.
func differingKeys(a, b []query.BenchValue) []string {
	seen := func(vs []query.BenchValue) map[string]map[string]bool {
		m := map[string]map[string]bool{}
		for _, v := range vs {
			for k, x := range v.Config {
				if m[k] == nil {
					m[k] = map[string]bool{}
				}
				m[k][x] = true
			}
		}
		return m
	}
	sa, sb := seen(a), seen(b)
	var out []string
	for k, va := range sa {
		vb := sb[k]
		shared := false
		for x := range va {
			if vb[x] {
				shared = true
				break
			}
		}
		if !shared {
			out = append(out, k)
		}
	}
	for k := range sb {
		if _, ok := sa[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// compared says whether some cell has both a baseline and another column.
func compared(tables map[benchproc.Key]*table) bool {
	for _, t := range tables {
		if len(t.cols) > 1 {
			return true
		}
	}
	return false
}
