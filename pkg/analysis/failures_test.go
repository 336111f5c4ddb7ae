package analysis

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/run"
	"github.com/spf13/pflag"
)

// TestFailureOutcome reads statuses as trials read them; a trial's own
// outcome wins (a cross-treatment oracle fails a run that succeeded); an
// open run or a trial that never ran is no attempt.
func TestFailureOutcome(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		a                     failureAttempt
		wantOutcome, wantClas string
	}{
		{"succeeded", failureAttempt{RunType: run.TypeExecution, Exec: "succeeded", Capture: "registered", Validation: "passed"}, "succeeded", "none"},
		{"exit 1", failureAttempt{RunType: run.TypeExecution, Exec: "failed", Capture: "registered", Validation: "not_requested"}, "failed", "process"},
		{"timed out", failureAttempt{RunType: run.TypeExecution, Exec: "timed_out", Capture: "registered"}, "timed_out", "timeout"},
		{"cancelled", failureAttempt{RunType: run.TypeExecution, Exec: "cancelled", Capture: "cancelled"}, "cancelled", "cancelled"},
		{"oracle", failureAttempt{RunType: run.TypeExecution, Exec: "succeeded", Capture: "registered", Validation: "failed"}, "oracle_failed", "validation"},
		{"validation error", failureAttempt{RunType: run.TypeExecution, Exec: "succeeded", Capture: "registered", Validation: "error"}, "oracle_failed", "validation"},
		{"capture failed", failureAttempt{RunType: run.TypeExecution, Exec: "succeeded", Capture: "failed", Validation: "not_requested"}, "failed", "capture"},
		{"import", failureAttempt{RunType: run.TypeImport, Exec: "not_applicable", Capture: "registered", Validation: "not_requested"}, "succeeded", "none"},
		{"quarantined import", failureAttempt{RunType: run.TypeImport, Exec: "not_applicable", Capture: "quarantined", Validation: "not_requested"}, "failed", "capture"},
		{"running", failureAttempt{RunType: run.TypeExecution, Exec: "running", Capture: "running"}, "open", ""},
		{"pending import", failureAttempt{RunType: run.TypeImport, Exec: "not_applicable", Capture: "pending"}, "open", ""},
		{"cross treatment", failureAttempt{RunID: "r", TrialID: "t", TrialOutcome: "oracle_failed", TrialClass: "cross_treatment", Exec: "succeeded", Capture: "registered"}, "oracle_failed", "cross_treatment"},
		{"trial without run", failureAttempt{TrialID: "t", TrialOutcome: "failed", TrialClass: "capture"}, "failed", "capture"},
		{"unattempted", failureAttempt{TrialID: "t", TrialOutcome: "unattempted"}, "unattempted", ""},
		{"pending trial", failureAttempt{TrialID: "t", TrialOutcome: "pending"}, "open", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, c := tc.a.outcome()
			if o != tc.wantOutcome || c != tc.wantClas {
				t.Errorf("outcome = %s/%s, want %s/%s", o, c, tc.wantOutcome, tc.wantClas)
			}
		})
	}
}

// TestErrorShape: the same error seen in many runs is one shape, ids,
// paths, numbers and quoted values aside; different errors stay apart.
func TestErrorShape(t *testing.T) {
	for _, tc := range []struct {
		code, msg, want string
	}{
		{"PROCESS_FAILED", "the workload failed with exit status 1", "PROCESS_FAILED: the workload failed with exit status <n>"},
		{"PROCESS_FAILED", "the workload failed with signal SIGKILL", "PROCESS_FAILED: the workload failed with signal SIGKILL"},
		{"PROCESS_TIMEOUT", "the workload ran out of time after 2.001s", "PROCESS_TIMEOUT: the workload ran out of time after <n>s"},
		{"PROCESS_FAILED", "cannot start /home/me/bin/tool: no such file or directory", "PROCESS_FAILED: cannot start <path>: no such file or directory"},
		{"ARTIFACT_PARSE_FAILED", "parse cpu.pprof: unexpected EOF", "ARTIFACT_PARSE_FAILED: parse <file>: unexpected EOF"},
		{"NOT_FOUND", "run 6a5ada83-e801-43ae-96a7-5aff459daa2a revision 3", "NOT_FOUND: run <id> revision <n>"},
		{"ARTIFACT_INTEGRITY_FAILED", "sha256:6b09a1bdc6fd1a1b2a6ba1d9fe1f07ab65b97ca4fc34c0fe1e364b3a7e8e4f48 differs", "ARTIFACT_INTEGRITY_FAILED: <digest> differs"},
		{"", "its oracle output differs from the good trial's in block-002 (tolerance 0): line 1", "its oracle output differs from the good trial's in block-<n> (tolerance <n>): line <n>"},
		{"EXECUTION_REFUSED", `workload "scan" has never been approved`, `EXECUTION_REFUSED: workload "…" has never been approved`},
		{"INTERNAL_ERROR", "bad pointer 0x7ffd1234 in trial tr-0123456789abcdef0123456789abcdef", "INTERNAL_ERROR: bad pointer <hex> in trial <id>"},
		{"PROCESS_FAILED", "", "PROCESS_FAILED"},
		{"", "", ""},
	} {
		if got := errorShape(tc.code, tc.msg); got != tc.want {
			t.Errorf("errorShape(%q, %q) = %q, want %q", tc.code, tc.msg, got, tc.want)
		}
	}
	long := errorShape("X", string(make([]byte, 1000)))
	if n := len([]rune(long)); n > maxMessageShape+len("X: ")+1 {
		t.Errorf("a long message's shape has %d runes", n)
	}
}

