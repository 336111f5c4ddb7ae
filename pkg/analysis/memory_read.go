package analysis

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
)

// qMemorySet reads a frozen run set's members, with whether each run
// succeeded (a failed attempt's capture is not its memory).
var qMemorySet = catalog.Query{Name: "analysis.memory_set", Version: "1", SQL: `
WITH s AS (SELECT members_json FROM run_sets WHERE run_set_id = $1 LIMIT 1),
m AS (SELECT unnest(from_json(s.members_json, '[{"run_id":"VARCHAR","trial_id":"VARCHAR"}]'), recursive := true) FROM s)
SELECT m.run_id, coalesce(r.execution_status, '')
FROM m LEFT JOIN runs_current r USING (run_id)
ORDER BY m.run_id`}

// qMemoryRows reads, at the latest generation of each measurement, the
// memory figures, the heap timeline, the profile totals (which sample
// types a capture carries) and the process's peak RSS of some runs (or
// of one artifact and its run).
var qMemoryRows = catalog.Query{Name: "analysis.memory_rows", Version: "1", SQL: `
WITH x AS (
  SELECT * FROM measurements
  WHERE (($1 <> '' AND (artifact_id = $1 OR (artifact_id IS NULL AND run_id IN (SELECT run_id FROM artifacts WHERE artifact_id = $1))))
         OR ($1 = '' AND run_id IN (SELECT unnest(from_json($2, '["VARCHAR"]')))))
    AND (name LIKE 'memory.%' OR name IN ('process.peak_rss', 'collector.peak_rss') OR (scope = 'profile' AND name = 'profile.total'))
  QUALIFY row_number() OVER (PARTITION BY measurement_id ORDER BY published_at DESC, evidence_generation_id DESC) = 1),
a AS (SELECT artifact_id, any_value(display_name) AS display_name FROM artifacts
      WHERE artifact_id IN (SELECT artifact_id FROM x) GROUP BY artifact_id)
SELECT x.run_id, coalesce(x.artifact_id, ''), x.evidence_generation_id, epoch_us(x.published_at), x.name, coalesce(x.subject, ''),
       coalesce(x.unit, ''), coalesce(x.value_int, CAST(round(x.value_float) AS BIGINT), 0), coalesce(x.value_index, -1),
       coalesce(x.evidence_level, ''), coalesce(x.dimensions['source'], ''), coalesce(x.dimensions['collector'], ''),
       coalesce(x.dimensions['time'], ''), coalesce(x.dimensions['time_unit'], ''), coalesce(x.dimensions['precision_bytes'], ''),
       coalesce(a.display_name, '')
FROM x LEFT JOIN a USING (artifact_id)
ORDER BY x.run_id, x.name, coalesce(x.value_index, -1)
LIMIT $3`}

// memRow is one row of qMemoryRows.
type memRow struct {
	run, art, gen  string
	at             int64
	name, subject  string
	unit           string
	value, index   int64
	level, source  string
	collector      string
	time, timeUnit string
	precision      string
	display        string
}

// capture is one memory capture of a side: its rows and what it carries.
type memCapture struct {
	src   MemorySource
	at    int64
	rows  []memRow
	types map[string]string // sample type → unit (profile.total)
	lim   []string
}

