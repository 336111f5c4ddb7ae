package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// ranged declares workload r with an integer range count, a float range
// ratio and an enumerated mode, used in argv, env and the oracle.
const ranged = head + `[workloads.r]
argv = ["prog", "--count={count}", "{ratio}", "{mode}"]
env = { COUNT = "{count}" }
oracle = { argv = ["check", "{count}"] }
[workloads.r.parameters]
count = {min = 1, max = 50}
ratio = {min = 0.1, max = 0.9, default = 0.5}
mode = ["a", "b"]
`

func TestRangeParse(t *testing.T) {
	tests := []struct {
		name, decl           string
		typ, min, max, deflt string
	}{
		{"integer", "{min = 1, max = 50}", TypeInteger, "1", "50", "1"},
		{"float", "{min = 0.1, max = 0.9}", TypeFloat, "0.1", "0.9", "0.1"},
		{"integer default", "{min = -10, max = 10, default = 3}", TypeInteger, "-10", "10", "3"},
		{"key order", "{default = 3, max = 10, min = -10}", TypeInteger, "-10", "10", "3"},
		{"mixed becomes float", "{min = 0, max = 0.5, default = 0.25}", TypeFloat, "0", "0.5", "0.25"},
		{"integral floats stay float", "{min = 1.0, max = 2.0}", TypeFloat, "1", "2", "1"},
		{"one value", "{min = 5, max = 5}", TypeInteger, "5", "5", "5"},
		{"negative zero", "{min = -0.0, max = 1e3}", TypeFloat, "0", "1000", "0"},
		{"big integers", "{min = -9223372036854775808, max = 9223372036854775807}", TypeInteger, "-9223372036854775808", "9223372036854775807", "-9223372036854775808"},
		{"default at max", "{min = 1, max = 50, default = 50}", TypeInteger, "1", "50", "50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, head+"[workloads.w]\nargv = ['prog', '{q}']\n[workloads.w.parameters]\nq = "+tt.decl+"\n")
			p := f.Workloads["w"].Parameter("q")
			if !p.IsRange() || p.Type != tt.typ || p.Min != tt.min || p.Max != tt.max || p.Default != tt.deflt || len(p.Choices) != 0 {
				t.Fatalf("got %+v, want %s [%s, %s] default %s", p, tt.typ, tt.min, tt.max, tt.deflt)
			}
			inst, err := f.Workloads["w"].Render("/p", nil)
			if err != nil || inst.Argv[1] != tt.deflt {
				t.Fatalf("default renders %v %v, want %s", inst, err, tt.deflt)
			}
		})
	}
	// A range written as a sub-table is the same definition as the inline
	// table, and an explicit default equal to min is the implicit one.
	inline := mustParse(t, head+"[workloads.w]\nargv = ['prog']\n[workloads.w.parameters]\nq = {min = 1, max = 50}\n")
	table := mustParse(t, head+"[workloads.w]\nargv = ['prog']\n[workloads.w.parameters.q]\nmax = 50\nmin = 1\ndefault = 1\n")
	if inline.Workloads["w"].DefinitionID() != table.Workloads["w"].DefinitionID() {
		t.Fatal("the sub-table form gives another definition id")
	}
	// The canonical form shows a range as min, max and default, no choices.
	b, _ := json.Marshal(inline.Workloads["w"].Canonical().Parameters)
	if want := `[{"name":"q","type":"integer","min":"1","max":"50","default":"1"}]`; string(b) != want {
		t.Fatalf("canonical %s, want %s", b, want)
	}
}