// att is an execution attempt for the grouping tests.
func att(id string, at int64, ok bool, workload, env, src string) failureAttempt {
	a := failureAttempt{RunID: id, RunType: run.TypeExecution, At: at, Revision: 1, Exec: "succeeded", Capture: "registered",
		Validation: "not_requested", Adapter: "process", Collector: "process", Workload: workload, WorkloadDef: "def-" + workload,
		Env: env, Source: src}
	if !ok {
		a.Exec, a.ErrorCode, a.Message = "failed", "PROCESS_FAILED", "the workload failed with exit status 1"
		one := int32(1)
		a.Exit = &one
	}
	return a
}

func analyse(atts []failureAttempt, limit int) *FailuresResult {
	res := &FailuresResult{Limitations: []string{}}
	analyseFailures(res, atts, limit)
	return res
}

func explanation(res *FailuresResult, dim, value string) *FailureExplanation {
	for i := range res.Explanations {
		if e := &res.Explanations[i]; e.Dimension == dim && e.Value == value {
			return e
		}
	}
	return nil
}

func group(res *FailuresResult, dim, value string) *FailureGroup {
	for i := range res.Groups {
		if g := &res.Groups[i]; g.Dimension == dim && g.Value == value {
			return g
		}
	}
	return nil
}

// TestFailureExplanations: competing explanations stay side by side with
// their evidence, and the ones the data cannot separate say so.
func TestFailureExplanations(t *testing.T) {
	type want struct {
		dim, value, strength string
		failures, succeeded  int
		indistinguishable    []string
	}
	for _, tc := range []struct {
		name   string
		atts   []failureAttempt
		want   []want
		absent [][2]string // explanations that must not be there
	}{{
		// Every failure ran in environment e2 at source s2; the workload
		// succeeded in e1 at s1: both explain the failures and the data
		// cannot tell them apart.
		name: "environment and source state coincide",
		atts: []failureAttempt{
			att("r1", 1, true, "w", "e1", "s1"), att("r2", 2, true, "w", "e1", "s1"),
			att("r3", 3, false, "w", "e2", "s2"), att("r4", 4, false, "w", "e2", "s2"), att("r5", 5, false, "w", "e2", "s2"),
		},
		want: []want{
			{DimEnvironment, "e2", "exclusive", 3, 0, []string{"source_state=s2"}},
			{DimSourceState, "s2", "exclusive", 3, 0, []string{"environment=e2"}},
			{DimWorkload, "def-w", "uniform", 3, 2, []string{"collector=process"}},
		},
	}, {
		// The failures share e2, where the workload also succeeded
		// (weaker), and s2, where it never did.
		name: "an environment that also succeeded is weaker",
		atts: []failureAttempt{
			att("r1", 1, true, "w", "e2", "s1"), att("r2", 2, true, "w", "e1", "s1"),
			att("r3", 3, false, "w", "e2", "s2"), att("r4", 4, false, "w", "e2", "s2"),
		},
		want: []want{
			{DimEnvironment, "e2", "mixed", 2, 1, []string{}},
			{DimSourceState, "s2", "exclusive", 2, 0, []string{}},
		},
	}, {
		// Failures spread over two environments: neither environment
		// is shared by two of them, so neither is a candidate.
		name: "spread failures explain nothing",
		atts: []failureAttempt{
			att("r1", 1, true, "w", "e1", "s1"), att("r2", 2, false, "w", "e1", "s1"), att("r3", 3, false, "w", "e2", "s1"),
		},
		want:   []want{{DimSourceState, "s1", "uniform", 2, 1, []string{"collector=process", "workload=def-w"}}},
		absent: [][2]string{{DimEnvironment, "e1"}, {DimEnvironment, "e2"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			res := analyse(tc.atts, 100)
			for _, w := range tc.want {
				e := explanation(res, w.dim, w.value)
				if e == nil {
					t.Fatalf("no explanation %s=%s in %+v", w.dim, w.value, res.Explanations)
				}
				if e.Strength != w.strength || e.Failures != w.failures || e.Succeeded != w.succeeded || !slices.Equal(e.Indistinguishable, w.indistinguishable) {
					t.Errorf("%s=%s: %+v, want %+v", w.dim, w.value, *e, w)
				}
			}
			for _, a := range tc.absent {
				if e := explanation(res, a[0], a[1]); e != nil {
					t.Errorf("explanation %s=%s: %+v", a[0], a[1], *e)
				}
			}
		})
	}
}

// TestFailureGroups: counts, dates, rates, the contrast of the same
// workload elsewhere, isolation, bounds and the summary.
func TestFailureGroups(t *testing.T) {
	atts := []failureAttempt{
		att("r1", 1_000_000, true, "w", "e1", "s1"), att("r2", 2_000_000, true, "w", "e1", "s1"),
		att("r3", 3_000_000, false, "w", "e2", "s1"), att("r4", 4_000_000, false, "w", "e2", "s1"),
		att("r5", 5_000_000, false, "w", "e2", "s1"), att("r6", 6_000_000, false, "w", "e2", "s1"),
		att("r7", 7_000_000, false, "other", "e1", "s1"),
		{RunID: "r8", RunType: run.TypeExecution, At: 8, Exec: "running", Capture: "running"},
		{TrialID: "t9", TrialOutcome: "unattempted"},
		{RunID: "r10", RunType: run.TypeImport, At: 10_000_000, Exec: "not_applicable", Capture: "quarantined", ErrorCode: "ARTIFACT_PARSE_FAILED",
			Message: "parse a.pprof: unexpected EOF", ImportKind: "sample_profile", Env: "e1", Source: "s1"},
	}
	res := analyse(atts, 100)
	s := res.Summary
	if s.Attempts != 8 || s.Failed != 6 || s.Succeeded != 2 || s.Open != 1 || s.Unattempted != 1 {
		t.Errorf("summary %+v", s)
	}
	// w's four failures are one signature; other's and the import's are
	// isolated.
	if s.Clusters != 1 || s.Clustered != 4 || s.Isolated != 2 {
		t.Errorf("clusters %d (%d failures), isolated %d", s.Clusters, s.Clustered, s.Isolated)
	}
	if want := []FailureKind{{"capture", 7, 5, 2}, {"import", 1, 1, 0}}; !reflect.DeepEqual(s.Kinds, want) {
		t.Errorf("kinds %+v, want %+v", s.Kinds, want)
	}
	g := group(res, DimEnvironment, "e2")
	if g == nil || g.Failures != 4 || g.Succeeded != 0 || g.FailureRate != 1 || g.SucceededElsewhere != 2 || g.Isolated {
		t.Fatalf("e2 %+v", g)
	}
	if g.FirstSeen.UnixMicro() != 3_000_000 || g.LastSeen.UnixMicro() != 6_000_000 {
		t.Errorf("e2 seen %v..%v", g.FirstSeen, g.LastSeen)
	}
	var reps, contrast []string
	for _, r := range g.Representatives {
		reps = append(reps, r.RunID)
	}
	for _, r := range g.Contrast {
		contrast = append(contrast, r.RunID)
	}
	if !slices.Equal(reps, []string{"r3", "r4", "r6"}) || !slices.Equal(contrast, []string{"r1"}) {
		t.Errorf("e2 representatives %v, contrast %v", reps, contrast)
	}
	// e1 holds one execution failure (imports join no environment).
	if g := group(res, DimEnvironment, "e1"); g == nil || g.Failures != 1 || !g.Isolated || g.Succeeded != 2 {
		t.Errorf("e1 %+v", g)
	}
	if g := group(res, DimCollector, "import sample_profile"); g == nil || g.Failures != 1 || !g.Isolated {
		t.Errorf("import collector %+v", g)
	}
	if g := group(res, DimError, "ARTIFACT_PARSE_FAILED: parse <file>: unexpected EOF"); g == nil || g.Failures != 1 {
		t.Errorf("import error %+v", g)
	}
	if g := group(res, DimOutcome, "succeeded/none"); g != nil {
		t.Errorf("a group of successes %+v", g)
	}
	if res.Total != int64(len(res.Groups)) || res.Truncated {
		t.Errorf("page %+v", res.Page)
	}
	// The largest groups first; a smaller limit keeps the head.
	for i := 1; i < len(res.Groups); i++ {
		if res.Groups[i].Failures > res.Groups[i-1].Failures {
			t.Fatalf("groups out of order at %d: %+v", i, res.Groups)
		}
	}
	small := analyse(atts, 3)
	if small.Returned != 3 || !small.Truncated || small.Total != res.Total || !reflect.DeepEqual(small.Groups, res.Groups[:3]) {
		t.Errorf("limit 3: %+v of %d", small.Page, res.Total)
	}
	// The order never depends on the order rows came in.
	for seed := range uint64(5) {
		shuffled := slices.Clone(atts)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := analyse(shuffled, 100); !reflect.DeepEqual(got, res) {
			t.Fatalf("seed %d: the result depends on row order", seed)
		}
	}
}

// TestFailureAnswer: the one line says whether failures cluster.
func TestFailureAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		atts []failureAttempt
		want string
	}{
		{"empty", nil, "no attempts in the corpus"},
		{"clean", []failureAttempt{att("r1", 1, true, "w", "e", "s")}, "no failures in 1 attempts"},
		{"isolated", []failureAttempt{att("r1", 1, true, "w", "e", "s"), att("r2", 2, false, "w", "e", "s")},
			"1 of 2 attempts failed; every failure is isolated (no two share a workload, outcome and error)"},
		{"clustered", []failureAttempt{att("r1", 1, false, "w", "e", "s"), att("r2", 2, false, "w", "e", "s"), att("r3", 3, true, "v", "e", "s")},
			"2 of 3 attempts failed; all of them clustered in 1 signature(s); candidate explanations no success contradicts: workload w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := analyse(tc.atts, 20).Summary.Answer; got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFailuresFlags: the command line takes every field of the request
// (the MCP schema is derived from the same tags), and nothing else.
func TestFailuresFlags(t *testing.T) {
	var r FailuresRequest
	fs := pflag.NewFlagSet("failures", pflag.ContinueOnError)
	r.Flags(fs)
	var flags, fields []string
	fs.VisitAll(func(f *pflag.Flag) { flags = append(flags, strings.ReplaceAll(f.Name, "-", "_")) })
	rt := reflect.TypeOf(r)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	slices.Sort(flags)
	slices.Sort(fields)
	if !slices.Equal(flags, fields) {
		t.Errorf("flags %v, fields %v", flags, fields)
	}
	if err := fs.Parse([]string{"--since", "2026-01-01T00:00:00Z", "--workload", "w", "--limit", "7"}); err != nil {
		t.Fatal(err)
	}
	if want := (FailuresRequest{Since: "2026-01-01T00:00:00Z", Workload: "w", Limit: 7}); r != want {
		t.Errorf("parsed %+v, want %+v", r, want)
	}
}

// BenchmarkAnalyseFailures groups the most attempts one analysis reads
// (docs/failures.md, Performance): 100000, a tenth of them failed, over
// 50 workloads, 4 environments and 20 source states.
func BenchmarkAnalyseFailures(b *testing.B) {
	atts := make([]failureAttempt, maxFailureAttempts)
	for i := range atts {
		w := fmt.Sprintf("w%d", i%50)
		atts[i] = att(fmt.Sprintf("r%06d", i), int64(i), i%10 != 0, w, fmt.Sprintf("e%d", i%4), fmt.Sprintf("s%d", i%20))
		atts[i].Params = map[string]string{"n": fmt.Sprint(i % 7)}
	}
	b.ReportAllocs()
	for b.Loop() {
		analyse(atts, defaultFailureLimit)
	}
}

// TestFailuresBounded: on a large corpus with many distinct values the
// default result stays small (an agent's context), whatever it holds;
// the limit bounds the explanations as well as the groups.
func TestFailuresBounded(t *testing.T) {
	atts := make([]failureAttempt, 5000)
	for i := range atts {
		env := fmt.Sprintf("sha256:%064x", i%40)
		src := fmt.Sprintf("sha256:%064x", 1000+i%60)
		atts[i] = att(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), int64(i)*1_000_000, i%3 != 0, fmt.Sprintf("w%d", i%30), env, src)
		atts[i].Message = fmt.Sprintf("the workload failed with exit status %d at /tmp/x%d/y", i%5, i)
	}
	res := analyse(atts, defaultFailureLimit)
	if res.Returned != defaultFailureLimit || !res.Truncated || len(res.Explanations) != defaultFailureLimit || res.ExplanationsTotal <= defaultFailureLimit {
		t.Fatalf("page %+v, %d of %d explanations", res.Page, len(res.Explanations), res.ExplanationsTotal)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the default result over 5000 attempts: %d bytes", len(b))
	if len(b) > 8<<10 {
		t.Errorf("the default result is %d bytes (> 8 KiB)", len(b))
	}
	// One error shape despite 5000 different messages.
	if g := group(res, DimError, "PROCESS_FAILED: the workload failed with exit status <n> at <path>"); g == nil || g.Failures != 1667 {
		t.Errorf("error group %+v", g)
	}
}