// readMemorySide reads what one input held.
func readMemorySide(ctx context.Context, s *query.Session, input string, limit, points int) (*MemorySide, error) {
	input = strings.TrimSpace(input)
	kind, err := inputKind(input)
	if err != nil {
		return nil, err
	}
	side := &MemorySide{Input: input, Kind: kind, Runs: []string{}, Sources: []MemorySource{}, Figures: []MemoryFigure{}, Limitations: []string{}}
	var runs []string
	artID := ""
	switch kind {
	case "artifact":
		artID = input
	case "run":
		runs = []string{input}
	case "run_set":
		found, failed := false, 0
		err := s.R.Scan(ctx, qMemorySet, []any{input}, func(r *sql.Rows) error {
			for r.Next() {
				found = true
				var id, status string
				if err := r.Scan(&id, &status); err != nil {
					return err
				}
				if status != "" && status != "succeeded" {
					failed++
					continue
				}
				runs = append(runs, id)
			}
			return r.Err()
		})
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fault.New(fault.NotFound, "no run set %s at corpus commit %s", input, s.Commit()).With("run_set_id", input).
				Fix("List the frozen run sets with `flameox run-sets list`.")
		}
		if failed > 0 {
			side.Limitations = append(side.Limitations, fmt.Sprintf("%d member(s) of %s did not succeed and are not read", failed, input))
		}
		if len(runs) > maxMemoryRuns {
			side.Limitations = append(side.Limitations, fmt.Sprintf("%s has %d succeeded members; the first %d (by run id) are read", input, len(runs), maxMemoryRuns))
			runs = runs[:maxMemoryRuns]
		}
	}
	rj, _ := json.Marshal(nonNil(runs))
	var rows []memRow
	err = s.R.Scan(ctx, qMemoryRows, []any{artID, string(rj), maxTimelineRows + 1}, func(r *sql.Rows) error {
		for r.Next() {
			var m memRow
			if err := r.Scan(&m.run, &m.art, &m.gen, &m.at, &m.name, &m.subject, &m.unit, &m.value, &m.index, &m.level, &m.source,
				&m.collector, &m.time, &m.timeUnit, &m.precision, &m.display); err != nil {
				return err
			}
			rows = append(rows, m)
		}
		return r.Err()
	})
	if err != nil {
		return nil, err
	}
	if len(rows) > maxTimelineRows {
		return nil, fault.New(fault.QueryBudgetExceeded, "%s has more than %d memory rows", input, maxTimelineRows).With("input", input)
	}
	caps, process := groupCaptures(rows)
	if err := describeCaptures(s, caps); err != nil {
		return nil, err
	}
	memCaps := []*memCapture{}
	for _, c := range caps {
		if c.src.Collector != "" {
			memCaps = append(memCaps, c)
		}
	}
	if len(memCaps) == 0 {
		what := map[string]string{"artifact": "artifact", "run": "run", "run_set": "run set's succeeded members"}[kind]
		return nil, fault.New(fault.NotFound, "the %s %s carries no memory capture (memray, massif, heaptrack, or a Go heap profile)", what, input).
			With("input", input).Fix("Capture one: `flameox capture run memray|massif|heaptrack --workload NAME`, a Go test with options.profiles = \"mem\", or `flameox import FILE`.")
	}
	seenRun := map[string]bool{}
	for _, c := range memCaps {
		side.Sources = append(side.Sources, c.src)
		if !seenRun[c.src.RunID] {
			seenRun[c.src.RunID] = true
			side.Runs = append(side.Runs, c.src.RunID)
		}
	}
	side.RunsTotal = len(side.Runs)
	if kind == "run_set" && len(runs) > len(side.Runs) {
		side.Limitations = append(side.Limitations, fmt.Sprintf("%d of the %d runs read carry no memory capture", len(runs)-len(side.Runs), len(runs)))
	}
	if cs := collectors(memCaps); len(cs) > 1 {
		side.Limitations = append(side.Limitations, "the side mixes collectors ("+strings.Join(cs, ", ")+"): figures and stacks are per collector and are not added across them")
	}
	side.Figures = figures(memCaps, process, seenRun)
	for _, role := range []string{"retained", "peak", "allocated"} {
		st, err := topStacks(ctx, s, memCaps, role, limit)
		if err != nil {
			return nil, err
		}
		switch role {
		case "retained":
			side.Retained = st
		case "peak":
			side.Peak = st
		default:
			side.Allocated = st
		}
	}
	for _, c := range memCaps {
		if tl := timeline(c, points); tl != nil {
			side.Timeline = tl
			if len(memCaps) > 1 {
				side.Limitations = append(side.Limitations, fmt.Sprintf("the timeline is the first capture's (run %s) of the %d read", c.src.RunID, len(memCaps)))
			}
			break
		}
	}
	seen := map[string]bool{}
	for _, c := range memCaps {
		for _, l := range append(append([]string{}, c.lim...), collectorNotes[c.src.Collector]...) {
			if !seen[l] {
				seen[l] = true
				side.Limitations = append(side.Limitations, l)
			}
		}
	}
	return side, nil
}

// groupCaptures splits the rows by artifact (each at its latest
// generation), and keeps the run-level process rows apart.
func groupCaptures(rows []memRow) ([]*memCapture, map[string][]memRow) {
	byArt := map[string]*memCapture{}
	var order []string
	process := map[string][]memRow{}
	for _, r := range rows {
		if r.art == "" {
			process[r.run] = append(process[r.run], r)
			continue
		}
		key := r.run + "\x00" + r.art
		c, ok := byArt[key]
		if !ok {
			c = &memCapture{types: map[string]string{}}
			byArt[key] = c
			order = append(order, key)
		}
		if r.at > c.at || (r.at == c.at && r.gen > c.src.GenerationID) {
			c.at, c.src = r.at, MemorySource{RunID: r.run, ArtifactID: r.art, DisplayName: r.display, GenerationID: r.gen}
		}
		c.rows = append(c.rows, r)
	}
	out := make([]*memCapture, 0, len(order))
	for _, k := range order {
		c := byArt[k]
		kept := c.rows[:0]
		for _, r := range c.rows {
			if r.gen != c.src.GenerationID {
				continue
			}
			if r.name == "profile.total" {
				c.types[r.subject] = r.unit
			}
			kept = append(kept, r)
		}
		c.rows = kept
		out = append(out, c)
	}
	return out, process
}

