package compare

import (
	"context"
	"strings"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// MemoryRequest is the memory analysis with, for two frozen run sets,
// the decision rule of the comparison that judges the growth.
type MemoryRequest struct {
	Input   string `json:"input" jsonschema:"run, artifact (sha256:…) or run set (rs-…) with a memory capture"`
	Against string `json:"against,omitempty" jsonschema:"the candidate (same kinds)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"stacks per list (default 5, max 100)"`
	Points  int    `json:"points,omitempty" jsonschema:"timeline snapshots returned (default 40, max 1000)"`
	// Metric is what two run sets are compared on: memory.retained_end
	// by default (memory.leaked for heaptrack captures).
	Metric     string  `json:"metric,omitempty" jsonschema:"two run sets: the metric compared (default memory.retained_end)"`
	Threshold  float64 `json:"practical_threshold,omitempty" jsonschema:"two run sets: smallest relative change that matters"`
	Confidence float64 `json:"confidence_level,omitempty" jsonschema:"two run sets: interval confidence (default 0.95)"`
}

// Flags registers the memory analysis's flags (`flameox analyze memory`).
func (r *MemoryRequest) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Against, "against", "", "candidate run, artifact or run set: what grew from the input to it, by stack")
	fs.IntVar(&r.Limit, "limit", 5, "stacks per list (max 100)")
	fs.IntVar(&r.Points, "points", 40, "timeline snapshots to return (max 1000), evenly spaced with the first, the last and the peak")
	fs.StringVar(&r.Metric, "metric", "", "two run sets: the measurement compared (default memory.retained_end; memory.leaked for heaptrack)")
	fs.Float64Var(&r.Threshold, "threshold", 0, "two run sets: practical threshold, the smallest relative change that matters, e.g. 0.05")
	fs.Float64Var(&r.Confidence, "confidence", 0.95, "two run sets: confidence level of the interval")
}

// MemoryReport is the result of `flameox analyze memory` and MCP
// analyze_memory: the analysis, the comparison that decides whether two
// run sets' difference is meaningful, and the recording when asked.
type MemoryReport struct {
	*analysis.MemoryResult
	// Comparison is the confirmatory comparison of the two run sets on
	// the metric (lower is better): whether the growth is meaningful.
	Comparison *Comparison        `json:"comparison,omitempty"`
	Recorded   *analysis.Recorded `json:"recorded,omitempty"`
}

// Memory runs the memory analysis and, when both sides are frozen run
// sets, the comparison of their memory metric.
func Memory(ctx context.Context, ws *workspace.Workspace, req MemoryRequest) (*MemoryReport, error) {
	res, err := analysis.Memory(ctx, ws, analysis.MemoryRequest{Input: req.Input, Against: req.Against, Limit: req.Limit, Points: req.Points})
	if err != nil {
		return nil, err
	}
	out := &MemoryReport{MemoryResult: res}
	if res.Candidate == nil {
		if req.Metric != "" || req.Threshold != 0 {
			return nil, fault.New(fault.InvalidArguments, "--metric and --threshold decide between two run sets: name the candidate with --against").With("field", "against")
		}
		return out, nil
	}
	if res.Base.Kind != "run_set" || res.Candidate.Kind != "run_set" {
		if req.Metric != "" || req.Threshold != 0 {
			return nil, fault.New(fault.InvalidArguments, "--metric and --threshold decide between two frozen run sets; %s and %s are not both run sets", res.Base.Input, res.Candidate.Input).With("field", "metric")
		}
		return out, nil
	}
	metric := req.Metric
	if metric == "" {
		metric = "memory.retained_end"
		if collectorOf(res.Base) == "heaptrack" {
			metric = "memory.leaked"
		}
	}
	c, err := Confirm(ctx, ws, ConfirmRequest{Baseline: res.Base.Input, Candidate: res.Candidate.Input, Metric: metric,
		Threshold: req.Threshold, Confidence: req.Confidence})
	if err != nil {
		return nil, err
	}
	out.Comparison = c
	res.Limitations = append(res.Limitations, "whether the growth is meaningful is the comparison's decision on "+metric+" (lower is better), over complete blocks; the growth by stack describes it, and decides nothing")
	res.Next.Then(fault.Step{Command: "flameox analyze record-comparison " + res.Base.Input + " " + res.Candidate.Input + " --metric " + metric,
		Tool: "record_comparison", Arguments: map[string]any{"baseline_run_set": res.Base.Input, "candidate_run_set": res.Candidate.Input, "metric": metric}})
	return out, nil
}

// collectorOf is the side's collector when it has one.
func collectorOf(s analysis.MemorySide) string {
	var cs []string
	for _, src := range s.Sources {
		cs = append(cs, src.Collector)
	}
	if len(cs) == 0 {
		return ""
	}
	if strings.Count(strings.Join(cs, ","), cs[0]) == len(cs) {
		return cs[0]
	}
	return ""
}
