package mcpserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type outputInput struct {
	RunID    string `json:"run_id" jsonschema:"run id (a UUID)"`
	Stream   string `json:"stream,omitempty" jsonschema:"stdout (default), stderr, oracle_stdout or oracle_stderr"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"first byte: 0, or the previous next_offset"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"bytes to read"`
}

// addOutputTools adds get_run_output: a failed capture's result carries
// only the tails of its output; this pages the rest.
func (s *server) addOutputTools() {
	addTool(s, &mcp.Tool{Name: "get_run_output",
		Description: "Page a run's stored stdout or stderr (redacted, escaped) by byte offset, when a failure tail is not enough.",
		Annotations: readOnly("Get run output")}, s.getRunOutput,
		enum("stream", capture.OutputStreams...), runOutputSchema)
}

func runOutputSchema(sch *jsonschema.Schema) {
	if p := sch.Properties["max_bytes"]; p != nil {
		p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(capture.MaxOutputPage))
		p.Default = []byte(strconv.Itoa(capture.DefaultOutputPage))
	}
	if p := sch.Properties["offset"]; p != nil {
		p.Minimum = jsonschema.Ptr(0.0)
	}
}

func (s *server) getRunOutput(ctx context.Context, _ *mcp.CallToolRequest, in outputInput) (*capture.OutputPage, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	p, err := capture.ReadOutput(ctx, ws, capture.OutputRequest{RunID: in.RunID, Stream: in.Stream, Offset: in.Offset, MaxBytes: in.MaxBytes})
	if err != nil {
		return nil, "", err
	}
	if p.Sensitivity == "sensitive" {
		return nil, "", fault.New(fault.SensitiveArtifactRefused, "the %s of run %s is stored as sensitive and is not returned over MCP", p.Stream, p.RunID).
			With("artifact_id", p.ArtifactID).Fix("Read it yourself: flameox runs output " + p.RunID + " --stream " + p.Stream)
	}
	sum := fmt.Sprintf("%s of run %s: bytes %d-%d of %d", p.Stream, p.RunID, p.Offset, p.NextOffset, p.Total)
	if p.Truncated {
		sum += fmt.Sprintf("; more with offset %d", p.NextOffset)
	}
	return p, sum, nil
}
