package mcpserver

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/analysis"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Default page sizes of the analyses over MCP (the CLI shows more): a
// hotspot row is a few hundred bytes of JSON (docs/performance.md, "MCP
// round trips"), an example stack up to 64 frames.
const (
	hotspotsLimit = 10
	edgesLimit    = 10
	examplesLimit = 3
)

func (s *server) addAnalysisTools() {
	addTool(s, &mcp.Tool{Name: "analyze_hotspots",
		Description: "Start here for a profile: top frames by self and inclusive value (pprof -top, -focus, -ignore), with frame ids to drill into.",
		Annotations: readOnly("Analyze hotspots")}, s.analyzeHotspots, limitSchema(hotspotsLimit))
	addTool(s, &mcp.Tool{Name: "get_frame_callers",
		Description: "Who calls a frame (frame id or function-name regexp, like pprof -peek), weighted by samples.",
		Annotations: readOnly("Frame callers")}, s.stacksEdges(true), limitSchema(edgesLimit))
	addTool(s, &mcp.Tool{Name: "get_frame_callees",
		Description: "What a frame calls (frame id or function-name regexp, like pprof -peek), weighted by samples.",
		Annotations: readOnly("Frame callees")}, s.stacksEdges(false), limitSchema(edgesLimit))
	addTool(s, &mcp.Tool{Name: "get_stack_examples",
		Description: "The heaviest whole stacks through a frame (frame id or function-name regexp), root first.",
		Annotations: readOnly("Stack examples")}, s.stackExamples, limitSchema(examplesLimit))
	addTool(s, &mcp.Tool{Name: "get_native_viewer_plan",
		Description: "What a human runs to open an artifact in its own viewer (go tool pprof, perf report, ...); launches nothing.",
		Annotations: readOnly("Native viewer plan")}, s.viewerPlan)
}

func (s *server) analyzeHotspots(ctx context.Context, _ *mcp.CallToolRequest, in analysis.HotspotsRequest) (*analysis.HotspotsOutput, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = hotspotsLimit
	}
	res, err := analysis.Hotspots(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	out := &analysis.HotspotsOutput{HotspotsResult: res}
	sum := fmt.Sprintf("%s of %s: %s", res.SampleType.Type, res.Source.ArtifactID,
		pageText("frame(s)", res.Returned, res.Total, res.Truncated, res.Cursor))
	if res.SourceNote != "" {
		// First, so that an agent never reads another kind of profile
		// than it expects without being told.
		sum = choiceText(res.Source) + sum
	}
	if res.Parameters.Focus != "" || res.Parameters.Ignore != "" {
		sum += "; filtered by focus/ignore as go tool pprof does"
	}
	if len(res.Rows) > 0 {
		r := res.Rows[0]
		// Names come from the artifact: they stay in the structured result
		// (JSON-quoted), never in the text an agent reads as prose.
		sum += fmt.Sprintf("; top frame %s has %.1f%% self", r.FrameID, 100*r.SelfFraction)
	}
	return out, sum, nil
}

func (s *server) stacksEdges(callers bool) handlerFunc[analysis.StacksRequest, analysis.CallEdgeResult] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in analysis.StacksRequest) (*analysis.CallEdgeResult, string, error) {
		ws, err := s.workspace()
		if err != nil {
			return nil, "", err
		}
		if in.Limit == 0 {
			in.Limit = edgesLimit
		}
		fn, what := analysis.Callees, "callee(s)"
		if callers {
			fn, what = analysis.Callers, "caller(s)"
		}
		res, err := fn(ctx, ws, in)
		if err != nil {
			return nil, "", err
		}
		sum := "frame " + res.Focus.FrameID + ": " + pageText(what, res.Returned, res.Total, res.Truncated, res.Cursor)
		if len(res.Matches) > 1 {
			sum += fmt.Sprintf("; the regexp matches %d frames, this is the heaviest (see matches)", len(res.Matches))
		}
		if res.SourceNote != "" {
			sum = choiceText(res.Source) + sum
		}
		return res, sum, nil
	}
}

func (s *server) stackExamples(ctx context.Context, _ *mcp.CallToolRequest, in analysis.StacksRequest) (*analysis.StackExamplesResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = examplesLimit
	}
	res, err := analysis.Examples(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, "frame " + res.Focus.FrameID + ": " + pageText("stack(s)", res.Returned, res.Total, res.Truncated, res.Cursor), nil
}

// viewerInput names what get_native_viewer_plan opens.
type viewerInput struct {
	ArtifactID string `json:"artifact_id" jsonschema:"artifact id, sha256:<hex>, or run id"`
}

func (s *server) viewerPlan(ctx context.Context, _ *mcp.CallToolRequest, in viewerInput) (*analysis.ViewerPlan, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	plan, err := analysis.Viewer(ctx, ws, all.Registry(), in.ArtifactID)
	if err != nil {
		return nil, "", err
	}
	// The command itself is not returned (no tool returns argv); the tool
	// and the payload path say what a person runs.
	plan.Argv = []string{}
	sum := fmt.Sprintf("%s opens %s (%s)", plan.Tool, plan.ArtifactID, plan.Kind)
	if plan.URL != "" {
		sum += "; it will serve " + plan.URL
	}
	if plan.SourceNote != "" {
		sum = "the run's profile was chosen (see source_note). " + sum
	}
	if !plan.Available {
		sum += "; " + plan.Tool + " is not installed"
	}
	return plan, sum + "; a human runs it (or `flameox open " + plan.ArtifactID + " --launch`)", nil
}

// choiceText says, in ids and flameox's own words only (the summary is
// prose an agent reads; names from artifacts stay in the structured
// result), that a run id was resolved to one of several profiles or to a
// profile that is not a CPU profile.
func choiceText(src analysis.Source) string {
	if src.Kind != "sample_profile" {
		return "no CPU profile in this run: this reads " + src.ArtifactID + " (" + src.Kind + "), see source_note. "
	}
	return "the run has several profiles: this reads " + src.ArtifactID + ", see source_note. "
}
