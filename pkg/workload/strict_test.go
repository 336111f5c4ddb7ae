package workload

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

const (
	head = "schema_version = 1\n"
	// base declares workload w with parameters p (strings) and n (integers).
	base = head + "[workloads.w]\nargv = [\"prog\", \"{p}\"]\n[workloads.w.parameters]\np = [\"a\", \"b\"]\nn = [1, 2]\n"
	exp  = "[experiments.e]\nworkload = \"w\"\n"
)

// wl returns a one-workload file whose [workloads.w] table holds body.
func wl(body string) string {
	return head + "[workloads.w]\n" + body + "\n[workloads.w.parameters]\np = [\"a\", \"b\"]\nn = [1, 2]\n"
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"unknown top-level key", "workload = 1\n" + base, "unknown key(s) workload"},
		{"unknown workload key", wl("argv = ['x']\nargs = ['y']"), "workloads.w.args"},
		{"case-variant key", wl("Argv = ['x']"), "workloads.w.Argv"},
		{"case-variant table", "schema_version = 1\n[Workloads.w]\nargv = ['x']\n", "Workloads"},
		{"unknown oracle key", base + "[workloads.w.oracle]\nargv = ['x']\ntimeout = 3\n", "workloads.w.oracle.timeout"},
		{"unknown experiment key", base + exp + "variants = ['a']\nblock = 3\n", "experiments.e.block"},
		{"case-variant experiment key", base + exp + "variants = ['a']\nBlocks = 3\n", "experiments.e.Blocks"},
		{"missing schema_version", "[workloads.w]\nargv = ['x']\n", "schema_version is required"},
		{"future schema_version", "schema_version = 2\n", "schema_version 2 is not supported"},
		{"raw NUL byte", head + "# \x00\n", "NUL"},
		{"syntax", head + "[workloads.w\n", "line 3"},
		// Parameter values.
		{"parameter not an array", wl("argv = ['x']") + "q = 'a'\n", "workloads.w.parameters.q must be an array"},
		{"parameter table", wl("argv = ['x']") + "q = { a = 1 }\n", "workloads.w.parameters.q"},
		{"parameter nested array", wl("argv = ['x']") + "q = [[1]]\n", "workloads.w.parameters.q[0] must be a string, integer, float or boolean"},
		{"parameter inline table", wl("argv = ['x']") + "q = [{ a = 1 }]\n", "workloads.w.parameters.q"},
		{"parameter datetime", wl("argv = ['x']") + "q = [1979-05-27]\n", "a datetime"},
		{"parameter empty", wl("argv = ['x']") + "q = []\n", "workloads.w.parameters.q must declare 1..256"},
		{"parameter mixed types", wl("argv = ['x']") + "q = [1, 'a']\n", "workloads.w.parameters.q[1]"},
		{"parameter duplicate", wl("argv = ['x']") + "q = ['a', 'a']\n", "workloads.w.parameters.q[1] repeats"},
		{"parameter duplicate after promotion", wl("argv = ['x']") + "q = [1, 1.0]\n", "q[1] repeats"},
		{"parameter nan", wl("argv = ['x']") + "q = [nan]\n", "finite"},
		{"parameter NUL", wl("argv = ['x']") + "q = [\"a\\u0000\"]\n", "workloads.w.parameters.q[0] contains a NUL"},
		{"parameter name", wl("argv = ['x']") + "Mode = ['a']\n", "workloads.w.parameters.Mode is not a valid name"},
		{"workload name", head + "[workloads.Scan]\nargv = ['x']\n", "workloads.Scan is not a valid name"},
		// Types and ranges.
		{"argv string", wl("argv = 'prog {p}'"), "workloads.w.argv"},
		{"argv missing", wl("cwd = '.'"), "workloads.w.argv must be an array of 1..1024"},
		{"argv empty", wl("argv = []"), "workloads.w.argv must be an array of 1..1024"},
		{"argv[0] empty", wl("argv = ['', 'x']"), "workloads.w.argv[0] must name the program"},
		{"argv NUL", wl("argv = ['prog', \"a\\u0000b\"]"), "workloads.w.argv[1] contains a NUL"},
		{"timeout string", wl("argv = ['x']\ntimeout_seconds = '30'"), "workloads.w.timeout_seconds"},
		{"timeout zero", wl("argv = ['x']\ntimeout_seconds = 0"), "workloads.w.timeout_seconds must be in (0, 86400]"},
		{"timeout negative", wl("argv = ['x']\ntimeout_seconds = -1"), "workloads.w.timeout_seconds must be"},
		{"timeout too long", wl("argv = ['x']\ntimeout_seconds = 86401"), "workloads.w.timeout_seconds must be"},
		{"timeout nan", wl("argv = ['x']\ntimeout_seconds = nan"), "workloads.w.timeout_seconds must be"},
		{"cwd dotdot", wl("argv = ['x']\ncwd = '..'"), "workloads.w.cwd must be a project-relative"},
		{"cwd inner dotdot", wl("argv = ['x']\ncwd = 'a/../../b'"), "workloads.w.cwd"},
		{"cwd absolute", wl("argv = ['x']\ncwd = '/etc'"), "workloads.w.cwd"},
		{"cwd empty", wl("argv = ['x']\ncwd = ''"), "workloads.w.cwd"},
		{"env value type", wl("argv = ['x']\nenv = { A = 1 }"), "workloads.w.env.A"},
		{"env name", wl("argv = ['x']\nenv = { 1A = 'x' }"), "workloads.w.env.1A is not a valid environment variable name"},
		{"env name dash", wl("argv = ['x']\nenv = { 'A-B' = 'x' }"), "workloads.w.env.A-B"},
		{"allow_env name", wl("argv = ['x']\nallow_env = ['A B']"), "workloads.w.allow_env[0]"},
		{"allow_env duplicate", wl("argv = ['x']\nallow_env = ['A', 'A']"), "workloads.w.allow_env[1] repeats"},
		{"oracle strength", base + "[workloads.w.oracle]\nstrength = 'strong'\nargv = ['x']\n", "workloads.w.oracle.strength must be"},
		{"oracle argv missing", base + "[workloads.w.oracle]\nstrength = 'contract_check'\n", "workloads.w.oracle.argv must be"},
		// Experiments.
		{"experiment without workload", base + "[experiments.e]\nvariants = ['a']\n", "experiments.e.workload is required"},
		{"experiment missing workload", base + "[experiments.e]\nworkload = 'nope'\nvariants = ['a']\n", "experiments.e.workload names \"nope\""},
		{"experiment undeclared treatment", base + exp + "variants = ['a']\ntreatment_parameter = 'zz'\n", "experiments.e.treatment_parameter names \"zz\""},
		{"experiment undeclared variant", base + exp + "variants = ['a', 'c']\ntreatment_parameter = 'p'\n", "experiments.e.variants[1] \"c\" is not a declared choice"},
		{"experiment inferred none", base + exp + "variants = ['a', 1]\n", "experiments.e.variants are not all choices"},
		{"experiment duplicate variant", base + exp + "variants = ['a', 'a']\n", "experiments.e.variants[1] repeats"},
		{"experiment missing scaling parameter", base + exp + "variants = ['a']\nscaling_parameter = 'zz'\nscaling_values = [1]\n", "experiments.e.scaling_parameter names \"zz\""},
		{"experiment undeclared scaling value", base + exp + "variants = ['a']\nscaling_parameter = 'n'\nscaling_values = [1, 3]\n", "experiments.e.scaling_values[1] 3 is not a declared choice"},
		{"experiment scaling alone", base + exp + "variants = ['a']\nscaling_parameter = 'n'\n", "experiments.e.scaling_parameter and scaling_values"},
		{"experiment neither", base + exp, "experiments.e needs variants"},
		{"experiment factors and variants", base + exp + "variants = ['a']\nfactors = { p = ['a'] }\n", "experiments.e.factors cannot be combined"},
		{"experiment undeclared factor", base + exp + "factors = { zz = ['a'] }\n", "experiments.e.factors.zz names \"zz\""},
		{"experiment undeclared factor value", base + exp + "factors = { n = [1, 7] }\n", "experiments.e.factors.n[1] 7 is not a declared choice"},
		{"experiment factor not array", base + exp + "factors = { n = 1 }\n", "experiments.e.factors.n must be an array"},
		{"experiment two factors no treatment", base + exp + "factors = { n = [1], p = ['a'] }\n", "experiments.e.treatment_parameter is required"},
		{"experiment treatment not a factor", base + exp + "factors = { n = [1] }\ntreatment_parameter = 'p'\n", "experiments.e.treatment_parameter names \"p\", which is not one of the factors"},
		{"experiment design", base + exp + "variants = ['a']\ndesign = 'random'\n", "experiments.e.design must be"},
		{"experiment polarity", base + exp + "variants = ['a']\npolarity = 'up'\n", "experiments.e.polarity must be"},
		{"experiment estimand", base + exp + "variants = ['a']\nestimand = 'mean'\n", "experiments.e.estimand must be"},
		{"experiment blocks", base + exp + "variants = ['a']\nblocks = 0\n", "experiments.e.blocks must be in 1..1000"},
		{"experiment blocks float", base + exp + "variants = ['a']\nblocks = 1.5\n", "experiments.e.blocks"},
		{"experiment confidence", base + exp + "variants = ['a']\nconfidence_level = 1\n", "experiments.e.confidence_level must be in (0, 1)"},
		{"experiment threshold", base + exp + "variants = ['a']\npractical_threshold = -0.1\n", "experiments.e.practical_threshold must be"},
		{"experiment seed", base + exp + "variants = ['a']\nrandom_seed = -1\n", "experiments.e.random_seed"},
		{"experiment budget", base + exp + "variants = ['a', 'b']\nblocks = 3\nmax_trials = 5\n", "experiments.e.max_trials is 5 but 2 combinations × 3 blocks = 6 trials"},
		{"experiment metric", base + exp + "variants = ['a']\nprimary_metric = ''\n", "experiments.e.primary_metric"},
		{"experiment name", base + "[experiments.E]\nworkload = 'w'\nvariants = ['a']\n", "experiments.E is not a valid name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkInvalid(t, tt.src, tt.want)
		})
	}
}

