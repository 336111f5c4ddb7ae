package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/investigate"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// addInquiryTools registers the investigation, hypothesis and run-set tools.
// Writes publish one small generation each and are neither read-only nor
// destructive (a hypothesis revision is compare-and-swap; nothing is
// overwritten); reads are read-only and idempotent.
func (s *server) addInquiryTools() {
	write := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	}
	addTool(s, &mcp.Tool{Name: "create_investigation",
		Description: "Open an investigation: the question, the symptom, the investigation it splits from.",
		Annotations: write("Create investigation")}, s.createInvestigation)
	addTool(s, &mcp.Tool{Name: "list_investigations",
		Description: "Investigations, newest first, with hypothesis counts.",
		Annotations: readOnly("List investigations")}, s.listInvestigations, limitSchema(listLimit), enum("status", inquiry.StatusOpen, inquiry.StatusClosed))
	addTool(s, &mcp.Tool{Name: "get_investigation",
		Description: "An investigation and its hypotheses at their latest revision.",
		Annotations: readOnly("Get investigation")}, s.getInvestigation)
	addTool(s, &mcp.Tool{Name: "record_hypothesis",
		Description: "Record a hypothesis (claim, prediction, discriminating condition), or revise one by hypothesis_id and expected_revision.",
		Annotations: write("Record hypothesis")}, s.recordHypothesis,
		enum("assessment", inquiry.Assessments()...), enum("lifecycle", inquiry.Lifecycles()...), func(sch *jsonschema.Schema) {
			if p := sch.Properties["expected_revision"]; p != nil {
				p.Minimum = jsonschema.Ptr(0.0)
			}
		})
	addTool(s, &mcp.Tool{Name: "get_hypothesis",
		Description: "Every revision of a hypothesis, newest first, and its current revision.",
		Annotations: readOnly("Get hypothesis")}, s.getHypothesis, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "freeze_run_set",
		Description: "Freeze published runs into a run set pinned at HEAD (sorted, digest-checked); the same runs and label give the same set.",
		Annotations: &mcp.ToolAnnotations{Title: "Freeze run set", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}, s.freezeRunSet, func(sch *jsonschema.Schema) {
		if p := sch.Properties["runs"]; p != nil {
			p.MinItems, p.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(10000)
		}
	})
	addTool(s, &mcp.Tool{Name: "list_run_sets",
		Description: "Frozen run sets, newest first.",
		Annotations: readOnly("List run sets")}, s.listRunSets, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "get_run_set",
		Description: "A run set: commit, selection, membership digest and members.",
		Annotations: readOnly("Get run set")}, s.getRunSet, limitSchema(listLimit))
}

func (s *server) createInvestigation(ctx context.Context, _ *mcp.CallToolRequest, in investigate.CreateInvestigationRequest) (*investigate.InvestigationCreated, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := investigate.CreateInvestigation(ctx, s.publisher(ws), in)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("investigation %s created at commit %s", res.Investigation.InvestigationID, corpus.Short(res.CommitID)), nil
}

func (s *server) listInvestigations(ctx context.Context, _ *mcp.CallToolRequest, in query.ListInvestigationsRequest) (*query.InvestigationList, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.ListInvestigations(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, pageText("investigation(s)", res.Returned, res.Total, res.Truncated, res.Cursor), nil
}

type investigationInput struct {
	InvestigationID string `json:"investigation_id" jsonschema:"investigation id (from list_investigations)"`
}

func (s *server) getInvestigation(ctx context.Context, _ *mcp.CallToolRequest, in investigationInput) (*query.InvestigationDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := query.GetInvestigation(ctx, ws, in.InvestigationID)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("investigation %s (%s): %d hypothesis(es)", res.InvestigationID, res.Status, res.HypothesisCount), nil
}

func (s *server) recordHypothesis(ctx context.Context, _ *mcp.CallToolRequest, in investigate.RecordHypothesisRequest) (*investigate.HypothesisRecorded, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := investigate.RecordHypothesis(ctx, s.publisher(ws), in)
	if err != nil {
		return nil, "", err
	}
	h := res.Hypothesis
	return res, fmt.Sprintf("hypothesis %s revision %d (%s, %s); revise with expected_revision %d", h.HypothesisID, h.Revision, h.Assessment, h.Lifecycle, h.Revision), nil
}

func (s *server) getHypothesis(ctx context.Context, _ *mcp.CallToolRequest, in query.GetHypothesisRequest) (*query.HypothesisDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.GetHypothesis(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("hypothesis %s: current revision %d; %d of %d revision(s) shown", res.HypothesisID, res.Current, res.Returned, res.Total), nil
}

func (s *server) freezeRunSet(ctx context.Context, _ *mcp.CallToolRequest, in investigate.FreezeRequest) (*investigate.RunSetFrozen, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := investigate.Freeze(ctx, s.publisher(ws), in)
	if err != nil {
		return nil, "", err
	}
	verb := "froze"
	if res.AlreadyFrozen {
		verb = "already frozen:"
	}
	return res, fmt.Sprintf("%s run set %s, %d run(s) at commit %s", verb, res.RunSet.RunSetID, res.RunSet.MemberCount, corpus.Short(res.RunSet.CorpusCommitID)), nil
}

func (s *server) listRunSets(ctx context.Context, _ *mcp.CallToolRequest, in query.ListRunSetsRequest) (*query.RunSetList, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.ListRunSets(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, pageText("run set(s)", res.Returned, res.Total, res.Truncated, res.Cursor), nil
}

func (s *server) getRunSet(ctx context.Context, _ *mcp.CallToolRequest, in query.GetRunSetRequest) (*query.RunSetDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.GetRunSet(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, fmt.Sprintf("run set %s: %d run(s) at commit %s; %d member(s) shown", res.RunSet.RunSetID, res.RunSet.MemberCount,
		corpus.Short(res.RunSet.CorpusCommitID), res.Returned), nil
}

// readInquiry is the flameox://investigations/{id}, hypotheses/{id} and
// run-sets/{id} resources: the get_* tools' results with their defaults.
func (s *server) readInquiry(ctx context.Context, ws *workspace.Workspace, refType, id string) (any, error) {
	switch refType {
	case "investigation":
		return query.GetInvestigation(ctx, ws, id)
	case "hypothesis":
		return query.GetHypothesis(ctx, ws, query.GetHypothesisRequest{HypothesisID: id, Limit: listLimit})
	default:
		return query.GetRunSet(ctx, ws, query.GetRunSetRequest{RunSetID: id, Limit: listLimit})
	}
}
