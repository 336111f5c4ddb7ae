package workload

import (
	"context"
	"github.com/flameox/flameox/pkg/corpus"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
)

func newWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	res, err := workspace.Init(context.Background(), t.TempDir(), time.Now(), corpus.InitHead)
	if err != nil {
		t.Fatal(err)
	}
	return res.Workspace
}

func TestApproveAndCheck(t *testing.T) {
	ws := newWorkspace(t)
	src := readFile(t, "full.toml")
	scan := mustParse(t, src).Workloads["scan"]
	a, err := LoadApprovals(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Check(scan)
	if fe := fault.As(err); fe == nil || fe.Code != fault.ExecutionRefused || fe.ExitCode() != fault.ExitPolicy ||
		!strings.Contains(fe.Message, "never been approved") || fe.Details["reason"] != Unapproved ||
		len(fe.Remediation) != 1 || !strings.Contains(fe.Remediation[0], "`flameox workload approve scan` (CLI only)") {
		t.Fatalf("never approved: %#v", fe)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	ap, err := Approve(context.Background(), ws, scan, now)
	if err != nil {
		t.Fatal(err)
	}
	if ap.DefinitionID != scan.DefinitionID() || !ap.ApprovedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("approval: %+v", ap)
	}
	// A second approval keeps the first.
	startup := mustParse(t, src).Workloads["startup"]
	if _, err := Approve(context.Background(), ws, startup, now); err != nil {
		t.Fatal(err)
	}
	if a, err = LoadApprovals(ws.Root); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(scan); err != nil {
		t.Fatalf("approved workload refused: %v", err)
	}
	if err := a.Check(mustParse(t, readFile(t, "full_reformatted.toml")).Workloads["scan"]); err != nil {
		t.Fatalf("reformatting revoked the approval: %v", err)
	}
	sums := Summarize(mustParse(t, src), a)
	if len(sums) != 2 || sums[0].Name != "scan" || sums[0].Approval != Approved || sums[1].Approval != Approved ||
		strings.Join(sums[0].ParameterNames, ",") != "length,mode" || sums[0].OracleStrength != StrengthCrossTreatment {
		t.Fatalf("summaries: %+v", sums)
	}

	tests := []struct{ name, old, new, want string }{
		{"argv", `"scan.py", "{mode}"`, `"scan.py", "--mode={mode}"`, "argv[2] changed"},
		{"argv longer", `"{length}"]`, `"{length}", "-v"]`, "argv length 4 → 5"},
		{"timeout", "timeout_seconds = 30", "timeout_seconds = 60", "timeout_seconds 30 → 60"},
		{"cwd", `cwd = "."`, `cwd = "sub"`, "cwd changed"},
		{"env", `env = { SCAN_MODE = "{mode}" }`, `env = { SCAN_MODE = "{mode}", LD_PRELOAD = "x.so" }`, "env.LD_PRELOAD added"},
		{"allow_env", `allow_env = ["OPENAI_API_KEY"]`, `allow_env = []`, "allow_env OPENAI_API_KEY removed"},
		{"choices", `"broken"]`, `"broken", "evil"]`, "parameters.mode choices changed"},
		{"default", `["baseline", "candidate", "broken"]`, `["broken", "baseline", "candidate"]`, `parameters.mode choice order changed (default "baseline" → "broken")`},
		{"oracle argv", `"validate.py"`, `"true.py"`, "oracle.argv changed"},
		{"oracle strength", `strength = "cross_treatment_equivalence"`, `strength = "execution_check"`, "oracle.strength cross_treatment_equivalence → execution_check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edited := mustParse(t, strings.Replace(src, tt.old, tt.new, 1)).Workloads["scan"]
			err := a.Check(edited)
			fe := fault.As(err)
			if fe == nil || fe.Code != fault.ExecutionRefused || fe.ExitCode() != fault.ExitPolicy {
				t.Fatalf("edit not refused: %v", err)
			}
			if !strings.Contains(fe.Message, tt.want) || !strings.Contains(fe.Details["changes"], tt.want) || fe.Details["reason"] != Changed {
				t.Fatalf("refusal %q (details %v) does not say %q", fe.Message, fe.Details, tt.want)
			}
			if a.Status(edited) != Changed {
				t.Fatal("status is not changed")
			}
		})
	}
}