func TestExperimentTreatmentAmbiguous(t *testing.T) {
	src := wl("argv = ['x']") + "q = ['a', 'z']\n" + exp + "variants = ['a']\n"
	checkInvalid(t, src, "experiments.e.variants match parameters p, q alike")
	f := mustParse(t, strings.Replace(src, "variants = ['a']", "variants = ['a']\ntreatment_parameter = 'q'", 1))
	if e := f.Experiments["e"]; e.TreatmentParameter != "q" || e.Blocks != 1 || e.Design != DesignRCB || e.MaxTrials != DefaultMaxTrials {
		t.Fatalf("defaults: %+v", e)
	}
}

func TestTemplateRejects(t *testing.T) {
	tests := []struct{ field, value, key, token string }{
		{"argv", "{missing}", "workloads.w.argv[1]", "{missing}"},
		{"argv", "{}", "workloads.w.argv[1]", "{}"},
		{"argv", "{p.b}", "workloads.w.argv[1]", "{p.b}"},
		{"argv", "{p[0]}", "workloads.w.argv[1]", "{p[0]}"},
		{"argv", "{p!r}", "workloads.w.argv[1]", "{p!r}"},
		{"argv", "{p:>3}", "workloads.w.argv[1]", "{p:>3}"},
		{"argv", "{ p }", "workloads.w.argv[1]", "{ p }"},
		{"argv", "{0}", "workloads.w.argv[1]", "{0}"},
		{"argv", "x{p", "workloads.w.argv[1]", "{p"},
		{"argv", "p}", "workloads.w.argv[1]", "}"},
		{"argv", "{{p}", "workloads.w.argv[1]", "}"},
		{"argv", "{P}", "workloads.w.argv[1]", "{P}"},
		{"env", "{zz}", "workloads.w.env.V", "{zz}"},
		{"cwd", "{zz}", "workloads.w.cwd", "{zz}"},
		{"oracle", "{zz}", "workloads.w.oracle.argv[1]", "{zz}"},
	}
	for _, tt := range tests {
		t.Run(tt.field+" "+tt.value, func(t *testing.T) {
			q := "'" + tt.value + "'"
			body := map[string]string{
				"argv":   "argv = ['prog', " + q + "]",
				"env":    "argv = ['prog']\nenv = { V = " + q + " }",
				"cwd":    "argv = ['prog']\ncwd = " + q,
				"oracle": "argv = ['prog']\noracle = { argv = ['check', " + q + "] }",
			}[tt.field]
			fe := checkInvalid(t, wl(body), tt.key)
			if fe.Details["token"] != tt.token || fe.Details["workload"] != "w" {
				t.Fatalf("details %v, want token %q and workload w", fe.Details, tt.token)
			}
		})
	}
}

func checkInvalid(t *testing.T, src, want string) *fault.Error {
	t.Helper()
	_, err := Parse(src, FileName)
	if err == nil {
		t.Fatalf("accepted:\n%s", src)
	}
	fe := fault.As(err)
	if fe.Code != fault.WorkspaceInvalid || fe.ExitCode() != fault.ExitUsage {
		t.Fatalf("got %v (exit %d), want WORKSPACE_INVALID exit 2", fe, fe.ExitCode())
	}
	if !strings.Contains(fe.Message, want) || !strings.Contains(fe.Message, FileName) || fe.Details["file"] != FileName {
		t.Fatalf("message %q (details %v) does not name %q and the file", fe.Message, fe.Details, want)
	}
	return fe
}
