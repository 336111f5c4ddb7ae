package mcpserver

import (
	"context"
	"fmt"
	"mime"
	"net/url"
	"path/filepath"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/chart"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pictureRequest is render_picture's input: one tool for the three
// pictures (render comparison, render scaling, report), within the
// tools/list budget.
type pictureRequest struct {
	Kind   string   `json:"kind" jsonschema:"comparison, scaling or report"`
	Inputs []string `json:"inputs" jsonschema:"comparison: 2 runs, 2 run sets or an experiment; scaling: an experiment; report: an investigation"`
	Output string   `json:"output" jsonschema:"project file: .svg, .png (.html for report)"`
	Metric string   `json:"metric,omitempty" jsonschema:"metric of 2 run sets or of scaling"`
	Image  bool     `json:"image,omitempty" jsonschema:"also return a PNG image"`
}

// pictureOutput is the result with the content blocks besides its text:
// a resource_link to the file and, when asked, the PNG.
type pictureOutput struct {
	chart.PictureResult
	content []mcp.Content
}

func (o *pictureOutput) extraContent() []mcp.Content { return o.content }

// maxImageBytes bounds the PNG returned inline; a larger picture is
// left to the file.
const maxImageBytes = 4 << 20

// addPictureTools registers render_picture (issue 22).
func (s *server) addPictureTools() {
	addTool(s, &mcp.Tool{Name: "render_picture",
		Description: "Draw a comparison or scaling plot (SVG, PNG) or an investigation's HTML report into a project file; returns its path.",
		Annotations: &mcp.ToolAnnotations{Title: "Render picture", IdempotentHint: true, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}},
		s.renderPicture)
}

func (s *server) renderPicture(ctx context.Context, _ *mcp.CallToolRequest, in pictureRequest) (*pictureOutput, string, error) {
	if err := s.inProject(in.Output); err != nil {
		return nil, "", err
	}
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	one := func() error {
		if len(in.Inputs) != 1 {
			return fault.New(fault.InvalidArguments, "%s takes one input, not %d", in.Kind, len(in.Inputs)).With("field", "inputs")
		}
		return nil
	}
	var res *chart.PictureResult
	switch in.Kind {
	case "comparison":
		req := chart.ComparisonRequest{Inputs: in.Inputs, Output: in.Output, PNG: in.Image}
		req.Sets.Metric = in.Metric
		res, err = chart.RenderComparison(ctx, ws, req, s.opts.ProjectRoot)
	case "scaling":
		if err = one(); err == nil {
			res, err = chart.RenderScaling(ctx, ws, chart.ScalingRequest{ScalingRequest: analysis.ScalingRequest{ExperimentID: in.Inputs[0], Metric: in.Metric},
				Output: in.Output, PNG: in.Image}, s.opts.ProjectRoot)
		}
	case "report":
		if err = one(); err == nil {
			res, err = chart.Report(ctx, ws, chart.ReportRequest{InvestigationID: in.Inputs[0], Output: in.Output}, s.opts.ProjectRoot)
		}
	default:
		err = fault.New(fault.InvalidArguments, "kind %q: render_picture draws comparison, scaling or report", in.Kind).With("field", "kind")
	}
	if err != nil {
		return nil, "", err
	}
	out := &pictureOutput{PictureResult: *res}
	size := res.Bytes
	mt := mime.TypeByExtension(filepath.Ext(res.Path))
	if mt == "" {
		mt = "application/octet-stream"
	}
	out.content = append(out.content, &mcp.ResourceLink{URI: (&url.URL{Scheme: "file", Path: res.Path}).String(), Name: filepath.Base(res.Path),
		MIMEType: mt, Size: &size})
	switch {
	case in.Image && len(res.PNG) > 0 && len(res.PNG) <= maxImageBytes:
		out.content = append(out.content, &mcp.ImageContent{Data: res.PNG, MIMEType: "image/png"})
	case in.Image && len(res.PNG) > maxImageBytes:
		out.Limitations = append(out.Limitations, fmt.Sprintf("the PNG is %d bytes, over the %d an image block carries: open the file", len(res.PNG), maxImageBytes))
	case in.Image:
		out.Limitations = append(out.Limitations, "a report is an HTML page: no image block; open the file")
	}
	return out, fmt.Sprintf("wrote %s (%s, %d bytes)", res.Path, res.Format, res.Bytes), nil
}
