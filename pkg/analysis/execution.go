package analysis

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// OpExecution is the execution analysis's operation name.
const (
	OpExecution      = "execution"
	ExecutionVersion = "1"
)

// maxExecutionRows bounds the observations one side reads.
const maxExecutionRows = 2_000_000

// ExecutionRequest asks what ran in a run, and with Against what changed
// from it to another.
type ExecutionRequest struct {
	Input   string `json:"input" jsonschema:"run id with execution evidence"`
	Against string `json:"against,omitempty" jsonschema:"a second run to diff against"`
	Limit   int    `json:"limit,omitempty" jsonschema:"rows per list (default 20, max 1000)"`
}

// Flags registers --against and --limit (`flameox analyze execution`).
func (r *ExecutionRequest) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Against, "against", "", "a second run: what was added, removed or changed from RUN to it")
	fs.IntVar(&r.Limit, "limit", 20, "rows per list (max 1000)")
}

// ExecutionFact is one observation a run recorded: an SDK observation
// (kind observation) or a configuration fact (kind configuration), with
// its values.
type ExecutionFact struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Context string `json:"context,omitempty"`
	// Values are the distinct values recorded (canonical JSON), with how
	// often each was.
	Values []FactValue `json:"values"`
}

// FactValue is one value of a fact.
type FactValue struct {
	Value         json.RawMessage `json:"value"`
	Count         int64           `json:"count"`
	ObservationID string          `json:"observation_id"`
}

// ExecutionPhase is the time a run spent in one SDK phase.
type ExecutionPhase struct {
	Name    string `json:"name"`
	Count   int64  `json:"count"`
	TotalNs int64  `json:"total_ns"`
	MaxNs   int64  `json:"max_ns"`
}

// ExecutionFile is one file's coverage in a run.
type ExecutionFile struct {
	File string `json:"file"`
	// Units and Executed count lines (coverage.py) or blocks (Go).
	Unit         string `json:"unit"`
	Units        int64  `json:"units"`
	Executed     int64  `json:"executed"`
	Arcs         int64  `json:"arcs"`
	ArcsExecuted int64  `json:"arcs_executed"`
}

// ExecutionCoverage is a run's coverage totals, as its collector reported
// them (the coverage.* measurements).
type ExecutionCoverage struct {
	Statements        *float64 `json:"statements,omitempty"`
	CoveredStatements *float64 `json:"covered_statements,omitempty"`
	PercentCovered    *float64 `json:"percent_covered,omitempty"`
	Branches          *float64 `json:"branches,omitempty"`
	CoveredBranches   *float64 `json:"covered_branches,omitempty"`
	Files             int      `json:"files"`
}

// ExecutionSide is what one run's execution evidence holds.
type ExecutionSide struct {
	RunID    string             `json:"run_id"`
	Coverage *ExecutionCoverage `json:"coverage,omitempty"`
	// Files are the covered files, most executed first (Limit of them).
	Files      []ExecutionFile  `json:"files"`
	FilesTotal int              `json:"files_total"`
	Facts      []ExecutionFact  `json:"facts"`
	FactsTotal int              `json:"facts_total"`
	Phases     []ExecutionPhase `json:"phases"`
	// Artifacts are the artifacts the evidence came from.
	Artifacts []string `json:"artifacts"`
}

// LineRange is a run of consecutive lines.
type LineRange struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// FileChange is what ran differently in one file.
type FileChange struct {
	File string `json:"file"`
	// NowExecuted are the lines (or block lines) the candidate executed
	// and the base did not; NoLongerExecuted the reverse.
	NowExecuted      []LineRange `json:"now_executed"`
	NoLongerExecuted []LineRange `json:"no_longer_executed"`
	ArcsAdded        int         `json:"arcs_added"`
	ArcsRemoved      int         `json:"arcs_removed"`
	// Status is added (the file ran only in the candidate), removed
	// (only in the base) or changed.
	Status string `json:"status"`
}

// FactChange is a fact whose values differ between the runs.
type FactChange struct {
	Kind      string      `json:"kind"`
	Name      string      `json:"name"`
	Context   string      `json:"context,omitempty"`
	Status    string      `json:"status"` // changed, added, removed
	Base      []FactValue `json:"base"`
	Candidate []FactValue `json:"candidate"`
}

// PhaseChange is one phase's time on both sides.
type PhaseChange struct {
	Name      string `json:"name"`
	BaseNs    int64  `json:"base_total_ns"`
	CandNs    int64  `json:"candidate_total_ns"`
	DeltaNs   int64  `json:"delta_ns"`
	BaseCount int64  `json:"base_count"`
	CandCount int64  `json:"candidate_count"`
}

