package analysis

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// OpMemory is the memory analysis's operation name.
const (
	OpMemory      = "memory"
	MemoryVersion = "1"
)

// Bounds of one memory analysis: the runs a run set contributes, the
// stacks listed, the timeline points returned.
const (
	maxMemoryRuns     = 64
	maxMemoryStacks   = 100
	maxTimelinePoints = 1000
	maxTimelineRows   = 100_000
)

// MemoryRequest asks what a run's (or a run set's) memory went to, and
// with Against, what grew from it to another.
type MemoryRequest struct {
	Input   string `json:"input" jsonschema:"run id, artifact id (sha256:…) or frozen run set (rs-…) with a memory capture (memray, massif, heaptrack, a Go heap profile)"`
	Against string `json:"against,omitempty" jsonschema:"the candidate to compare the input with (same kinds): what grew, by stack"`
	Limit   int    `json:"limit,omitempty" jsonschema:"stacks per list (default 5, max 100)"`
	Points  int    `json:"points,omitempty" jsonschema:"timeline snapshots to return, evenly spaced with the first, the last and the peak (default 40, max 1000)"`
}

// MemoryFigure is one number with the exact concept behind it.
type MemoryFigure struct {
	// Name is the measurement (memory.peak_heap, memory.retained_end,
	// process.peak_rss, …) or, for a Go heap profile, the sample type's
	// total it is read from (say so in Source).
	Name    string `json:"name"`
	Concept string `json:"concept"`
	Value   int64  `json:"value"`
	Unit    string `json:"unit"`
	// Runs is how many runs the value is the median of (1 for one run);
	// Min and Max bound them.
	Runs          int    `json:"runs"`
	Min           int64  `json:"min"`
	Max           int64  `json:"max"`
	Collector     string `json:"collector"`
	Source        string `json:"source,omitempty"`
	EvidenceLevel string `json:"evidence_level"`
	// PrecisionBytes is the rounding the collector's reporter printed
	// the number with (heaptrack_print), when it was not exact.
	PrecisionBytes int64 `json:"precision_bytes,omitempty"`
}

// MemoryFrame is one frame of a memory stack.
type MemoryFrame struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
}

// MemoryStack is one allocation stack: its frames root first, the leaf
// side kept when deeper than 8 (Depth is the whole stack's).
type MemoryStack struct {
	StackID string `json:"stack_id"`
	// LeafFrameID is the allocating frame, for get_frame_callers and
	// get_stack_examples.
	LeafFrameID string `json:"leaf_frame_id"`
	// Value is the stack's bytes (or count) under the list's sample
	// type: per run, the mean over the side's runs.
	Value     int64         `json:"value"`
	Fraction  float64       `json:"fraction"`
	Depth     int           `json:"depth"`
	Truncated bool          `json:"truncated"`
	Frames    []MemoryFrame `json:"frames"`
}

// MemoryStacks is one ranked list of stacks: held at the peak, retained
// at exit, or allocating.
type MemoryStacks struct {
	Role       string        `json:"role"` // peak, retained, allocated
	SampleType string        `json:"sample_type"`
	Unit       string        `json:"unit"`
	Concept    string        `json:"concept"`
	Total      int64         `json:"total_value"`
	Stacks     []MemoryStack `json:"stacks"`
	query.Page
}

// MemoryPoint is one snapshot of the heap over time.
type MemoryPoint struct {
	Index     int64  `json:"index"`
	Time      int64  `json:"time"`
	Heap      int64  `json:"heap"`
	HeapExtra *int64 `json:"heap_extra,omitempty"`
	Stacks    *int64 `json:"stacks,omitempty"`
	RSS       *int64 `json:"rss,omitempty"`
}

// MemoryPhase is the heap's growth over one part of the timeline.
type MemoryPhase struct {
	Name  string `json:"name"`
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Start int64  `json:"start_heap"`
	End   int64  `json:"end_heap"`
	// Growth is End - Start (negative when the heap shrank).
	Growth int64 `json:"growth"`
}

// MemoryTimeline is one capture's heap over time, with its growth by
// phase: the quarters of its time axis, and before and after the peak.
type MemoryTimeline struct {
	RunID      string        `json:"run_id"`
	ArtifactID string        `json:"artifact_id"`
	Collector  string        `json:"collector"`
	TimeUnit   string        `json:"time_unit"`
	Points     []MemoryPoint `json:"points"`
	Peak       MemoryPoint   `json:"peak"`
	Phases     []MemoryPhase `json:"phases"`
	// Steepest names the quarter with the most growth.
	Steepest string `json:"steepest,omitempty"`
	query.Page
}

// MemorySource is one memory capture the analysis read.
type MemorySource struct {
	RunID        string `json:"run_id"`
	ArtifactID   string `json:"artifact_id"`
	DisplayName  string `json:"display_name,omitempty"`
	Collector    string `json:"collector"`
	GenerationID string `json:"generation_id"`
}

