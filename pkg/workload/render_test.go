package workload

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// hostile are parameter values that a shell would interpret.
var hostile = []string{
	`; rm -rf / $(id) | & > ' "`,
	"`id` $HOME ~/x *.go {p} {{",
	"a\nb\tc",
	"",
}

const hostileTOML = head + `[workloads.h]
argv = ["prog", "{v}", "--opt={v}", "{{v}}", "{{{v}}}"]
env = { V = "{v}" }
cwd = "{d}"
[workloads.h.parameters]
v = ['''; rm -rf / $(id) | & > ' "''', '''` + "`id` $HOME ~/x *.go {p} {{" + `''', "a\nb\tc", ""]
d = [".", "sub/dir", "..", "a/../.."]
n = [32768, 1048576, -3]
f = [0.5, 1e21, 2]
b = [true, false]
`

func TestRenderIsLiteral(t *testing.T) {
	w := mustParse(t, hostileTOML).Workloads["h"]
	root := t.TempDir()
	for _, v := range hostile {
		inst, err := w.Render(root, map[string]any{"v": v})
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		want := []string{"prog", v, "--opt=" + v, "{v}", "{" + v + "}"}
		if !slices.Equal(inst.Argv, want) || inst.Env["V"] != v {
			t.Fatalf("%q rendered %q env %q, want %q", v, inst.Argv, inst.Env["V"], want)
		}
		if inst.Cwd != root || inst.RelCwd != "." {
			t.Fatalf("cwd %q %q", inst.Cwd, inst.RelCwd)
		}
	}
}

func TestRenderDefaultsAndIdentity(t *testing.T) {
	w := mustParse(t, readFile(t, "full.toml")).Workloads["scan"]
	a, err := w.Render("/p/one", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"python3", "scan.py", "baseline", "32768"}
	if !slices.Equal(a.Argv, want) || a.Env["SCAN_MODE"] != "baseline" || a.Timeout != 30*time.Second ||
		a.OracleStrength != StrengthCrossTreatment || !slices.Equal(a.OracleArgv, []string{"python3", "validate.py", "baseline", "32768"}) ||
		a.Parameters["length"] != "32768" || a.Cwd != "/p/one" || a.DefinitionID != w.DefinitionID() {
		t.Fatalf("defaults: %+v", a)
	}
	b, _ := w.Render("/elsewhere", map[string]any{"mode": "baseline", "length": 32768.0})
	if b.InstanceID != a.InstanceID {
		t.Fatal("instance id depends on the checkout location or on naming a default")
	}
	c, _ := w.Render("/p/one", map[string]any{"mode": "candidate"})
	if c.InstanceID == a.InstanceID {
		t.Fatal("instance id ignores parameters")
	}
	// Output types marshal as {} and [], never null.
	s := mustParse(t, readFile(t, "full.toml")).Workloads["startup"]
	d, err := s.Render("/p", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(d)
	if strings.Contains(string(out), "null") || d.Cwd != "/p/bench/json" || d.Argv[5] != "{literal}" {
		t.Fatalf("instance: %s", out)
	}
}

func TestRenderValueMatching(t *testing.T) {
	w := mustParse(t, hostileTOML).Workloads["h"]
	tests := []struct {
		param string
		value any
		want  string // canonical choice, or "" for refused
	}{
		{"n", 65536.0, ""},
		{"n", 32768.0, "32768"},
		{"n", 1048576.0, "1048576"},
		{"n", json.Number("1048576"), "1048576"},
		{"n", json.Number("32768.0"), "32768"},
		{"n", int64(-3), "-3"},
		{"n", 3, ""},
		{"n", "32768", "32768"},
		{"n", 32768.5, ""},
		{"n", true, ""},
		{"f", 0.5, "0.5"},
		{"f", json.Number("5e-1"), "0.5"},
		{"f", 1e21, "1e+21"},
		{"f", 2, "2"},
		{"f", "0.50", ""},
		{"b", false, "false"},
		{"b", "true", "true"},
		{"b", 1.0, ""},
		{"v", "a\nb\tc", "a\nb\tc"},
		{"v", "rm -rf /", ""},
		{"v", []any{"x"}, ""},
		{"v", nil, ""},
		{"v", map[string]any{}, ""},
	}
	for _, tt := range tests {
		inst, err := w.Render("/p", map[string]any{tt.param: tt.value})
		switch {
		case tt.want == "" && !fault.Is(err, fault.InvalidArguments):
			t.Errorf("%s=%#v: got %v, want INVALID_ARGUMENTS", tt.param, tt.value, err)
		case tt.want == "":
			if fe := fault.As(err); fe.Details["parameter"] != tt.param || !strings.Contains(fe.Message, "not a declared choice") {
				t.Errorf("%s=%#v: error does not name the parameter: %v", tt.param, tt.value, fe)
			}
		case err != nil:
			t.Errorf("%s=%#v: %v", tt.param, tt.value, err)
		case inst.Parameters[tt.param] != tt.want:
			t.Errorf("%s=%#v: chose %q, want %q", tt.param, tt.value, inst.Parameters[tt.param], tt.want)
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	w := mustParse(t, hostileTOML).Workloads["h"]
	_, err := w.Render("/p", map[string]any{"zz": "x"})
	if fe := fault.As(err); fe.Code != fault.InvalidArguments || fe.Details["parameter"] != "zz" || fe.ExitCode() != fault.ExitUsage {
		t.Fatalf("unknown parameter: %v", err)
	}
	_, err = w.Render("/p", map[string]any{"v": "a\x00"})
	if fe := fault.As(err); fe.Code != fault.InvalidArguments || !strings.Contains(fe.Message, "NUL") {
		t.Fatalf("NUL value: %v", err)
	}
	for _, d := range []string{"..", "a/../.."} {
		_, err = w.Render("/p", map[string]any{"d": d})
		if fe := fault.As(err); fe.Code != fault.WorkspaceInvalid || fe.Details["keys"] != "workloads.h.cwd" {
			t.Fatalf("cwd %q escaping the project: %v", d, err)
		}
	}
	inst, err := w.Render("/p", map[string]any{"d": "sub/dir"})
	if err != nil || inst.Cwd != filepath.FromSlash("/p/sub/dir") || inst.RelCwd != "sub/dir" {
		t.Fatalf("cwd: %v %+v", err, inst)
	}
}
