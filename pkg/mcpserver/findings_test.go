package mcpserver_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestFindingsOverMCP: over the real stdio transport, a finding resting
// on an exploratory comparison is refused as supported, with the missing
// requirement named; recorded as inconclusive and revised by
// compare-and-swap (a stale revision refused, pointing at get_finding);
// an observed finding rests on an imported run's observation. Every read
// equals the CLI's --json, value for value, and the resource reads the
// same finding.
func TestFindingsOverMCP(t *testing.T) {
	dir := captureProject(t, compareTOML, "scan")
	run := porcelainJSON(t, dir, "experiment", "run", "scan", "--adapter", "process").(map[string]any)
	sets := run["run_sets"].([]any)
	base, cand := sets[0].(map[string]any)["run_set_id"].(string), sets[1].(map[string]any)["run_set_id"].(string)
	rec := porcelainJSON(t, dir, "analyze", "record-comparison", base, cand, "--metric", "gobench.sec/op", "--threshold", "0.05").(map[string]any)
	cmp := rec["recorded"].(map[string]any)["comparison_id"].(string)

	c := connect(t, dir, nil)
	finding := map[string]any{"kind": "performance", "title": "cand is faster", "claim": "cand scans about 10% faster",
		"evidence_level": "derived", "assessment": "supported", "evidence": []map[string]any{{"ref_type": "comparison", "ref_id": cmp}}}
	// Not a committed project: partial source identity, an exploratory
	// comparison.
	env := c.fails("record_finding", finding, "COMPARISON_INVALID")
	// Nor did the experiment declare an oracle.
	if env.Error.Details["missing"] != "valid_comparison,cross_treatment_oracle" || !strings.Contains(env.Error.Details["valid_comparison"], "exploratory") ||
		!strings.Contains(env.Error.Details["cross_treatment_oracle"], "ran no oracle") {
		t.Fatalf("refusal: %+v", env.Error)
	}
	finding["assessment"] = "inconclusive"
	var f struct {
		Finding struct {
			ID       string `json:"finding_id"`
			Revision int    `json:"revision"`
		} `json:"finding"`
		CorpusCommitID string   `json:"corpus_commit_id"`
		NextSteps      []string `json:"next_steps"`
	}
	c.ok("record_finding", finding, &f)
	if f.Finding.Revision != 1 || f.CorpusCommitID == "" || len(f.NextSteps) != 1 || !strings.HasPrefix(f.NextSteps[0], "get_finding") {
		t.Fatalf("record_finding: %+v", f)
	}
	c.ok("record_finding", map[string]any{"finding_id": f.Finding.ID, "expected_revision": 1, "confidence": "low",
		"limitations": []string{"partial source identity"}}, &f)
	if f.Finding.Revision != 2 {
		t.Fatalf("revised to revision %d, want 2", f.Finding.Revision)
	}
	env = c.fails("record_finding", map[string]any{"finding_id": f.Finding.ID, "expected_revision": 1, "lifecycle": "retracted"}, "REVISION_CONFLICT")
	if env.Error.Details["current_revision"] != "2" || !strings.Contains(strings.Join(env.Error.Remediation, " "), "get_finding") {
		t.Fatalf("conflict: %+v", env.Error)
	}
	c.fails("record_finding", map[string]any{"kind": "behavior", "title": "t", "claim": "c", "evidence_level": "derived",
		"evidence": []map[string]any{{"ref_type": "run", "ref_id": "00000000-0000-4000-8000-000000000000"}}}, "NOT_FOUND")
	c.fails("record_finding", map[string]any{"kind": "behavior", "title": "t", "claim": "c", "evidence_level": "observed",
		"evidence": []map[string]any{{"ref_type": "comparison", "ref_id": cmp}}}, "INVALID_ARGUMENTS")

	// An observed finding: an imported pyperf run's metadata observation.
	b, err := os.ReadFile(filepath.Join("..", "query", "testdata", "pyperf__telco.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "telco.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	runID, _ := c.importedRun("telco.json")
	obs := observationOf(t, dir, runID)
	var o struct {
		Finding struct {
			ID string `json:"finding_id"`
		} `json:"finding"`
	}
	c.ok("record_finding", map[string]any{"kind": "behavior", "title": "telco ran on CPython", "claim": "the benchmark recorded its interpreter",
		"evidence_level": "observed", "confidence": "high", "evidence": []map[string]any{{"ref_type": "observation", "ref_id": obs}, {"ref_type": "run", "ref_id": runID, "relation": "context"}}}, &o)

	for _, tc := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"list_findings", nil, []string{"findings", "list", "--limit", "20"}},
		{"list_findings", map[string]any{"kind": "behavior"}, []string{"findings", "list", "--kind", "behavior", "--limit", "20"}},
		{"get_finding", map[string]any{"finding_id": f.Finding.ID}, []string{"findings", "show", f.Finding.ID, "--limit", "20"}},
		{"get_finding", map[string]any{"finding_id": o.Finding.ID}, []string{"findings", "show", o.Finding.ID, "--limit", "20"}},
	} {
		got := mcpResult(t, c, tc.tool, tc.args)
		want := porcelainJSON(t, dir, tc.cli...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs from flameox %v --json\nMCP: %v\nCLI: %v", tc.tool, tc.cli, got, want)
		}
	}
	var list struct {
		Total    int  `json:"total"`
		Returned int  `json:"returned"`
		Trunc    bool `json:"truncated"`
	}
	c.ok("list_findings", map[string]any{"limit": 1}, &list)
	if list.Total != 2 || list.Returned != 1 || !list.Trunc {
		t.Fatalf("list_findings limit 1: %+v", list)
	}
	// The write result is the CLI's type too: the same fields.
	args := []string{"findings", "record", "--kind", "other", "--title", "t", "--claim", "c", "--evidence-level", "inferred", "--evidence", "comparison:" + cmp + ":context"}
	cliRec := porcelainJSON(t, dir, args...)
	mcpRec := mcpResult(t, c, "record_finding", map[string]any{"kind": "other", "title": "t", "claim": "c", "evidence_level": "inferred",
		"evidence": []map[string]any{{"ref_type": "comparison", "ref_id": cmp, "relation": "context"}}})
	delete(mcpRec.(map[string]any), "next_tools") // next steps as tool calls: MCP's alone
	if a, b := keys(cliRec), keys(mcpRec); !reflect.DeepEqual(a, b) {
		t.Fatalf("record: CLI fields %v, MCP fields %v", a, b)
	}

	res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "flameox://findings/" + f.Finding.ID})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"current_revision": 2`) {
		t.Fatalf("finding resource: %v %v", err, res)
	}
}

// observationOf returns one observation id of run runID, read from the
// catalog (no command lists observations).
func observationOf(t *testing.T, dir, runID string) string {
	t.Helper()
	ctx := context.Background()
	ws, err := workspace.Discover(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := query.Open(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var id string
	q := catalog.Query{Name: "test.observation", Version: "1", SQL: `SELECT observation_id FROM observations WHERE run_id = $1 ORDER BY observation_id LIMIT 1`}
	if err := s.R.Scan(ctx, q, []any{runID}, func(rows *sql.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil || id == "" {
		t.Fatalf("no observation of run %s: %v", runID, err)
	}
	return id
}
