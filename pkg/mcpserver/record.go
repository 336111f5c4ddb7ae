package mcpserver

// record_analysis: the one tool that writes an analysis to the corpus.
// The analyses themselves (analyze_hotspots, get_frame_callers, ...) only
// read, so hosts never ask for approval to read; recording is a separate,
// additive step. Its request is {recipe, arguments}: arguments are the
// arguments of the recipe's own analysis tool, checked against that tool's
// input schema, so a later recipe (comparisons, experiments) plugs in by
// adding one entry to recipes.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recipe is an analysis record_analysis can record.
type recipe struct {
	tool string // the analysis tool whose arguments the recipe takes
	run  func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error)
}

var recipes = map[string]recipe{
	"hotspots": {tool: "analyze_hotspots", run: func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error) {
		var req analysis.HotspotsRequest
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "hotspots arguments")
		}
		if req.Limit == 0 {
			req.Limit = hotspotsLimit
		}
		return analysis.Hotspots(ctx, ws, req)
	}},
	"scaling": {tool: "analyze_scaling", run: func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error) {
		var req analysis.ScalingRequest
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "scaling arguments")
		}
		if req.Limit == 0 {
			req.Limit = scalingLimit
		}
		return analysis.Scaling(ctx, ws, req)
	}},
	"memory": {tool: "analyze_memory", run: func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error) {
		var req compare.MemoryRequest
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "memory arguments")
		}
		if req.Limit == 0 {
			req.Limit = memoryLimit
		}
		r, err := compare.Memory(ctx, ws, req)
		if err != nil {
			return nil, err
		}
		return r.MemoryResult, nil
	}},
	"execution": {tool: "analyze_execution", run: func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error) {
		var req analysis.ExecutionRequest
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "execution arguments")
		}
		if req.Limit == 0 {
			req.Limit = executionLimit
		}
		return analysis.Execution(ctx, ws, req)
	}},
	"pytorch": {tool: "analyze_pytorch", run: func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error) {
		var req analysis.PyTorchRequest
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "pytorch arguments")
		}
		if req.Limit == 0 {
			req.Limit = pytorchLimit
		}
		return analysis.PyTorch(ctx, ws, req)
	}},
	"failures": {tool: "analyze_failures", run: func(ctx context.Context, ws *workspace.Workspace, args json.RawMessage) (analysis.Recordable, error) {
		var req analysis.FailuresRequest
		if err := json.Unmarshal(args, &req); err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "failures arguments")
		}
		if req.Limit == 0 {
			req.Limit = failuresLimit
		}
		return analysis.Failures(ctx, ws, req)
	}},
}

func recipeNames() []string {
	out := make([]string, 0, len(recipes))
	for name := range recipes {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// recordInput is record_analysis's request.
type recordInput struct {
	Recipe    string         `json:"recipe" jsonschema:"hotspots, scaling, memory, execution, pytorch or failures (analyze_<recipe>)"`
	Arguments map[string]any `json:"arguments" jsonschema:"the arguments of the recipe's analyze_ tool, e.g. {\"input\": RUN_ID}"`
}

// RecordResult is record_analysis's result: where the analysis was
// recorded and what it read.
type RecordResult struct {
	SchemaVersion int    `json:"schema_version"`
	Recipe        string `json:"recipe"`
	Operation     string `json:"operation"`
	// AnalyzedCommitID is the corpus commit the analysis read; the record
	// is published in a new commit (recorded_in_commit_id).
	AnalyzedCommitID string `json:"corpus_commit_id"`
	analysis.Recorded
	fault.Next
}

func (s *server) addRecordTools() {
	addTool(s, &mcp.Tool{Name: "record_analysis",
		Description: "Persist an analysis (a recipe and its analyze_ tool's arguments) with its commit and inputs as evidence; analyses themselves never write.",
		Annotations: &mcp.ToolAnnotations{Title: "Record analysis", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.recordAnalysis, enum("recipe", recipeNames()...), func(sch *jsonschema.Schema) {
		if p := sch.Properties["arguments"]; p != nil {
			p.Types, p.Type, p.AdditionalProperties = nil, "object", nil
		}
	})
}

func (s *server) recordAnalysis(ctx context.Context, _ *mcp.CallToolRequest, in recordInput) (*RecordResult, string, error) {
	rc, ok := recipes[in.Recipe]
	if !ok {
		return nil, "", fault.New(fault.InvalidArguments, "unknown recipe %q", in.Recipe).With("recipes", fmt.Sprint(recipeNames()))
	}
	args, err := json.Marshal(in.Arguments)
	if err != nil || in.Arguments == nil {
		args = []byte("{}")
	}
	if ti := s.inputs[rc.tool]; ti != nil {
		if fe := ti.check(args); fe != nil {
			fe.Message = in.Recipe + " arguments: " + fe.Message
			return nil, "", fe
		}
	}
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	started := s.opts.Now()
	res, err := rc.run(ctx, ws, args)
	if err != nil {
		return nil, "", err
	}
	rec, err := analysis.Persist(ctx, s.publisher(ws), res, started, s.opts.Now())
	if err != nil {
		return nil, "", err
	}
	out := &RecordResult{SchemaVersion: 1, Recipe: in.Recipe, Recorded: *rec, Next: fault.Next{NextSteps: []string{}}}
	out.Operation, out.AnalyzedCommitID = analysis.Operation(res)
	out.Then(fault.Step{Command: "flameox evidence get analysis " + rec.AnalysisID, Tool: "get_evidence",
		Arguments: map[string]any{"type": "analysis", "id": rec.AnalysisID}})
	return out, fmt.Sprintf("recorded %s as analysis %s in commit %s", in.Recipe, rec.AnalysisID, corpus.Short(rec.CorpusCommitID)), nil
}
