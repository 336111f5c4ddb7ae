package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
)

// profileTables are the tables the profile analyses read; hotspots read
// the first four (a reader binds only the views it is asked for).
var (
	profileTables  = []string{"artifacts", "measurements", "frames", "frame_measurements", "call_edges", "stacks"}
	hotspotsTables = profileTables[:4]
)

// Source is the profile an analysis reads: one artifact of one run, at the
// generation that extracted it last.
type Source struct {
	RunID        string `json:"run_id"`
	ArtifactID   string `json:"artifact_id"`
	DisplayName  string `json:"display_name"`
	Kind         string `json:"kind"`
	Producer     string `json:"producer,omitempty"`
	GenerationID string `json:"generation_id"`
}

// qProfileRows reads, in one scan, every profile-scope measurement
// (profile.total, profile.samples, profile.frames, profile.symbolized,
// profile.min_value and profile.duration) of the profiles an input names, with their artifact's
// registration: the source, its sample types, its threads and what
// hotspots need to read ranked rows all come from these few rows (a few
// per sample type, thread and process of each generation), so an analysis
// starts with one query, not three.
var qProfileRows = catalog.Query{Name: "analysis.profile_rows", Version: "3", SQL: `
WITH a AS (
  SELECT run_id, artifact_id, any_value(display_name) AS display_name, any_value(kind) AS kind,
         any_value(producer) AS producer, any_value(role) AS role
  FROM artifacts WHERE (($1 <> '' AND run_id = $1) OR ($2 <> '' AND artifact_id = $2))
  GROUP BY run_id, artifact_id)
SELECT m.run_id, m.artifact_id, m.evidence_generation_id, epoch_us(m.published_at), m.name, coalesce(m.subject, ''),
       coalesce(m.unit, ''), coalesce(m.value_int, 0), coalesce(m.dimensions['thread'], ''),
       coalesce(m.dimensions['process'], ''), coalesce(m.dimensions['default'], '') = 'true',
       coalesce(a.display_name, ''), coalesce(a.kind, ''), coalesce(a.producer, ''), coalesce(a.role, '')
FROM measurements m LEFT JOIN a USING (run_id, artifact_id)
WHERE m.scope = 'profile' AND m.name IN ('profile.total', 'profile.samples', 'profile.frames', 'profile.symbolized', 'profile.duration', 'profile.min_value')
  AND (($1 <> '' AND m.run_id = $1) OR ($2 <> '' AND m.artifact_id = $2))`}

// profileRow is one row of qProfileRows.
type profileRow struct {
	src                 Source
	role                string
	at                  int64 // published_at, µs
	name, subject, unit string
	value               int64
	thread, process     string
	isDefault           bool
}

// scope is what an analysis reads: the profile an input names, the
// limitations of that choice, its sample types under the thread and
// process filters, and its thread labels (at most 100, sorted).
type scope struct {
	src *Source
	// note is the choice resolve made among a run's profiles, when it had
	// one to make or read something other than a sample profile; see
	// sourceNote.
	note    string
	lim     []string
	types   []SampleType
	threads []string
	ranks   map[string]*ranked // by sample type
	// duration is the profile's own duration (pprof's "Duration:"), 0
	// when it records none.
	duration int64
}

// ranked says whether a sample type's frames can be read by rank: the
// filters select one thread/process pair of it (rank is per pair) and its
// extractor recorded the frame count and symbolized total of that pair.
type ranked struct {
	pairs             int
	thread, process   string
	frames            int64
	symbolized        int64
	hasFrames, hasSym bool
	// minValue is the pair's smallest frame value (profile.min_value, by
	// which pprof picks its output unit); hasMin is false for older
	// extractions.
	minValue int64
	hasMin   bool
}

// usable reports whether hotspots may read r's sample type by rank.
func (r *ranked) usable() bool { return r != nil && r.pairs == 1 && r.hasFrames && r.hasSym }

