package workload

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// TestProposeRefuseAdopt: a proposal is written beside flameox.toml (in
// .diagnostics/proposals), changes neither flameox.toml nor approvals, is
// refused by name until adopted, and adoption replaces only the
// workload's own table text (comments and other tables stay) and approves
// exactly the proposed definition.
func TestProposeRefuseAdopt(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ws := newWorkspace(t)
	toml := `# project workloads, kept by hand
schema_version = 1

# the old benchmark
[workloads.bench]
argv = ["go", "test", "-bench=."]

[workloads.bench.parameters]
n = [1, 2]

# another one, untouched
[workloads.other]
argv = ["true"] # trailing comment
`
	tomlPath := filepath.Join(ws.ProjectRoot, FileName)
	if err := os.WriteFile(tomlPath, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	num := func(s string) json.RawMessage { return json.RawMessage(s) }
	fresh := Proposal{Name: "fresh", Description: "a \"quoted\"\nline", Argv: []string{"go", "test", "-run=^$", "-bench={b}", `x"] = 1 [evil`},
		Env: map[string]string{"GOFLAGS": "-count=1"}, Parameters: map[string]ProposedParameter{
			"b": {Choices: []json.RawMessage{num(`"Parse"`), num(`"Walk"`)}}, "count": {Min: num("1"), Max: num("50"), Default: num("5")}}}
	res, err := Propose(ctx, ws, fresh, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != ProposalNew || !strings.HasPrefix(res.DefinitionID, "sha256:") || res.File != ".diagnostics/proposals/fresh.toml" {
		t.Fatalf("propose: %+v", res)
	}
	if b, _ := os.ReadFile(tomlPath); string(b) != toml {
		t.Fatal("propose changed flameox.toml")
	}
	f, err := Load(ws.ProjectRoot)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Workload("fresh")
	if fe := fault.As(err); fe.Code != fault.ExecutionRefused || len(fe.Remediation) == 0 || !strings.Contains(fe.Remediation[0], "`flameox workload approve fresh`") {
		t.Fatalf("a proposed-only workload: %v", err)
	}
	if _, err := f.Workload("nothing"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown: %v", err)
	}

	// A change to bench: its table (with the subtable) is replaced in place.
	res, err = Propose(ctx, ws, Proposal{Name: "bench", Argv: []string{"go", "test", "-bench=Parse"}, TimeoutSeconds: 60}, now)
	if err != nil || res.Status != ProposalChange || len(res.Changes) == 0 {
		t.Fatalf("propose a change: %+v %v", res, err)
	}
	for _, name := range []string{"bench", "fresh"} {
		p, err := LoadProposal(ws, name)
		if err != nil {
			t.Fatal(err)
		}
		newSrc, a, err := PlanAdoption(ws, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(a.Diff, "[workloads."+name+"]") || (name == "fresh" && !strings.Contains(a.Diff, "+ [workloads.fresh]")) {
			t.Errorf("%s diff:\n%s", name, a.Diff)
		}
		if name == "bench" && (!a.Replaced || !strings.Contains(a.Diff, `- argv = ["go", "test", "-bench=."]`) || !strings.Contains(a.Diff, "- n = [1, 2]")) {
			t.Errorf("bench diff:\n%s", a.Diff)
		}
		ap, err := Adopt(ctx, ws, p, newSrc, now)
		if err != nil || ap.DefinitionID != p.Workload.DefinitionID() {
			t.Fatalf("adopt %s: %+v %v", name, ap, err)
		}
		if _, err := os.Stat(p.Path); !os.IsNotExist(err) {
			t.Errorf("%s: the proposal is still there", name)
		}
	}
	b, _ := os.ReadFile(tomlPath)
	got := string(b)
	for _, keep := range []string{"# project workloads, kept by hand", "# the old benchmark", "# another one, untouched", `argv = ["true"] # trailing comment`} {
		if !strings.Contains(got, keep) {
			t.Errorf("adoption lost %q:\n%s", keep, got)
		}
	}
	if strings.Contains(got, "-bench=.\"") || strings.Contains(got, "n = [1, 2]") {
		t.Errorf("the old bench table is still there:\n%s", got)
	}
	f, err = Load(ws.ProjectRoot)
	if err != nil {
		t.Fatalf("adopted file: %v\n%s", err, got)
	}
	a, _ := LoadApprovals(ws.Root)
	for _, name := range []string{"bench", "fresh"} {
		w, err := f.Workload(name)
		if err != nil || a.Check(w) != nil {
			t.Errorf("%s after adoption: %v %v", name, err, a.Check(w))
		}
	}
	if w := f.Workloads["fresh"]; w.Description != "a \"quoted\"\nline" || w.Argv[4] != `x"] = 1 [evil` || w.TimeoutSeconds != DefaultTimeoutSeconds {
		t.Errorf("fresh = %+v", w)
	}
}

// TestProposeRefusesInvalid: a proposal is checked as flameox.toml is.
func TestProposeRefusesInvalid(t *testing.T) {
	ws := newWorkspace(t)
	for _, p := range []Proposal{
		{Name: "Bad Name", Argv: []string{"x"}},
		{Name: "x", Argv: nil},
		{Name: "x", Argv: []string{"x", "{undeclared}"}},
		{Name: "x", Argv: []string{"x"}, Env: map[string]string{"A = 1\n[x]": "v"}},
		{Name: "x", Argv: []string{"x"}, Parameters: map[string]ProposedParameter{"n": {Min: json.RawMessage(`"1"`), Max: json.RawMessage("2")}}},
	} {
		if _, err := Propose(context.Background(), ws, p, time.Now()); err == nil {
			t.Errorf("%+v was proposed", p)
		}
	}
	if _, err := os.Stat(filepath.Join(ws.Root, ProposalsDir)); !os.IsNotExist(err) {
		t.Error("an invalid proposal was written")
	}
}