// ExecutionChanges is what differs between two runs' execution.
type ExecutionChanges struct {
	Facts        []FactChange  `json:"facts"`
	FactsTotal   int           `json:"facts_total"`
	Files        []FileChange  `json:"files"`
	FilesTotal   int           `json:"files_total"`
	Phases       []PhaseChange `json:"phases"`
	Truncated    bool          `json:"truncated"`
	Identical    bool          `json:"identical"`
	CoverageBoth bool          `json:"coverage_on_both_sides"`
}

// ExecutionResult is the result of `flameox analyze execution` and MCP
// analyze_execution.
type ExecutionResult struct {
	SchemaVersion    int               `json:"schema_version"`
	Operation        string            `json:"operation"`
	OperationVersion string            `json:"operation_version"`
	CorpusCommitID   string            `json:"corpus_commit_id"`
	Parameters       ExecutionRequest  `json:"parameters"`
	Base             ExecutionSide     `json:"base"`
	Candidate        *ExecutionSide    `json:"candidate,omitempty"`
	Changes          *ExecutionChanges `json:"changes,omitempty"`
	EvidenceLevel    string            `json:"evidence_level"`
	Limitations      []string          `json:"limitations"`
	fault.Next
}

// ExecutionOutput is `flameox analyze execution --json` and the MCP
// result: the analysis, and its recording when asked.
type ExecutionOutput struct {
	*ExecutionResult
	Recorded *Recorded `json:"recorded,omitempty"`
}

func (r *ExecutionResult) provenance() (string, string, string, any, Source, any, []string) {
	src := Source{RunID: r.Base.RunID}
	if len(r.Base.Artifacts) > 0 {
		src.ArtifactID = r.Base.Artifacts[0]
	}
	cov := map[string]any{"base_facts": r.Base.FactsTotal, "base_files": r.Base.FilesTotal}
	if r.Candidate != nil {
		cov["candidate_facts"], cov["candidate_files"] = r.Candidate.FactsTotal, r.Candidate.FilesTotal
	}
	return r.Operation, r.OperationVersion, r.CorpusCommitID, r.Parameters, src, cov, r.Limitations
}

func (r *ExecutionResult) inputs() (runs, artifacts, generations []string) {
	runs = []string{r.Base.RunID}
	artifacts = append([]string{}, r.Base.Artifacts...)
	if r.Candidate != nil {
		runs = append(runs, r.Candidate.RunID)
		artifacts = append(artifacts, r.Candidate.Artifacts...)
	}
	return runs, artifacts, []string{}
}

// qExecutionRows reads a run's observations at their latest generation.
var qExecutionRows = catalog.Query{Name: "analysis.execution_rows", Version: "1", SQL: `
SELECT observation_id, coalesce(artifact_id, ''), kind, name, value_json, coalesce(file, ''), coalesce(line_from, 0), coalesce(line_to, 0),
       coalesce(context, '')
FROM observations WHERE run_id = $1
QUALIFY row_number() OVER (PARTITION BY observation_id ORDER BY published_at DESC, evidence_generation_id DESC) = 1
ORDER BY kind, name, file, line_from, line_to, context, observation_id
LIMIT $2`}

// qExecutionTotals reads a run's coverage totals.
var qExecutionTotals = catalog.Query{Name: "analysis.execution_totals", Version: "1", SQL: `
SELECT name, coalesce(value_float, value_int::DOUBLE) FROM measurements
WHERE run_id = $1 AND name IN ('coverage.statements', 'coverage.covered_statements', 'coverage.percent_covered', 'coverage.branches', 'coverage.covered_branches')
QUALIFY row_number() OVER (PARTITION BY measurement_id ORDER BY published_at DESC, evidence_generation_id DESC) = 1`}

// execRow is one observation.
type execRow struct {
	id, art, kind, name, value, file string
	from, to                         int
	context                          string
}

// execData is one run's observations, organised.
type execData struct {
	side  ExecutionSide
	facts map[string]*ExecutionFact // kind, name, context
	// lines are each file's executed and known lines; arcs its executed
	// and known arcs.
	lines    map[string]map[int]bool
	arcs     map[string]map[[2]int]bool
	unit     map[string]string
	phases   map[string]ExecutionPhase
	coverage bool
}