func TestApprovalsCorrupt(t *testing.T) {
	ws := newWorkspace(t)
	w := mustParse(t, readFile(t, "full.toml")).Workloads["scan"]
	if _, err := Approve(context.Background(), ws, w, time.Now()); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(ws.Path(ApprovalsFile))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, content string }{
		{"not json", "{"},
		{"empty", ""},
		{"trailing data", string(good) + "{}"},
		{"unknown field", strings.Replace(string(good), `"schema_version"`, `"extra": 1, "schema_version"`, 1)},
		{"future version", strings.Replace(string(good), `"schema_version": 1`, `"schema_version": 2`, 1)},
		{"tampered canonical", strings.Replace(string(good), `"timeout_seconds": 30`, `"timeout_seconds": 31`, 1)},
		{"tampered id", strings.Replace(string(good), w.DefinitionID(), "sha256:"+strings.Repeat("0", 64), 1)},
		{"wrong entry name", strings.Replace(string(good), `"name": "scan"`, `"name": "other"`, 1)},
		{"null entry", `{"schema_version": 1, "workloads": {"scan": null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.content == string(good) {
				t.Fatal("fixture edit did not apply")
			}
			if err := os.WriteFile(ws.Path(ApprovalsFile), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadApprovals(ws.Root)
			fe := fault.As(err)
			if fe == nil || fe.Code != fault.WorkspaceInvalid || fe.Details["file"] != ApprovalsFile || !strings.Contains(fe.Message, ApprovalsFile) {
				t.Fatalf("got %v, want WORKSPACE_INVALID naming %s", err, ApprovalsFile)
			}
			// Approving over a damaged file refuses instead of discarding it.
			if _, err := Approve(context.Background(), ws, w, time.Now()); !fault.Is(err, fault.WorkspaceInvalid) {
				t.Fatalf("approve over damaged file: %v", err)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	f := mustParse(t, readFile(t, "full.toml"))
	scan, startup := f.Workloads["scan"].Canonical(), f.Workloads["startup"].Canonical()
	if _, err := f.Experiment("scan_scaling"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Experiment("nope"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown experiment: %v", err)
	}
	if v := f.Workloads["scan"].Parameter("length").Value(1); v != int64(65536) {
		t.Fatalf("typed value %#v", v)
	}
	edited := scan
	edited.Env = map[string]string{"OTHER": "1"}
	edited.Parameters = append([]Parameter{{Name: "extra", Type: TypeString, Choices: []string{"x"}}}, scan.Parameters[1:]...)
	edited.Oracle = nil
	got := strings.Join(Diff(scan, edited), "; ")
	want := "env.OTHER added; env.SCAN_MODE removed; parameters.extra added; parameters.length removed; oracle removed"
	if got != want {
		t.Fatalf("diff:\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(Diff(startup, scan), "; "); !strings.Contains(got, `name "startup" → "scan"`) || !strings.Contains(got, "oracle added") {
		t.Fatalf("diff across workloads: %s", got)
	}
	long, longer := scan, scan
	long.Argv, longer.Argv = make([]string, 30), make([]string, 30)
	for i := range longer.Argv {
		longer.Argv[i] = "x"
	}
	if got := Diff(long, longer); len(got) != maxChanges+1 || got[maxChanges] != "and 10 more changes" {
		t.Fatalf("cap: %q", got)
	}
	typed := scan
	typed.Parameters = []Parameter{scan.Parameters[0], {Name: "mode", Type: TypeInteger, Choices: []string{"1"}}}
	if got := Diff(scan, typed); len(got) != 1 || got[0] != "parameters.mode type string → integer" {
		t.Fatalf("type change: %q", got)
	}
	if got := Diff(scan, scan); len(got) != 1 || got[0] != "the canonical form changed" {
		t.Fatalf("identical forms: %q", got)
	}
}