func TestRangeParseRejects(t *testing.T) {
	q := func(decl string) string { return wl("argv = ['x']") + "q = " + decl + "\n" }
	tests := []struct{ name, src, want string }{
		{"min greater than max", q("{min = 10, max = 1}"), "workloads.w.parameters.q has min 10 greater than max 1"},
		{"float min greater than max", q("{min = 0.9, max = 0.1}"), "has min 0.9 greater than max 0.1"},
		{"missing max", q("{min = 1}"), "workloads.w.parameters.q is a range and needs both min and max (missing max)"},
		{"missing min", q("{max = 1}"), "(missing min)"},
		{"empty table", q("{}"), "needs both min and max"},
		{"unknown key", q("{min = 1, max = 5, step = 2}"), "unknown key(s) workloads.w.parameters.q.step"},
		{"case variant key", q("{Min = 1, max = 5}"), "unknown key(s) workloads.w.parameters.q.Min"},
		{"string bound", q("{min = '1', max = 5}"), "workloads.w.parameters.q.min must be an integer or a float, not a string"},
		{"boolean bound", q("{min = 1, max = true}"), "workloads.w.parameters.q.max must be an integer or a float, not a boolean"},
		{"array bound", q("{min = 1, max = [5]}"), "workloads.w.parameters.q.max must be an integer or a float, not an array"},
		{"string default", q("{min = 1, max = 5, default = 'a'}"), "workloads.w.parameters.q.default must be an integer or a float"},
		{"nan bound", q("{min = nan, max = 1.0}"), "workloads.w.parameters.q.min must be a finite number"},
		{"infinite bound", q("{min = 0.0, max = inf}"), "workloads.w.parameters.q.max must be a finite number"},
		{"default below", q("{min = 1, max = 5, default = 0}"), "workloads.w.parameters.q.default 0 is outside the range [1, 5]"},
		{"default above", q("{min = 0.1, max = 0.9, default = 0.95}"), "default 0.95 is outside the range [0.1, 0.9]"},
		{"inexact integer in float range", q("{min = 0.5, max = 9007199254740993}"), "cannot be represented exactly as a float"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkInvalid(t, tt.src, tt.want)
		})
	}
}

func TestRangeRender(t *testing.T) {
	w := mustParse(t, ranged).Workloads["r"]
	def, err := w.Render("/p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"prog", "--count=1", "0.5", "a"}; !slices.Equal(def.Argv, want) || def.Env["COUNT"] != "1" || def.OracleArgv[1] != "1" {
		t.Fatalf("defaults rendered %q env %v oracle %q, want %q", def.Argv, def.Env, def.OracleArgv, want)
	}
	tests := []struct {
		param string
		value any
		want  string // canonical text, or "" for refused
		why   string // what the refusal says
	}{
		{"count", int64(1), "1", ""},
		{"count", 50, "50", ""},
		{"count", 25.0, "25", ""},
		{"count", json.Number("25"), "25", ""},
		{"count", json.Number("2.5e1"), "25", ""},
		{"count", "25", "25", ""},
		{"count", "25.0", "25", ""},
		{"count", int64(0), "", "is outside the range [1, 50]"},
		{"count", 51, "", "is outside the range [1, 50]"},
		{"count", "51", "", "is outside the range [1, 50]"},
		{"count", -1.0, "", "is outside the range [1, 50]"},
		{"count", 2.5, "", "is not an integer (range [1, 50])"},
		{"count", "2.5", "", "is not an integer (range [1, 50])"},
		{"count", json.Number("2.5"), "", "is not an integer"},
		{"count", 1e300, "", "is not an integer"},
		{"count", "abc", "", "is not a number (range [1, 50])"},
		{"count", "", "", "is not a number"},
		{"count", " 5", "", "is not a number"},
		{"count", "0x10", "", "is not a number"},
		{"count", "+5", "", "is not a number"},
		{"count", "1_0", "", "is not a number"},
		{"count", "NaN", "", "is not a number"},
		{"count", "1e999", "", "is not a finite number"},
		{"count", true, "", "is not a number"},
		{"count", nil, "", "is not a number"},
		{"count", []any{5}, "", "is not a number"},
		{"ratio", 0.1, "0.1", ""},
		{"ratio", 0.9, "0.9", ""},
		{"ratio", "0.25", "0.25", ""},
		{"ratio", json.Number("5e-1"), "0.5", ""},
		{"ratio", "0.50", "0.5", ""},
		{"ratio", 0.123456789012345678, "0.12345678901234568", ""},
		{"ratio", 0.09, "", "is outside the range [0.1, 0.9]"},
		{"ratio", 1, "", "is outside the range [0.1, 0.9]"},
		{"ratio", "1", "", "is outside the range [0.1, 0.9]"},
		{"ratio", "x", "", "is not a number (range [0.1, 0.9])"},
		{"ratio", int64(1) << 54, "", "cannot be represented exactly as a float"},
	}
	for _, tt := range tests {
		inst, err := w.Render("/p", map[string]any{tt.param: tt.value})
		if tt.want != "" {
			if err != nil || inst.Parameters[tt.param] != tt.want {
				t.Errorf("%s=%#v: %v, chose %v, want %q", tt.param, tt.value, err, inst, tt.want)
			}
			continue
		}
		fe := fault.As(err)
		if fe == nil || fe.Code != fault.InvalidArguments || fe.ExitCode() != fault.ExitUsage {
			t.Errorf("%s=%#v: got %v, want INVALID_ARGUMENTS", tt.param, tt.value, err)
			continue
		}
		p := w.Parameter(tt.param)
		if !strings.Contains(fe.Message, tt.why) || !strings.Contains(fe.Message, `parameter "`+tt.param+`"`) ||
			!strings.Contains(fe.Message, describe(tt.value)) || fe.Details["parameter"] != tt.param ||
			fe.Details["min"] != p.Min || fe.Details["max"] != p.Max || len(fe.Remediation) != 1 ||
			!strings.Contains(fe.Remediation[0], "["+p.Min+", "+p.Max+"]") {
			t.Errorf("%s=%#v: refusal %q (details %v, fix %q) does not say %q", tt.param, tt.value, fe.Message, fe.Details, fe.Remediation, tt.why)
		}
	}
	// What renders is the canonical text, never the caller's spelling.
	inst, err := w.Render("/p", map[string]any{"count": "2.5e1", "ratio": "0.250"})
	if err != nil || !slices.Equal(inst.Argv, []string{"prog", "--count=25", "0.25", "a"}) {
		t.Fatalf("rendered %v %v", inst, err)
	}
	same, _ := w.Render("/q", map[string]any{"count": 25, "ratio": 0.25})
	if same.InstanceID != inst.InstanceID {
		t.Fatal("two spellings of one value give different instances")
	}
}

