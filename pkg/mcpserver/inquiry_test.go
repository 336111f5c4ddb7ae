package mcpserver_test

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInquiryOverMCP: an investigation, a hypothesis revised by
// compare-and-swap (a stale revision refused with the current one named,
// pointing at get_hypothesis) and a frozen run set, written over MCP; every
// read is the same model as the CLI's --json, value for value, and the
// resources read the same records.
func TestInquiryOverMCP(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	var inv struct {
		Investigation struct {
			ID string `json:"investigation_id"`
		} `json:"investigation"`
		CommitID string `json:"commit_id"`
	}
	c.ok("create_investigation", map[string]any{"question": "why slow?", "symptom": "p50 up"}, &inv)
	if inv.Investigation.ID == "" || inv.CommitID == "" {
		t.Fatalf("create_investigation: %+v", inv)
	}
	var h struct {
		Hypothesis struct {
			ID       string `json:"hypothesis_id"`
			Revision int    `json:"revision"`
		} `json:"hypothesis"`
	}
	c.ok("record_hypothesis", map[string]any{"investigation_id": inv.Investigation.ID, "claim": "cache misses",
		"prediction": "more misses", "discriminating_condition": "grows with size"}, &h)
	c.ok("record_hypothesis", map[string]any{"hypothesis_id": h.Hypothesis.ID, "expected_revision": 1, "assessment": "supported"}, &h)
	if h.Hypothesis.Revision != 2 {
		t.Fatalf("revised to revision %d, want 2", h.Hypothesis.Revision)
	}
	env := c.fails("record_hypothesis", map[string]any{"hypothesis_id": h.Hypothesis.ID, "expected_revision": 1, "claim": "late"}, "REVISION_CONFLICT")
	if env.Error.Details["current_revision"] != "2" || !strings.Contains(strings.Join(env.Error.Remediation, " "), "get_hypothesis") {
		t.Fatalf("conflict: %+v", env.Error)
	}
	c.fails("record_hypothesis", map[string]any{"investigation_id": inv.Investigation.ID, "claim": "c", "prediction": "p",
		"discriminating_condition": "d", "assessment": "likely"}, "INVALID_ARGUMENTS")

	run1, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	run2, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	var rs struct {
		AlreadyFrozen bool `json:"already_frozen"`
		RunSet        struct {
			ID    string `json:"run_set_id"`
			Count int    `json:"member_count"`
		} `json:"run_set"`
	}
	c.ok("freeze_run_set", map[string]any{"runs": []string{run2, run1}, "label": "pair"}, &rs)
	if rs.AlreadyFrozen || rs.RunSet.Count != 2 {
		t.Fatalf("freeze_run_set: %+v", rs)
	}
	first := rs.RunSet.ID
	c.ok("freeze_run_set", map[string]any{"runs": []string{run1, run2}, "label": "pair"}, &rs)
	if !rs.AlreadyFrozen || rs.RunSet.ID != first {
		t.Fatalf("second freeze: %+v, want the set %s already frozen", rs, first)
	}
	env = c.fails("freeze_run_set", map[string]any{"runs": []string{run1, "00000000-0000-4000-8000-000000000000"}}, "NOT_FOUND")
	if env.Error.Details["run_id"] != "00000000-0000-4000-8000-000000000000" {
		t.Fatalf("missing run not named: %+v", env.Error)
	}

	cases := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"list_investigations", nil, []string{"investigations", "list", "--limit", "20"}},
		{"get_investigation", map[string]any{"investigation_id": inv.Investigation.ID}, []string{"investigations", "show", inv.Investigation.ID}},
		{"get_hypothesis", map[string]any{"hypothesis_id": h.Hypothesis.ID}, []string{"hypotheses", "show", h.Hypothesis.ID, "--limit", "20"}},
		{"list_run_sets", nil, []string{"run-sets", "list", "--limit", "20"}},
		{"get_run_set", map[string]any{"run_set_id": first}, []string{"run-sets", "show", first, "--limit", "20"}},
	}
	for _, tc := range cases {
		got := mcpResult(t, c, tc.tool, tc.args)
		want := porcelainJSON(t, dir, tc.cli...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs from flameox %v --json\nMCP: %v\nCLI: %v", tc.tool, tc.cli, got, want)
		}
	}
	var detail struct {
		Hypotheses []struct {
			Revision  int `json:"revision"`
			Revisions int `json:"revisions"`
		} `json:"hypotheses"`
	}
	c.ok("get_investigation", map[string]any{"investigation_id": inv.Investigation.ID}, &detail)
	if len(detail.Hypotheses) != 1 || detail.Hypotheses[0].Revision != 2 || detail.Hypotheses[0].Revisions != 2 {
		t.Fatalf("get_investigation hypotheses: %+v", detail.Hypotheses)
	}

	// The write results are the CLI's types too: the same fields.
	cliCreate := porcelainJSON(t, dir, "investigations", "create", "--question", "q")
	mcpCreate := mcpResult(t, c, "create_investigation", map[string]any{"question": "q"})
	if a, b := keys(cliCreate), keys(mcpCreate); !reflect.DeepEqual(a, b) {
		t.Fatalf("create: CLI fields %v, MCP fields %v", a, b)
	}

	for uri, want := range map[string]string{
		"flameox://investigations/" + inv.Investigation.ID: `"question": "why slow?"`,
		"flameox://hypotheses/" + h.Hypothesis.ID:          `"current_revision": 2`,
		"flameox://run-sets/" + first:                      `"membership_digest": "sha256:`,
	} {
		res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, want) {
			t.Fatalf("%s: %v %v", uri, err, res)
		}
	}
	if _, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "flameox://run-sets/rs-missing"}); err == nil {
		t.Fatal("a missing run set read as a resource")
	}
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k, x := range m {
		if sub, ok := x.(map[string]any); ok {
			for sk := range sub {
				out = append(out, k+"."+sk)
			}
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