// describeCaptures names each capture's collector and limitations from
// its generation's manifest (the extraction's own record), and keeps
// only memory captures: a collector flameox reads memory from, or a
// profile whose sample types are a Go heap profile's.
func describeCaptures(s *query.Session, caps []*memCapture) error {
	gens := map[string]*corpus.Generation{}
	for _, c := range caps {
		g, ok := gens[c.src.GenerationID]
		if !ok {
			var err error
			g, err = corpus.ReadGeneration(s.WS.Root, corpus.GenerationRef{GenerationID: c.src.GenerationID, Manifest: corpus.GenerationRel(c.src.GenerationID)}, false)
			if err != nil {
				return err
			}
			gens[c.src.GenerationID] = g
		}
		extractor := ""
		for _, x := range g.Extractions {
			if x.RunID == c.src.RunID && x.ArtifactID == c.src.ArtifactID {
				extractor, c.lim = x.Extractor, x.Limitations
				break
			}
		}
		switch extractor {
		case "memray", "massif", "heaptrack":
			c.src.Collector = extractor
		default:
			if _, ok := c.types["inuse_space"]; ok {
				if _, ok := c.types["alloc_space"]; ok {
					c.src.Collector = "go"
				}
			}
		}
	}
	return nil
}

func collectors(caps []*memCapture) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range caps {
		if !seen[c.src.Collector] {
			seen[c.src.Collector] = true
			out = append(out, c.src.Collector)
		}
	}
	return out
}

// collectorNotes are what each collector cannot see or changes, beyond
// what its extraction recorded.
var collectorNotes = map[string][]string{
	"memray":    {"memray tracks every allocation from inside the interpreter: the program runs slower under it (more with --native and --trace-python-allocators), so time figures of a memray run are not the program's, and process.peak_rss includes memray's own memory"},
	"massif":    {"massif runs the program on Valgrind's synthetic CPU, typically about 20 times slower (Valgrind's manual): time figures of a massif run are not the program's, and process.peak_rss is Valgrind's; massif counts heap blocks (plus their extra bytes), not pages: memory mapped with mmap directly is seen only with --pages-as-heap=yes, and stacks only with --stacks=yes"},
	"heaptrack": {"heaptrack intercepts the allocation functions through LD_PRELOAD: memory mapped with mmap directly, or handed out by a custom allocator from its own pool, is not seen"},
	"go":        {"a Go heap profile is sampled (one sample per runtime.MemProfileRate bytes allocated, 512 KiB by default) and scaled: its figures are estimates; in-use figures are as of the most recent completed garbage collection before the profile was written, and memory outside the Go heap (goroutine stacks, runtime metadata, cgo) is not in it"},
}

// figureOrder is the order figures are listed in.
var figureOrder = []string{"memory.peak_heap", "memory.peak_heap.useful", "memory.peak_heap.extra", "memory.peak_stacks", "memory.peak_total",
	"memory.retained_end", "memory.leaked", "memory.retained_allocations", "memory.inuse_space", "memory.inuse_objects",
	"memory.total_allocated", "memory.alloc_space", "memory.allocations", "memory.alloc_objects", "memory.temporary_allocations",
	"memory.peak_rss", "process.peak_rss", "collector.peak_rss"}