func TestRangeDefinitionIDAndApproval(t *testing.T) {
	ws := newWorkspace(t)
	orig := mustParse(t, ranged).Workloads["r"]
	if _, err := Approve(context.Background(), ws, orig, time.Now()); err != nil {
		t.Fatal(err)
	}
	a, err := LoadApprovals(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(orig); err != nil {
		t.Fatalf("approved range workload refused: %v", err)
	}
	tests := []struct{ name, old, new, want string }{
		{"max widened", "count = {min = 1, max = 50}", "count = {min = 1, max = 100}", "parameters.count range [1, 50] → [1, 100]"},
		{"min raised", "count = {min = 1, max = 50}", "count = {min = 2, max = 50}", "parameters.count range [1, 50] → [2, 50]"},
		{"default", "count = {min = 1, max = 50}", "count = {min = 1, max = 50, default = 10}", "parameters.count default 1 → 10"},
		{"float bound", "default = 0.5}", "default = 0.5000001}", "parameters.ratio default 0.5 → 0.5000001"},
		{"integer to float", "count = {min = 1, max = 50}", "count = {min = 1.0, max = 50}", "parameters.count type integer → float"},
		{"range to choices", "count = {min = 1, max = 50}", "count = [1, 50]", "parameters.count range [1, 50] → choices"},
		{"choices to range", `mode = ["a", "b"]`, "mode = {min = 0, max = 1}", "parameters.mode type string → integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(ranged, tt.old) {
				t.Fatalf("fixture lacks %q", tt.old)
			}
			edited := mustParse(t, strings.Replace(ranged, tt.old, tt.new, 1)).Workloads["r"]
			if edited.DefinitionID() == orig.DefinitionID() {
				t.Fatal("definition id did not change")
			}
			fe := fault.As(a.Check(edited))
			if fe == nil || fe.Code != fault.ExecutionRefused || !strings.Contains(fe.Details["changes"], tt.want) {
				t.Fatalf("refusal %v does not say %q", fe, tt.want)
			}
		})
	}
	// Reformatting keeps the approval.
	reformatted := strings.Replace(ranged, "count = {min = 1, max = 50}", "count = { max = 50, min = 1, default = 1 }", 1)
	if err := a.Check(mustParse(t, reformatted).Workloads["r"]); err != nil {
		t.Fatalf("reformatting revoked the approval: %v", err)
	}
	// An integer choice list becoming a range of the same type says so.
	cur := orig.Canonical()
	old := cur
	old.Parameters = slices.Clone(cur.Parameters)
	old.Parameters[0] = Parameter{Name: "count", Type: TypeInteger, Choices: []string{"1", "50"}, Default: "1"}
	if got := strings.Join(Diff(old, cur), "; "); got != "parameters.count choices → range [1, 50]" {
		t.Fatalf("diff %q", got)
	}
}