// Execution reads a run's execution evidence: coverage per file, the SDK
// observations and configuration facts, the phases; with Against, what
// was added, removed or changed.
func Execution(ctx context.Context, ws *workspace.Workspace, req ExecutionRequest) (*ExecutionResult, error) {
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	s, err := query.Open(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &ExecutionResult{SchemaVersion: 1, Operation: OpExecution, OperationVersion: ExecutionVersion, CorpusCommitID: s.Commit(),
		Parameters: req, EvidenceLevel: "observed",
		Limitations: []string{"coverage is not causality: a line that ran in one run and not in the other ran differently, which does not say it caused any other difference",
			"observations are what the program recorded about itself (SDK calls, collector metadata): they say nothing of what it did not record"}}
	res.NextSteps = []string{}
	base, err := readExecution(ctx, s, req.Input, limit)
	if err != nil {
		return nil, sideFault(err, "input", req.Input)
	}
	res.Base = base.side
	if strings.TrimSpace(req.Against) == "" {
		return res, nil
	}
	cand, err := readExecution(ctx, s, req.Against, limit)
	if err != nil {
		return nil, sideFault(err, "against", req.Against)
	}
	res.Candidate = &cand.side
	res.Changes = executionChanges(base, cand, limit)
	res.EvidenceLevel = "derived"
	if base.coverage != cand.coverage {
		res.Limitations = append(res.Limitations, "only one of the runs carries coverage: file changes are not shown")
	}
	return res, nil
}

func readExecution(ctx context.Context, s *query.Session, runID string, limit int) (*execData, error) {
	runID = strings.TrimSpace(runID)
	if !run.ValidID(runID) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a run id", runID)
	}
	d := &execData{side: ExecutionSide{RunID: runID, Files: []ExecutionFile{}, Facts: []ExecutionFact{}, Phases: []ExecutionPhase{}, Artifacts: []string{}},
		facts: map[string]*ExecutionFact{}, lines: map[string]map[int]bool{}, arcs: map[string]map[[2]int]bool{}, unit: map[string]string{},
		phases: map[string]ExecutionPhase{}}
	arts := map[string]bool{}
	n := 0
	err := s.R.Scan(ctx, qExecutionRows, []any{runID, maxExecutionRows + 1}, func(r *sql.Rows) error {
		for r.Next() {
			var x execRow
			if err := r.Scan(&x.id, &x.art, &x.kind, &x.name, &x.value, &x.file, &x.from, &x.to, &x.context); err != nil {
				return err
			}
			if n++; n > maxExecutionRows {
				return fault.New(fault.QueryBudgetExceeded, "run %s has more than %d observations", runID, maxExecutionRows).With("run_id", runID)
			}
			if x.art != "" && !arts[x.art] {
				arts[x.art] = true
				d.side.Artifacts = append(d.side.Artifacts, x.art)
			}
			d.add(x)
		}
		return r.Err()
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fault.New(fault.NotFound, "run %s has no execution evidence (coverage, SDK observations or configuration facts) at corpus commit %s", runID, s.Commit()).
			With("run_id", runID).Fix("Capture with coverage (`flameox capture run coverage --workload NAME`, or a gotest workload with options.coverage = \"true\"), or record facts with contrib/python/flameox_observe.py or contrib/go/observe.")
	}
	cov := &ExecutionCoverage{}
	found := false
	err = s.R.Scan(ctx, qExecutionTotals, []any{runID}, func(r *sql.Rows) error {
		for r.Next() {
			var name string
			var v sql.NullFloat64
			if err := r.Scan(&name, &v); err != nil {
				return err
			}
			if !v.Valid {
				continue
			}
			found = true
			x := v.Float64
			switch name {
			case "coverage.statements":
				cov.Statements = &x
			case "coverage.covered_statements":
				cov.CoveredStatements = &x
			case "coverage.percent_covered":
				cov.PercentCovered = &x
			case "coverage.branches":
				cov.Branches = &x
			case "coverage.covered_branches":
				cov.CoveredBranches = &x
			}
		}
		return r.Err()
	})
	if err != nil {
		return nil, err
	}
	if found || d.coverage {
		cov.Files = len(d.lines)
		d.side.Coverage = cov
	}
	d.finish(limit)
	return d, nil
}

// add files one observation.
func (d *execData) add(x execRow) {
	switch {
	case x.kind == "line_hit" && strings.HasPrefix(x.name, "coverage."):
		d.coverage = true
		var v struct {
			Hits int64 `json:"hits"`
		}
		_ = json.Unmarshal([]byte(x.value), &v)
		m := d.lines[x.file]
		if m == nil {
			m = map[int]bool{}
			d.lines[x.file] = m
			d.unit[x.file] = "line"
		}
		if x.name == "coverage.block" {
			d.unit[x.file] = "block line"
		}
		to := max(x.to, x.from)
		for l := x.from; l <= to && l-x.from < 1<<16; l++ {
			m[l] = m[l] || v.Hits > 0
		}
	case x.kind == "branch_arc" && strings.HasPrefix(x.name, "coverage."):
		d.coverage = true
		var v struct {
			Executed bool `json:"executed"`
		}
		_ = json.Unmarshal([]byte(x.value), &v)
		m := d.arcs[x.file]
		if m == nil {
			m = map[[2]int]bool{}
			d.arcs[x.file] = m
		}
		k := [2]int{x.from, x.to}
		m[k] = m[k] || v.Executed
	case x.kind == "summary" && strings.HasPrefix(x.name, "coverage."):
		d.coverage = true
	case x.kind == "phase":
		var v struct {
			Count   int64 `json:"count"`
			TotalNs int64 `json:"total_ns"`
			MaxNs   int64 `json:"max_ns"`
		}
		_ = json.Unmarshal([]byte(x.value), &v)
		d.phases[x.name] = ExecutionPhase{Name: x.name, Count: v.Count, TotalNs: v.TotalNs, MaxNs: v.MaxNs}
	default:
		// SDK observations, configuration facts and anything else.
		key := x.kind + "\x00" + x.name + "\x00" + x.context
		f := d.facts[key]
		if f == nil {
			f = &ExecutionFact{Kind: x.kind, Name: x.name, Context: x.context, Values: []FactValue{}}
			d.facts[key] = f
		}
		fv := FactValue{Value: json.RawMessage(x.value), Count: 1, ObservationID: x.id}
		if x.kind == "observation" {
			var v struct {
				Value json.RawMessage `json:"value"`
				Count int64           `json:"count"`
			}
			if json.Unmarshal([]byte(x.value), &v) == nil && v.Value != nil {
				fv.Value, fv.Count = v.Value, v.Count
			}
		}
		if !json.Valid(fv.Value) {
			b, _ := json.Marshal(string(fv.Value))
			fv.Value = b
		}
		f.Values = append(f.Values, fv)
	}
}

// finish fills the side's lists, bounded.
func (d *execData) finish(limit int) {
	for file, m := range d.lines {
		f := ExecutionFile{File: file, Unit: d.unit[file], Units: int64(len(m))}
		for _, ran := range m {
			if ran {
				f.Executed++
			}
		}
		for _, ran := range d.arcs[file] {
			f.Arcs++
			if ran {
				f.ArcsExecuted++
			}
		}
		d.side.Files = append(d.side.Files, f)
	}
	sort.Slice(d.side.Files, func(i, j int) bool {
		a, b := d.side.Files[i], d.side.Files[j]
		if a.Executed != b.Executed {
			return a.Executed > b.Executed
		}
		return a.File < b.File
	})
	d.side.FilesTotal = len(d.side.Files)
	if len(d.side.Files) > limit {
		d.side.Files = d.side.Files[:limit]
	}
	for _, f := range d.facts {
		sort.Slice(f.Values, func(i, j int) bool { return string(f.Values[i].Value) < string(f.Values[j].Value) })
		d.side.Facts = append(d.side.Facts, *f)
	}
	sortFacts(d.side.Facts)
	d.side.FactsTotal = len(d.side.Facts)
	if len(d.side.Facts) > limit {
		d.side.Facts = d.side.Facts[:limit]
	}
	for _, p := range d.phases {
		d.side.Phases = append(d.side.Phases, p)
	}
	sort.Slice(d.side.Phases, func(i, j int) bool { return d.side.Phases[i].Name < d.side.Phases[j].Name })
}

// sortFacts orders SDK observations first, then by name and context.
func sortFacts(fs []ExecutionFact) {
	rank := func(k string) int {
		if k == "observation" {
			return 0
		}
		return 1
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if rank(a.Kind) != rank(b.Kind) {
			return rank(a.Kind) < rank(b.Kind)
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Context < b.Context
	})
}

func valueSet(vs []FactValue) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v.Value)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x00")
}

