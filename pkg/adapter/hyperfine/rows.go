package hyperfine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// Measurement names and units. Times are in seconds, hyperfine's own unit
// and the one benchstat's tidied units use ("sec"; go test's ns/op
// becomes sec/op): one value is one whole run of the command, so there is
// no "/op".
const (
	nameWall    = "hyperfine.wall_time"
	nameUser    = "hyperfine.user_time"
	nameSystem  = "hyperfine.system_time"
	nameExit    = "hyperfine.exit_code"
	nameMaxRSS  = "hyperfine.max_rss"
	unitSeconds = "sec"
)

// Outcomes of a run, from its exit code.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeSignaled  = "signaled" // a null exit code: ended by a signal
)

// rows writes measurements through schema.MeasurementWriter, opening the
// table on the first row.
type rows struct {
	adapter.Measurements
	// put, when set, receives the rows instead of the sink (the fuzz
	// target checks them without writing Parquet).
	put func(schema.Measurement) error
}

func (r *rows) write(x schema.Measurement) error {
	if r.put != nil {
		r.N++
		return r.put(x)
	}
	return r.Write(x)
}

// export writes every result's rows: per run, the wall time, the exit code
// and the peak memory; per command (or per run, where the file has them)
// the user and system times.
func (r *rows) export(ctx context.Context, x *export) error {
	subjects := subjects(x.results)
	for k, b := range x.results {
		if err := ctx.Err(); err != nil {
			return err
		}
		dims := map[string]string{"result_index": strconv.Itoa(k)}
		for name, v := range b.params {
			dims["parameter."+clean(name)] = clean(v)
		}
		if b.param != nil {
			dims["parameter"] = clean(*b.param)
		}
		w := &bw{rows: r, k: k, subject: subjects[k], dims: dims, series: map[string]string{}}
		for i, t := range b.times {
			outcome := ""
			if b.exit != nil {
				outcome = outcomeOf(b.exit[i])
			}
			if err := w.float(nameWall, unitSeconds, "value", t, i, outcome, 0); err != nil {
				return err
			}
			if b.exit != nil && b.exit[i].ok {
				if err := w.int(nameExit, "code", "value", int64(b.exit[i].code), i, outcome); err != nil {
					return err
				}
			}
			if b.memory != nil {
				if err := w.int(nameMaxRSS, "bytes", "max", b.memory[i], i, outcome); err != nil {
					return err
				}
			}
		}
		for _, c := range []struct {
			name string
			cpu  cpu
		}{{nameUser, b.user}, {nameSystem, b.system}} {
			if c.cpu.mean != nil {
				if err := w.float(c.name, unitSeconds, "mean", *c.cpu.mean, -1, "", uint64(len(b.times))); err != nil {
					return err
				}
			}
			for i, v := range c.cpu.runs {
				outcome := ""
				if b.exit != nil {
					outcome = outcomeOf(b.exit[i])
				}
				if err := w.float(c.name, unitSeconds, "value", v, i, outcome, 0); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// bw writes the rows of one result.
type bw struct {
	*rows
	k       int
	subject string
	dims    map[string]string
	series  map[string]string // name → digest of the series identity
}

// row fills one row's identity and place. The id is the digest of the
// series' canonical identity (run, artifact, result, name), computed once
// per series, followed by the run index: canonicalising a map per row
// would cost more than the rest of the import.
func (w *bw) row(name, unit, agg string, i int, outcome string, loops uint64) (schema.Measurement, error) {
	series, ok := w.series[name]
	if !ok {
		var err error
		series, err = digest.Of(map[string]any{"run_id": w.RunID, "artifact_id": w.ArtifactID, "result": w.k, "name": name})
		if err != nil {
			return schema.Measurement{}, err
		}
		w.series[name] = series
	}
	id := digest.Bytes([]byte(series + "/" + strconv.Itoa(i)))
	m := schema.Measurement{ID: id, Name: name, Unit: unit, Aggregation: agg, Scope: "benchmark",
		Subject: w.subject, Outcome: outcome, Dimensions: w.dims}
	if i >= 0 {
		idx := int32(i)
		m.ValueIndex = &idx
	}
	if loops > 0 {
		m.LoopCount = &loops
	}
	return m, nil
}

func (w *bw) float(name, unit, agg string, v float64, i int, outcome string, loops uint64) error {
	m, err := w.row(name, unit, agg, i, outcome, loops)
	if err != nil {
		return err
	}
	m.Float = &v
	return w.write(m)
}

func (w *bw) int(name, unit, agg string, v int64, i int, outcome string) error {
	m, err := w.row(name, unit, agg, i, outcome, 0)
	if err != nil {
		return err
	}
	m.Int = &v
	return w.write(m)
}

func outcomeOf(e exitCode) string {
	switch {
	case !e.ok:
		return outcomeSignaled
	case e.code == 0:
		return outcomeSucceeded
	}
	return outcomeFailed
}

// subjects names each result by its command. hyperfine exports the
// command without the parameters it did not substitute, so `-L n 1,2
// true` gives two results named "true"; those carry their parameters the
// way hyperfine prints them ("true (n = 1)"), and results still alike
// their position ("#2").
func subjects(rs []*bench) []string {
	out := make([]string, len(rs))
	count := func() map[string]int {
		c := map[string]int{}
		for _, s := range out {
			c[s]++
		}
		return c
	}
	for k, b := range rs {
		out[k] = clean(b.command)
	}
	c := count()
	for k, b := range rs {
		if c[out[k]] < 2 {
			continue
		}
		var ps []string
		for name, v := range b.params {
			ps = append(ps, clean(name)+" = "+clean(v))
		}
		if b.param != nil {
			ps = append(ps, clean(*b.param))
		}
		if len(ps) > 0 {
			sort.Strings(ps)
			out[k] += " (" + strings.Join(ps, ", ") + ")"
		}
	}
	c = count()
	for k := range rs {
		if c[out[k]] > 1 {
			out[k] += " #" + strconv.Itoa(k+1)
		}
	}
	return out
}

// limitations say what the rows are, what the file lacks, and where its
// own summaries disagree with its runs.
func limitations(x *export) []string {
	lim := []string{
		"hyperfine.wall_time is each run's wall-clock time in seconds (times[i]; value_index is the run's index); warm-up runs (--warmup) are not in the file",
		"with its default shell hyperfine subtracts the mean time of spawning an empty shell from every run (clamping at 0); with -N (--shell=none) it subtracts nothing; the file does not say which",
		"hyperfine's mean, stddev, median, min and max are its summaries of times: checked against the runs, not stored",
	}
	var means, perRun, noExit, signaled, legacy, dup int
	var memory bool
	var disagree []string
	subj := subjects(x.results)
	for k, b := range x.results {
		for _, c := range []cpu{b.user, b.system} {
			if c.mean != nil {
				means++
			}
			if c.runs != nil {
				perRun++
			}
		}
		if b.exit == nil {
			noExit++
		}
		for _, e := range b.exit {
			if !e.ok {
				signaled++
			}
		}
		if b.param != nil {
			legacy++
		}
		if subj[k] != clean(b.command) {
			dup++
		}
		memory = memory || b.memory != nil
		disagree = append(disagree, check(k, subj[k], b)...)
	}
	add := func(ok bool, format string, a ...any) {
		if ok {
			lim = append(lim, fmt.Sprintf(format, a...))
		}
	}
	add(means > 0, "hyperfine.user_time and hyperfine.system_time are hyperfine's means over each command's runs (aggregation mean, loop_count the number of runs): hyperfine exports no per-run CPU times")
	add(perRun > 0, "%d user or system time arrays hold one value per run: kept per run (aggregation value)", perRun)
	add(memory, "hyperfine.max_rss is getrusage(RUSAGE_CHILDREN)'s ru_maxrss after each run: the largest process hyperfine had waited for so far (earlier runs, warm-ups and commands included), so it never decreases within a file")
	add(noExit > 0, "%d benchmarks have no exit_codes (hyperfine before 1.12): their runs' outcomes are unknown", noExit)
	add(signaled > 0, "%d runs were ended by a signal (a null exit code): outcome signaled, no hyperfine.exit_code row", signaled)
	add(legacy > 0, "dimensions.parameter is the unnamed parameter value of hyperfine before 1.11")
	add(dup > 0, "%d results share a command with another (hyperfine omits the parameters a command does not use): their subjects add the parameters or the position", dup)
	add(len(x.skipped) > 0, "fields not read: %s", strings.Join(x.skipped, ", "))
	return append(lim, disagree...)
}

// check compares hyperfine's summaries of a result with its own times
// (mean and median as the statistical crate hyperfine uses computes them,
// stddev with n-1), within a relative 1e-9.
func check(k int, subject string, b *bench) []string {
	ts := slices.Clone(b.times)
	slices.Sort(ts)
	n := len(ts)
	var sum float64
	for _, t := range ts {
		sum += t
	}
	mean := sum / float64(n)
	median := ts[n/2]
	if n%2 == 0 {
		median = (ts[n/2-1] + ts[n/2]) / 2
	}
	want := map[string]float64{"mean": mean, "median": median, "min": ts[0], "max": ts[n-1]}
	if n > 1 {
		var ss float64
		for _, t := range ts {
			ss += (t - mean) * (t - mean)
		}
		want["stddev"] = math.Sqrt(ss / float64(n-1))
	}
	var out []string
	for _, name := range []string{"mean", "stddev", "median", "min", "max"} {
		got, ok := b.summary[name]
		w, has := want[name]
		if !ok || !has {
			continue
		}
		if math.Abs(got-w) > 1e-9*math.Max(math.Abs(got), math.Abs(w)) {
			out = append(out, fmt.Sprintf("results[%d] (%s): the file's %s %v disagrees with the %s of its %d times (%v)", k, subject, name, got, name, n, w))
		}
	}
	return out
}

// clean makes a string valid UTF-8 for the evidence tables.
func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