func TestRangeExperiments(t *testing.T) {
	e := mustParse(t, ranged+"[experiments.e]\nworkload = 'r'\nvariants = ['a', 'b']\nscaling_parameter = 'count'\nscaling_values = [1, 10.0, '50']\n").Experiments["e"]
	if got := strings.Join(e.Factors[1].Values, ","); got != "1,10,50" || e.TreatmentParameter != "mode" {
		t.Fatalf("experiment %+v", e)
	}
	f := mustParse(t, ranged+"[experiments.e]\nworkload = 'r'\nfactors = { ratio = [0.1, 0.9] }\n").Experiments["e"]
	if got := strings.Join(f.Factors[0].Values, ","); got != "0.1,0.9" {
		t.Fatalf("factors %+v", f)
	}
	checkInvalid(t, ranged+"[experiments.e]\nworkload = 'r'\nvariants = ['a']\nscaling_parameter = 'count'\nscaling_values = [1, 51]\n",
		`experiments.e.scaling_values[1] 51 is outside the range [1, 50] for parameter "count"`)
	checkInvalid(t, ranged+"[experiments.e]\nworkload = 'r'\nvariants = ['a']\nscaling_parameter = 'count'\nscaling_values = [1, 1.0]\n",
		"experiments.e.scaling_values[1] repeats")
	checkInvalid(t, ranged+"[experiments.e]\nworkload = 'r'\nfactors = { count = [2.5] }\n", "is not an integer")
}

// FuzzRangeValue: resolving text against a range never panics; an accepted
// value is canonical (it resolves to itself), lies inside the bounds, and
// renders as a number of the range's type.
func FuzzRangeValue(f *testing.F) {
	for _, s := range []string{"25", "2.5", "2.5e1", "-0", "-0.0", "1e999", "9007199254740993", "0x10", "", " 1", "1e-400", "-9223372036854775809"} {
		f.Add(int64(1), int64(50), false, s)
		f.Add(int64(-5), int64(5), true, s)
	}
	f.Fuzz(func(t *testing.T, lo, hi int64, float bool, value string) {
		if lo > hi {
			lo, hi = hi, lo
		}
		decl := fmt.Sprintf("{min = %d, max = %d}", lo, hi)
		if float {
			decl = fmt.Sprintf("{min = %d.5, max = %d.5}", lo%1000000, hi%1000000)
			if lo%1000000 > hi%1000000 {
				return
			}
		}
		file, err := Parse(head+"[workloads.w]\nargv = ['x', '{q}']\n[workloads.w.parameters]\nq = "+decl+"\n", FileName)
		if err != nil {
			t.Fatalf("%s: %v", decl, err)
		}
		p := file.Workloads["w"].Parameter("q")
		text, why := p.resolve(value)
		if why != "" {
			if text != "" {
				t.Fatalf("%q refused (%s) but gave %q", value, why, text)
			}
			return
		}
		if again, why := p.resolve(text); again != text || why != "" {
			t.Fatalf("%q resolved to %q, which resolves to %q (%s)", value, text, again, why)
		}
		if n, isNum := p.resolve(json.Number(text)); n != text || isNum != "" {
			t.Fatalf("%q is not a JSON number", text)
		}
		v, _ := strconv.ParseFloat(text, 64)
		lf, _ := strconv.ParseFloat(p.Min, 64)
		hf, _ := strconv.ParseFloat(p.Max, 64)
		if v < lf || v > hf || (p.Type == TypeInteger && strings.ContainsAny(text, ".eE")) {
			t.Fatalf("%q resolved to %q outside %s or not a %s", value, text, p.Domain(), p.Type)
		}
	})
}