// executionChanges compares two runs' evidence.
func executionChanges(b, c *execData, limit int) *ExecutionChanges {
	ch := &ExecutionChanges{Facts: []FactChange{}, Files: []FileChange{}, Phases: []PhaseChange{}, CoverageBoth: b.coverage && c.coverage}
	keys := map[string]bool{}
	for k := range b.facts {
		keys[k] = true
	}
	for k := range c.facts {
		keys[k] = true
	}
	for k := range keys {
		bf, cf := b.facts[k], c.facts[k]
		var fc FactChange
		switch {
		case bf == nil:
			fc = FactChange{Kind: cf.Kind, Name: cf.Name, Context: cf.Context, Status: "added", Base: []FactValue{}, Candidate: cf.Values}
		case cf == nil:
			fc = FactChange{Kind: bf.Kind, Name: bf.Name, Context: bf.Context, Status: "removed", Base: bf.Values, Candidate: []FactValue{}}
		case valueSet(bf.Values) != valueSet(cf.Values):
			fc = FactChange{Kind: bf.Kind, Name: bf.Name, Context: bf.Context, Status: "changed", Base: bf.Values, Candidate: cf.Values}
		default:
			continue
		}
		ch.Facts = append(ch.Facts, fc)
	}
	sort.Slice(ch.Facts, func(i, j int) bool {
		a, x := ch.Facts[i], ch.Facts[j]
		order := map[string]int{"changed": 0, "added": 1, "removed": 2}
		if a.Kind != x.Kind && (a.Kind == "observation" || x.Kind == "observation") {
			return a.Kind == "observation"
		}
		if order[a.Status] != order[x.Status] {
			return order[a.Status] < order[x.Status]
		}
		if a.Name != x.Name {
			return a.Name < x.Name
		}
		return a.Context < x.Context
	})
	ch.FactsTotal = len(ch.Facts)
	if len(ch.Facts) > limit {
		ch.Facts, ch.Truncated = ch.Facts[:limit], true
	}
	if ch.CoverageBoth {
		files := map[string]bool{}
		for f := range b.lines {
			files[f] = true
		}
		for f := range c.lines {
			files[f] = true
		}
		for f := range files {
			bl, cl := b.lines[f], c.lines[f]
			fc := FileChange{File: f, NowExecuted: ranges(executedOnly(cl, bl)), NoLongerExecuted: ranges(executedOnly(bl, cl)), Status: "changed"}
			ba, ca := b.arcs[f], c.arcs[f]
			for a, ran := range ca {
				if ran && !ba[a] {
					fc.ArcsAdded++
				}
			}
			for a, ran := range ba {
				if ran && !ca[a] {
					fc.ArcsRemoved++
				}
			}
			switch {
			case anyRan(bl) && !anyRan(cl):
				fc.Status = "removed"
			case !anyRan(bl) && anyRan(cl):
				fc.Status = "added"
			}
			if len(fc.NowExecuted)+len(fc.NoLongerExecuted)+fc.ArcsAdded+fc.ArcsRemoved == 0 {
				continue
			}
			ch.Files = append(ch.Files, fc)
		}
		sort.Slice(ch.Files, func(i, j int) bool { return ch.Files[i].File < ch.Files[j].File })
		ch.FilesTotal = len(ch.Files)
		if len(ch.Files) > limit {
			ch.Files, ch.Truncated = ch.Files[:limit], true
		}
	}
	names := map[string]bool{}
	for n := range b.phases {
		names[n] = true
	}
	for n := range c.phases {
		names[n] = true
	}
	for n := range names {
		bp, cp := b.phases[n], c.phases[n]
		ch.Phases = append(ch.Phases, PhaseChange{Name: n, BaseNs: bp.TotalNs, CandNs: cp.TotalNs, DeltaNs: cp.TotalNs - bp.TotalNs, BaseCount: bp.Count, CandCount: cp.Count})
	}
	sort.Slice(ch.Phases, func(i, j int) bool { return ch.Phases[i].Name < ch.Phases[j].Name })
	ch.Identical = ch.FactsTotal == 0 && ch.FilesTotal == 0
	return ch
}

// executedOnly is the lines a executed that b did not.
func executedOnly(a, b map[int]bool) []int {
	var out []int
	for l, ran := range a {
		if ran && !b[l] {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

func anyRan(m map[int]bool) bool {
	for _, ran := range m {
		if ran {
			return true
		}
	}
	return false
}

// ranges joins sorted lines into runs (at most 100; the rest joined into
// the last).
func ranges(lines []int) []LineRange {
	out := []LineRange{}
	for _, l := range lines {
		if n := len(out); n > 0 && out[n-1].To+1 == l {
			out[n-1].To = l
			continue
		}
		if len(out) == 100 {
			out[99].To = l
			continue
		}
		out = append(out, LineRange{From: l, To: l})
	}
	return out
}

// String is a range as "10-12" or "7".
func (r LineRange) String() string {
	if r.From == r.To {
		return fmt.Sprint(r.From)
	}
	return fmt.Sprintf("%d-%d", r.From, r.To)
}