// MemorySide is what one input (a run, an artifact or a run set) held.
type MemorySide struct {
	Input string `json:"input"`
	Kind  string `json:"kind"` // run, artifact, run_set
	// Runs are the runs read (a run set's eligible members with a memory
	// capture, at most 64); RunsTotal counts them all.
	Runs      []string       `json:"runs"`
	RunsTotal int            `json:"runs_total"`
	Sources   []MemorySource `json:"sources"`
	Figures   []MemoryFigure `json:"figures"`
	Retained  *MemoryStacks  `json:"top_retained,omitempty"`
	Peak      *MemoryStacks  `json:"top_at_peak,omitempty"`
	Allocated *MemoryStacks  `json:"top_allocating,omitempty"`
	// Timeline is the first source's heap over time, when its collector
	// records one (massif, memray, heaptrack).
	Timeline *MemoryTimeline `json:"timeline,omitempty"`
	// Collectors' own limitations, as their extraction stated them.
	Limitations []string `json:"limitations"`
}

// MemoryFigureChange is one figure on both sides.
type MemoryFigureChange struct {
	Name      string   `json:"name"`
	Concept   string   `json:"concept"`
	Unit      string   `json:"unit"`
	Base      int64    `json:"base"`
	Candidate int64    `json:"candidate"`
	Delta     int64    `json:"delta"`
	Ratio     *float64 `json:"ratio,omitempty"`
}

// MemoryStackChange is one stack's value on both sides.
type MemoryStackChange struct {
	StackID     string        `json:"stack_id"`
	LeafFrameID string        `json:"leaf_frame_id"`
	Base        int64         `json:"base"`
	Candidate   int64         `json:"candidate"`
	Delta       int64         `json:"delta"`
	Status      string        `json:"status"` // grew, new, shrank, gone
	Depth       int           `json:"depth"`
	Truncated   bool          `json:"truncated"`
	Frames      []MemoryFrame `json:"frames"`
}

// MemoryGrowth is what grew from the base to the candidate, by stack,
// under one sample type both sides carry.
type MemoryGrowth struct {
	Role           string              `json:"role"`
	SampleType     string              `json:"sample_type"`
	Unit           string              `json:"unit"`
	BaseTotal      int64               `json:"base_total"`
	CandidateTotal int64               `json:"candidate_total"`
	Delta          int64               `json:"delta"`
	Grew           int64               `json:"grew"`
	New            int64               `json:"new"`
	Shrank         int64               `json:"shrank"`
	Gone           int64               `json:"gone"`
	Stacks         []MemoryStackChange `json:"stacks"`
	query.Page
}

// MemoryResult is the result of `flameox analyze memory` and MCP
// analyze_memory.
type MemoryResult struct {
	SchemaVersion    int           `json:"schema_version"`
	Operation        string        `json:"operation"`
	OperationVersion string        `json:"operation_version"`
	CorpusCommitID   string        `json:"corpus_commit_id"`
	Parameters       MemoryRequest `json:"parameters"`
	Base             MemorySide    `json:"base"`
	Candidate        *MemorySide   `json:"candidate,omitempty"`
	// Figures and Growth compare the two sides (with Against).
	Figures       []MemoryFigureChange `json:"figure_changes,omitempty"`
	Growth        *MemoryGrowth        `json:"growth,omitempty"`
	EvidenceLevel string               `json:"evidence_level"`
	Limitations   []string             `json:"limitations"`
	fault.Next
}

func (r *MemoryResult) provenance() (string, string, string, any, Source, any, []string) {
	src := Source{}
	if len(r.Base.Sources) > 0 {
		s := r.Base.Sources[0]
		src = Source{RunID: s.RunID, ArtifactID: s.ArtifactID, DisplayName: s.DisplayName, Kind: "memory_profile", GenerationID: s.GenerationID}
	}
	cov := map[string]any{"base_runs": r.Base.RunsTotal, "base_sources": len(r.Base.Sources)}
	if r.Candidate != nil {
		cov["candidate_runs"], cov["candidate_sources"] = r.Candidate.RunsTotal, len(r.Candidate.Sources)
	}
	return r.Operation, r.OperationVersion, r.CorpusCommitID, r.Parameters, src, cov, r.Limitations
}

// inputs lists every run, artifact and generation the analysis read.
func (r *MemoryResult) inputs() (runs, artifacts, generations []string) {
	seen := map[string]bool{}
	add := func(dst *[]string, v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			*dst = append(*dst, v)
		}
	}
	for _, side := range []*MemorySide{&r.Base, r.Candidate} {
		if side == nil {
			continue
		}
		for _, s := range side.Sources {
			add(&runs, s.RunID)
			add(&artifacts, s.ArtifactID)
			add(&generations, s.GenerationID)
		}
	}
	return nonNil(runs), nonNil(artifacts), nonNil(generations)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Memory reads the memory captures an input names: the figures with the
