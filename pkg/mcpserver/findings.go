package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/investigate"
	"github.com/flameox/flameox/pkg/query"
)

// addFindingsTools registers the findings tools: record_finding publishes
// one revision (compare-and-swap, nothing overwritten: neither read-only
// nor destructive); get_finding and list_findings are read-only.
func (s *server) addFindingsTools() {
	addTool(s, &mcp.Tool{Name: "record_finding",
		Description: "Record a finding tied to evidence, or revise one; supported needs a valid recorded comparison (else COMPARISON_INVALID naming what is missing).",
		Annotations: &mcp.ToolAnnotations{Title: "Record finding", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}, s.recordFinding,
		enum("kind", inquiry.FindingKinds()...), enum("evidence_level", inquiry.EvidenceLevels()...), enum("confidence", inquiry.Confidences()...),
		enum("assessment", inquiry.FindingAssessments()...), enum("lifecycle", inquiry.FindingLifecycles()...), func(sch *jsonschema.Schema) {
			if p := sch.Properties["expected_revision"]; p != nil {
				p.Minimum = jsonschema.Ptr(0.0)
			}
			if p := sch.Properties["evidence"]; p != nil {
				p.MaxItems = jsonschema.Ptr(inquiry.MaxFindingRefs)
				if p.Items != nil {
					enum("ref_type", inquiry.RefTypes()...)(p.Items)
					enum("relation", inquiry.Relations()...)(p.Items)
				}
			}
		})
	addTool(s, &mcp.Tool{Name: "get_finding",
		Description: "A finding: current revision, evidence and revisions, newest first.",
		Annotations: readOnly("Get finding")}, s.getFinding, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "list_findings",
		Description: "Findings at their latest revision, newest first.",
		Annotations: readOnly("List findings")}, s.listFindings, limitSchema(listLimit),
		enum("kind", inquiry.FindingKinds()...), enum("assessment", inquiry.FindingAssessments()...))
}

func (s *server) recordFinding(ctx context.Context, _ *mcp.CallToolRequest, in investigate.RecordFindingRequest) (*investigate.FindingRecorded, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := investigate.RecordFinding(ctx, s.publisher(ws), in)
	if err != nil {
		return nil, "", err
	}
	f := res.Finding
	return res, fmt.Sprintf("finding %s revision %d (%s) with %d reference(s); revise with expected_revision %d", f.FindingID, f.Revision, f.Assessment, len(res.Evidence), f.Revision), nil
}

func (s *server) getFinding(ctx context.Context, _ *mcp.CallToolRequest, in query.GetFindingRequest) (*query.FindingDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.GetFinding(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("finding %s: current revision %d (%s); %d reference(s)", res.FindingID, res.Current, res.Finding.Assessment, res.EvidenceTotal), nil
}

func (s *server) listFindings(ctx context.Context, _ *mcp.CallToolRequest, in query.ListFindingsRequest) (*query.FindingList, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.ListFindings(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, pageText("finding(s)", res.Returned, res.Total, res.Truncated, res.Cursor), nil
}