// concept says exactly what a figure of a collector is.
func concept(name, collector string) string {
	switch name {
	case "memory.peak_heap":
		switch collector {
		case "massif":
			return "peak heap: the heap's useful bytes plus massif's extra-heap bytes (allocator headers, alignment) at the peak snapshot"
		case "heaptrack":
			return "peak heap: the most heap memory allocated and not yet freed at one moment (heaptrack_print's peak heap memory consumption)"
		}
		return "peak heap: the most memory allocated and not yet freed at one moment (memray stats' peak memory)"
	case "memory.peak_heap.useful":
		return "peak heap, useful bytes only: the bytes the program asked for, live at the peak snapshot"
	case "memory.peak_heap.extra":
		return "peak heap, extra bytes: allocator headers and alignment padding at the peak snapshot"
	case "memory.peak_stacks":
		return "stack bytes at the peak snapshot (0 unless massif ran with --stacks=yes)"
	case "memory.peak_total":
		return "heap, extra-heap and stack bytes at the peak snapshot together"
	case "memory.retained_end":
		if collector == "massif" {
			return "retained at end: the useful heap bytes of massif's last snapshot, taken as the program exited"
		}
		return "retained at end: bytes allocated and never freed when tracking stopped (memray transform csv --leaks)"
	case "memory.leaked":
		return "retained at end (leaked): bytes allocated and never freed when the program exited, as heaptrack_print counts them"
	case "memory.retained_allocations":
		return "allocations still live when tracking stopped"
	case "memory.inuse_space":
		return "in use at the profile: bytes live as of the last garbage collection before the heap profile was written (go test -memprofile writes it after the tests): the Go counterpart of retained at end (sampled estimate)"
	case "memory.inuse_objects":
		return "objects in use at the profile (sampled estimate)"
	case "memory.total_allocated":
		return "total allocated: the sum of every allocation's size over the run, freed or not"
	case "memory.alloc_space":
		return "total allocated: bytes allocated over the program's life, freed or not (sampled estimate)"
	case "memory.allocations":
		return "allocation count: calls to the allocation functions over the run"
	case "memory.alloc_objects":
		return "allocation count: objects allocated over the program's life (sampled estimate)"
	case "memory.temporary_allocations":
		return "temporary allocations: allocations freed again with no other allocation in between (heaptrack's definition)"
	case "memory.peak_rss":
		return "peak RSS as heaptrack sampled it: the process's resident memory, heaptrack's own included"
	case "process.peak_rss":
		return "peak RSS of the process from the run's process record (the kernel's maximum resident set): the collector's own memory included when it runs inside the process"
	case "collector.peak_rss":
		return "peak RSS of the collector's process tree, from the run's process record"
	}
	return ""
}

// goFigures maps a Go heap profile's sample types to its figures.
var goFigures = map[string]string{"inuse_space": "memory.inuse_space", "inuse_objects": "memory.inuse_objects",
	"alloc_space": "memory.alloc_space", "alloc_objects": "memory.alloc_objects"}

// figures are the median over the side's captures of each figure.
func figures(caps []*memCapture, process map[string][]memRow, runs map[string]bool) []MemoryFigure {
	type acc struct {
		f    MemoryFigure
		vals []int64
		prec int64
	}
	byKey := map[string]*acc{}
	add := func(name, unit, collector, source, level string, v, prec int64) {
		key := name + "\x00" + collector
		a, ok := byKey[key]
		if !ok {
			a = &acc{f: MemoryFigure{Name: name, Concept: concept(name, collector), Unit: unit, Collector: collector, Source: source, EvidenceLevel: level}}
			byKey[key] = a
		}
		a.vals = append(a.vals, v)
		if prec > a.prec {
			a.prec = prec
		}
	}
	for _, c := range caps {
		for _, r := range c.rows {
			switch {
			case r.name == "profile.total":
				if n, ok := goFigures[r.subject]; ok && c.src.Collector == "go" {
					add(n, r.unit, "go", "the heap profile's total under "+r.subject, "derived", r.value, 0)
				}
			case r.index >= 0, strings.HasPrefix(r.name, "memory.snapshot."), r.name == "memory.allocations_by_allocator":
				// the timeline and breakdowns, not figures
			case concept(r.name, c.src.Collector) != "":
				p, _ := strconv.ParseInt(r.precision, 10, 64)
				add(r.name, r.unit, c.src.Collector, r.source, orDefault(r.level, "observed"), r.value, p)
			}
		}
	}
	for run := range runs {
		for _, r := range process[run] {
			// A zero peak RSS is one the process record could not read
			// (source unknown), not a measurement.
			if (r.name == "process.peak_rss" || r.name == "collector.peak_rss") && r.value > 0 {
				add(r.name, r.unit, "process record", r.source, orDefault(r.level, "observed"), r.value, 0)
			}
		}
	}
	out := make([]MemoryFigure, 0, len(byKey))
	for _, a := range byKey {
		f := a.f
		f.Runs, f.Value, f.PrecisionBytes = len(a.vals), medianInt(a.vals), a.prec
		f.Min, f.Max = a.vals[0], a.vals[0]
		for _, v := range a.vals {
			f.Min, f.Max = min(f.Min, v), max(f.Max, v)
		}
		out = append(out, f)
	}
	rank := map[string]int{}
	for i, n := range figureOrder {
		rank[n] = i
	}
	sort.Slice(out, func(i, j int) bool {
		if rank[out[i].Name] != rank[out[j].Name] {
			return rank[out[i].Name] < rank[out[j].Name]
		}
		return out[i].Collector < out[j].Collector
	})
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