// resolve finds the profile input names (a run id, or an artifact id)
// in its latest generation: a run with several profiles reads its primary
// sample profile, and says which others it has.
func resolve(ctx context.Context, s *query.Session, input, thread, process string) (*scope, error) {
	input, runID, artID, err := parseInput(input)
	if err != nil {
		return nil, err
	}
	var rows []profileRow
	err = s.R.Scan(ctx, qProfileRows, []any{runID, artID}, func(r *sql.Rows) error {
		for r.Next() {
			var p profileRow
			if err := r.Scan(&p.src.RunID, &p.src.ArtifactID, &p.src.GenerationID, &p.at, &p.name, &p.subject, &p.unit, &p.value,
				&p.thread, &p.process, &p.isDefault, &p.src.DisplayName, &p.src.Kind, &p.src.Producer, &p.role); err != nil {
				return err
			}
			rows = append(rows, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return scopeOf(input, runID, artID, rows, thread, process)
}

// parseInput trims an analysis input and says whether it is a run id or
// an artifact id.
func parseInput(input string) (trimmed, runID, artID string, err error) {
	input = strings.TrimSpace(input)
	switch {
	case digest.Valid(input):
		artID = input
	case run.ValidID(input):
		runID = input
	default:
		return input, "", "", fault.New(fault.InvalidArguments, "%q is neither a run id nor an artifact id (sha256:…)", input)
	}
	return input, runID, artID, nil
}

// scopeOf is resolve's answer from the rows of qProfileRows (read by
// DuckDB, or by readRanked's reader without it).
func scopeOf(input, runID, artID string, rows []profileRow, thread, process string) (*scope, error) {
	// Each profile's latest generation holding a profile.total, newest
	// profile first.
	type cand struct {
		row  profileRow
		rank int
	}
	latest := map[[2]string]*cand{}
	for _, p := range rows {
		if p.name != "profile.total" {
			continue
		}
		k := [2]string{p.src.RunID, p.src.ArtifactID}
		if c := latest[k]; c == nil || p.at > c.row.at || (p.at == c.row.at && p.src.GenerationID > c.row.src.GenerationID) {
			latest[k] = &cand{row: p}
		}
	}
	if len(latest) == 0 {
		return nil, fault.New(fault.NotFound, "no extracted profile for %s in the published corpus", input).
			With("missing_entity", "profile").
			FixSteps("Import a profile (%s) or capture one (%s), then retry.",
				fault.Step{Command: "flameox import FILE", Tool: "import_artifact", Arguments: map[string]any{"path": "FILE"}},
				fault.Step{Command: "flameox capture run gotest|perf|py-spy …", Tool: "plan_capture", Arguments: map[string]any{"adapter": "gotest", "workload": "NAME"}}).
			FixSteps("A gotest capture writes profiles only when its workload asks: set options.profiles = \"cpu\" and run %s again.",
				fault.Step{Command: "flameox capture run gotest --workload NAME", Tool: "plan_capture", Arguments: map[string]any{"adapter": "gotest", "workload": "NAME"}})
	}
	found := make([]*cand, 0, len(latest))
	for _, c := range latest {
		if c.row.src.Kind != "sample_profile" {
			c.rank += 2
		}
		if c.row.role != "primary" {
			c.rank++
		}
		found = append(found, c)
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.row.at != b.row.at {
			return a.row.at > b.row.at
		}
		if a.row.src.RunID != b.row.src.RunID {
			return a.row.src.RunID < b.row.src.RunID
		}
		return a.row.src.ArtifactID < b.row.src.ArtifactID
	})
	sc := &scope{src: &found[0].row.src, types: []SampleType{}, threads: []string{}, ranks: map[string]*ranked{}}
	if runID != "" && len(found) > 1 {
		others := []string{}
		for _, f := range found[1:] {
			others = append(others, f.row.src.ArtifactID+" ("+f.row.src.DisplayName+")")
		}
		sc.lim = append(sc.lim, "The run has several profiles; this analysis reads "+sc.src.DisplayName+". Pass an artifact id for another: "+strings.Join(others, ", "))
	}
	if runID != "" {
		rows := make([]profileRow, len(found))
		for i, f := range found {
			rows[i] = f.row
		}
		sc.note = choiceNote(rows)
	}
	// The chosen generation's rows: sample types under the filters, and
	// every thread label.
	byType := map[string]*SampleType{}
	threads := map[string]bool{}
	for _, p := range rows {
		if p.src.RunID != sc.src.RunID || p.src.ArtifactID != sc.src.ArtifactID || p.src.GenerationID != sc.src.GenerationID {
			continue
		}
		if p.name == "profile.duration" {
			sc.duration = p.value
			continue
		}
		if p.name == "profile.total" && p.thread != "" {
			threads[p.thread] = true
		}
		if (thread != "" && p.thread != thread) || (process != "" && p.process != process) {
			continue
		}
		st := byType[p.subject]
		if st == nil {
			st = &SampleType{Type: p.subject}
			byType[p.subject] = st
		}
		rk := sc.ranks[p.subject]
		if rk == nil {
			rk = &ranked{}
			sc.ranks[p.subject] = rk
		}
		switch p.name {
		case "profile.total":
			if st.Unit == "" {
				st.Unit = p.unit
			}
			st.Total += p.value
			rk.pairs++
			rk.thread, rk.process = p.thread, p.process
		case "profile.samples":
			st.Samples += p.value
		case "profile.frames":
			rk.frames, rk.hasFrames = p.value, true
		case "profile.symbolized":
			rk.symbolized, rk.hasSym = p.value, true
		case "profile.min_value":
			rk.minValue, rk.hasMin = p.value, true
		}
		st.Default = st.Default || p.isDefault
	}
	for _, st := range byType {
		sc.types = append(sc.types, *st)
	}
	sort.Slice(sc.types, func(i, j int) bool { return sc.types[i].Type < sc.types[j].Type })
	for t := range threads {
		sc.threads = append(sc.threads, t)
	}
	sort.Strings(sc.threads)
	if len(sc.threads) > 100 {
		sc.threads = sc.threads[:100]
	}
	return sc, nil
}

// choiceNote says which profile a run id was resolved to and why, when
// that was a choice: the run has other profiles, or no sample (CPU)
// profile at all, so that what is shown is never silently another kind of
// profile than the user expects (a gotest run without a CPU profile would
// otherwise show its memory profile as if it were one). It is "" when the
// run's only profile is a sample profile. found is resolve's candidates,
// the chosen first.
func choiceNote(found []profileRow) string {
	chosen := found[0]
	name := chosen.src.DisplayName
	if name == "" {
		name = chosen.src.ArtifactID
	}
	samples := 0 // sample profiles among the others
	for _, f := range found[1:] {
		if f.src.Kind == "sample_profile" {
			samples++
		}
	}
	why := "the newest"
	if chosen.role == "primary" {
		why = "the primary"
	}
	switch {
	case chosen.src.Kind != "sample_profile" && len(found) == 1:
		return "no CPU (sample) profile in this run; showing " + name + ", its only profile (" + chosen.src.Kind + ")"
	case chosen.src.Kind != "sample_profile":
		return fmt.Sprintf("no CPU (sample) profile in this run; showing %s (%s), %s of its %d profiles", name, chosen.src.Kind, why, len(found))
	case samples == 0 && len(found) > 1:
		return fmt.Sprintf("this run has %d profiles; showing %s, its CPU (sample) profile", len(found), name)
	case len(found) > 1:
		return fmt.Sprintf("this run has %d sample profiles; showing %s, %s", samples+1, name, why)
	}
	return ""
}

// sourceNote is the first line of an analysis that read a profile it was
// not given by artifact id: the choice, and the sample type shown.
func (sc *scope) sourceNote(st SampleType) string {
	if sc.note == "" {
		return ""
	}
	return sc.note + ", sample type " + st.Type + " (pass an artifact id or --sample-type for another)"
}

// pick chooses the requested sample type, or pprof's default.
// SampleType is one metric of a profile.
type SampleType struct {
	Type    string `json:"type"`
	Unit    string `json:"unit"`
	Total   int64  `json:"total"`
	Samples int64  `json:"samples"`
	Default bool   `json:"default"`
}

func pick(types []SampleType, want string) (SampleType, error) {
	names := []string{}
	for _, t := range types {
		names = append(names, t.Type)
		if want != "" && t.Type == want {
			return t, nil
		}
	}
	if want != "" {
		return SampleType{}, fault.New(fault.InvalidArguments, "the profile has no sample type %q", want).With("sample_types", strings.Join(names, ","))
	}
	for _, t := range types {
		if t.Default {
			return t, nil
		}
	}
	if len(types) == 0 {
		return SampleType{}, fault.New(fault.NotFound, "the profile has no samples under these filters")
	}
	return types[len(types)-1], nil
}