// concept behind each, the top retained, peak and allocating stacks, the
// heap over time with its growth by phase, and the collectors'
// limitations; with Against, what grew from one to the other, by stack.
// It decides nothing: whether a growth is meaningful is the comparison's
// to say (compare.Memory runs it for two run sets).
func Memory(ctx context.Context, ws *workspace.Workspace, req MemoryRequest) (*MemoryResult, error) {
	if strings.TrimSpace(req.Input) == "" {
		return nil, fault.New(fault.InvalidArguments, "analyze memory needs a run, an artifact or a run set").With("field", "input")
	}
	if req.Limit == 0 {
		req.Limit = 5
	}
	if req.Points == 0 {
		req.Points = 40
	}
	if req.Points < 3 || req.Points > maxTimelinePoints {
		return nil, fault.New(fault.QueryBudgetExceeded, "points %d is outside 3..%d", req.Points, maxTimelinePoints).With("max_points", fmt.Sprint(maxTimelinePoints))
	}
	if req.Limit < 0 || req.Limit > maxMemoryStacks {
		return nil, fault.New(fault.QueryBudgetExceeded, "limit %d is outside 1..%d", req.Limit, maxMemoryStacks).With("max_limit", fmt.Sprint(maxMemoryStacks))
	}
	s, err := query.Open(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &MemoryResult{SchemaVersion: 1, Operation: OpMemory, OperationVersion: MemoryVersion, CorpusCommitID: s.Commit(),
		Parameters: req, EvidenceLevel: "observed", Limitations: []string{}, Next: fault.Next{NextSteps: []string{}}}
	base, err := readMemorySide(ctx, s, req.Input, req.Limit, req.Points)
	if err != nil {
		return nil, sideFault(err, "input", req.Input)
	}
	res.Base = *base
	if strings.TrimSpace(req.Against) != "" {
		cand, err := readMemorySide(ctx, s, req.Against, req.Limit, req.Points)
		if err != nil {
			return nil, sideFault(err, "against", req.Against)
		}
		res.Candidate = cand
		res.Figures = figureChanges(base.Figures, cand.Figures)
		g, err := memoryGrowth(ctx, s, base, cand, req.Limit)
		if err != nil {
			return nil, err
		}
		res.Growth = g
		if g == nil {
			res.Limitations = append(res.Limitations, "the two sides carry no allocation stacks of one kind (retained, peak or allocating) in common: no growth by stack is shown")
		}
		res.EvidenceLevel = "derived"
		if base.Kind != "run_set" || cand.Kind != "run_set" {
			res.Limitations = append(res.Limitations, "a difference between two captures, not a decision: one run per side cannot tell a growth from run-to-run variation; compare frozen run sets of a declared experiment on memory.retained_end or memory.peak_heap for a verdict")
		}
	}
	for _, side := range []*MemorySide{&res.Base, res.Candidate} {
		if side == nil {
			continue
		}
		if side.Kind == "run_set" {
			res.EvidenceLevel = "derived"
		}
		if len(side.Sources) > 0 {
			a := side.Sources[0].ArtifactID
			res.Next.Then(fault.Step{Command: "flameox open " + a, Tool: "get_native_viewer_plan", Arguments: map[string]any{"artifact_id": a}})
		}
	}
	return res, nil
}

// sideFault names the side whose input failed.
func sideFault(err error, field, input string) error {
	fe := fault.As(err)
	if fe == nil {
		return err
	}
	return fe.With("field", field).With("input", input)
}

// inputKind classifies a memory input.
func inputKind(input string) (string, error) {
	switch {
	case digest.Valid(input):
		return "artifact", nil
	case run.ValidID(input):
		return "run", nil
	case strings.HasPrefix(input, "rs-") && len(input) == 35:
		return "run_set", nil
	}
	return "", fault.New(fault.InvalidArguments, "%q is neither a run id, an artifact id (sha256:…) nor a run set id (rs-…)", input)
}

// figureChanges pairs the figures both sides carry, in the base's order.
func figureChanges(base, cand []MemoryFigure) []MemoryFigureChange {
	byName := map[string]MemoryFigure{}
	for _, f := range cand {
		byName[f.Name] = f
	}
	out := []MemoryFigureChange{}
	for _, b := range base {
		c, ok := byName[b.Name]
		if !ok || c.Unit != b.Unit {
			continue
		}
		ch := MemoryFigureChange{Name: b.Name, Concept: b.Concept, Unit: b.Unit, Base: b.Value, Candidate: c.Value, Delta: c.Value - b.Value}
		if b.Value != 0 {
			r := float64(c.Value) / float64(b.Value)
			ch.Ratio = &r
		}
		out = append(out, ch)
	}
	return out
}

// median of int64 values (the lower middle of an even count, so that
// the figure is one that was observed).
func medianInt(v []int64) int64 {
	s := slices.Clone(v)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)/2]
}
