package mcpserver

import (
	"context"
	"fmt"
	"sort"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listLimit is the MCP default page size of lists (the CLI's is 50): small
// enough to stay well under the result sizes hosts accept.
const listLimit = 20

func (s *server) addQueryTools() {
	addTool(s, &mcp.Tool{Name: "list_runs",
		Description: "Find runs (newest first) by workload, parameter values, status or time; shows outcome, wall time, peak RSS, benchmark count.",
		Annotations: readOnly("List runs")}, s.listRuns, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "get_run",
		Description: "One run's manifest: states, process outcome, containment, identity, artifacts (no command lines or env names).",
		Annotations: readOnly("Get run")}, s.getRun)
	addTool(s, &mcp.Tool{Name: "list_artifacts",
		Description: "Find stored artifacts: content facts, kinds, sensitivity, registrations (never the bytes).",
		Annotations: readOnly("List artifacts")}, s.listArtifacts, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "get_artifact",
		Description: "One artifact's size, hash time, sensitivity and registrations (never the bytes).",
		Annotations: readOnly("Get artifact")}, s.getArtifact)
	addTool(s, &mcp.Tool{Name: "query_measurements",
		Description: "Raw benchmark/test values with units (one per repetition, no statistics), by run, workload, parameters, subject or name.",
		Annotations: readOnly("Query measurements")}, s.queryMeasurements, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "summarize_measurements",
		Description: "A run's benchmarks per metric as benchstat sees them: n, median ± 95% interval, min, max, IQR, warnings (few values, wide spread).",
		Annotations: readOnly("Summarize measurements")}, s.summarizeMeasurements, limitSchema(listLimit))
	addTool(s, &mcp.Tool{Name: "get_evidence",
		Description: "One typed piece of evidence by type and id (run, artifact, generation, analysis, finding, ...).",
		Annotations: readOnly("Get evidence")}, s.getEvidence, enum("type", query.RefTypes()...))
}

func pageText(what string, returned int, total int64, truncated bool, cursor string) string {
	t := fmt.Sprintf("%d of %d %s", returned, total, what)
	if truncated {
		t += "; more with cursor " + cursor
	}
	return t
}

func (s *server) listRuns(ctx context.Context, _ *mcp.CallToolRequest, in query.ListRunsRequest) (*query.RunList, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.ListRuns(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, pageText("run(s)", res.Returned, res.Total, res.Truncated, res.Cursor) + " at commit " + corpus.Short(res.CorpusCommitID), nil
}

type runInput struct {
	RunID string `json:"run_id" jsonschema:"run id (a UUID, from list_runs)"`
}

func (s *server) getRun(ctx context.Context, _ *mcp.CallToolRequest, in runInput) (*query.RunDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	d, err := query.ShowRun(ctx, ws, in.RunID)
	if err != nil {
		return nil, "", err
	}
	d = redactRunDetail(d)
	return d, runText(d.Run, d.Published, d.BenchmarkCount), nil
}

func runText(m *run.Manifest, published bool, benchmarks int) string {
	t := fmt.Sprintf("run %s (%s, revision %d): execution %s, capture %s, validation %s, %d artifact(s)", m.RunID, m.RunType,
		m.Revision, m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus, len(m.Artifacts))
	if wl := m.Workload; wl != nil {
		keys := make([]string, 0, len(wl.Parameters))
		for k := range wl.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t += "; workload " + wl.Name
		for _, k := range keys {
			t += " " + k + "=" + wl.Parameters[k]
		}
		t += " under " + wl.Adapter
	}
	if p := m.Process; p != nil {
		t += fmt.Sprintf("; exit %d", p.ExitCode)
		if p.Signal != "" {
			t += ", signal " + p.Signal
		}
	}
	if benchmarks > 0 {
		t += fmt.Sprintf("; %d benchmark(s)", benchmarks)
	}
	if !published {
		t += "; not published yet"
	}
	return t
}

func (s *server) listArtifacts(ctx context.Context, _ *mcp.CallToolRequest, in query.ListArtifactsRequest) (*query.ArtifactList, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.ListArtifacts(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, pageText("artifact(s)", res.Returned, res.Total, res.Truncated, res.Cursor), nil
}

type artifactInput struct {
	ArtifactID string `json:"artifact_id" jsonschema:"artifact id, sha256:<hex> (from list_artifacts or a run)"`
}

func (s *server) getArtifact(ctx context.Context, _ *mcp.CallToolRequest, in artifactInput) (*query.ArtifactDetail, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	d, err := query.ShowArtifact(ctx, ws, in.ArtifactID)
	if err != nil {
		return nil, "", err
	}
	return d, fmt.Sprintf("artifact %s: %d bytes, %s, %d registration(s)", d.ArtifactID, d.ByteLength, d.EffectiveSensitivity, d.RegistrationsTotal), nil
}

func (s *server) queryMeasurements(ctx context.Context, _ *mcp.CallToolRequest, in query.MeasurementsRequest) (*query.MeasurementList, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.QueryMeasurements(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	return res, pageText("measurement(s)", res.Returned, res.Total, res.Truncated, res.Cursor), nil
}

func (s *server) summarizeMeasurements(ctx context.Context, _ *mcp.CallToolRequest, in query.SummaryRequest) (*query.MeasurementSummary, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	if in.Limit == 0 {
		in.Limit = listLimit
	}
	res, err := query.SummarizeMeasurements(ctx, ws, in)
	if err != nil {
		return nil, "", err
	}
	warned := 0
	for _, r := range res.Rows {
		if len(r.Warnings) > 0 {
			warned++
		}
	}
	return res, pageText("benchmark metric(s)", res.Returned, res.Total, res.Truncated, res.Cursor) +
		fmt.Sprintf(", %d with warnings", warned), nil
}

type evidenceInput struct {
	Type string `json:"type" jsonschema:"evidence type"`
	ID   string `json:"id" jsonschema:"the evidence id"`
}

func (s *server) getEvidence(ctx context.Context, _ *mcp.CallToolRequest, in evidenceInput) (*query.EvidenceResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	res, err := query.GetEvidence(ctx, ws, in.Type, in.ID)
	if err != nil {
		return nil, "", err
	}
	if res.Run != nil {
		res.Run = redactRunDetail(res.Run)
	}
	return res, fmt.Sprintf("%s %s at commit %s", res.RefType, res.RefID, corpus.Short(res.CorpusCommitID)), nil
}
