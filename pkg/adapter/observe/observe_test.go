package observe

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

func parse(t *testing.T, text string) (*Contents, error) {
	t.Helper()
	return Parse(strings.NewReader(text), config.DefaultLimits())
}

const head = `{"flameox_observations": 1, "language": "python", "pid": 7}` + "\n"

func TestParse(t *testing.T) {
	c, err := parse(t, head+
		`{"t": "observe", "name": "policy", "values": {"clipping_enabled": false, "max_norm": 1.0}, "phase": "train", "ts_ns": 5}`+"\n"+
		`{"t": "observe", "name": "policy", "values": {"clipping_enabled": false}, "phase": "train", "ts_ns": 9}`+"\n"+
		`{"t": "observe", "name": "ready", "values": {"": true}, "phase": "", "ts_ns": 10}`+"\n"+
		"\n"+
		`{"t": "phase", "name": "train", "start_ns": 1, "duration_ns": 100}`+"\n"+
		`{"t": "phase", "name": "train", "start_ns": 200, "duration_ns": 50}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, phase, value string
		count              int64
	}{{"policy.clipping_enabled", "train", "false", 2}, {"policy.max_norm", "train", "1.0", 1}, {"ready", "", "true", 1}}
	if len(c.Observations) != len(want) {
		t.Fatalf("observations %+v", c.Observations)
	}
	for i, w := range want {
		o := c.Observations[i]
		if o.Name != w.name || o.Phase != w.phase || string(o.Value) != w.value || o.Count != w.count {
			t.Errorf("observation %d: %+v (value %s), want %+v", i, o, o.Value, w)
		}
	}
	if len(c.Phases) != 1 || c.Phases[0] != (Phase{Name: "train", Count: 2, TotalNs: 150, MaxNs: 100}) || c.Processes != 1 {
		t.Fatalf("phases %+v, processes %d", c.Phases, c.Processes)
	}
}

func TestParseRefuses(t *testing.T) {
	lim := config.DefaultLimits()
	lim.MaxSamples = 3
	for _, tc := range []struct {
		name, text, reason string
		lim                *config.Limits
	}{
		{"empty", "", "no header", nil},
		{"no header", `{"t": "observe", "name": "x"}` + "\n", "header", nil},
		{"not json", head + "{\"t\": \n", "not a JSON object", nil},
		{"future format", `{"flameox_observations": 2}` + "\n", "format 2", nil},
		{"unknown event", head + `{"t": "span", "name": "x"}` + "\n", "unknown event type", nil},
		{"no name", head + `{"t": "observe", "values": {"a": 1}}` + "\n", "without a name", nil},
		{"negative phase", head + `{"t": "phase", "name": "p", "duration_ns": -1}` + "\n", "negative duration", nil},
		{"long line", head + `{"t": "observe", "name": "` + strings.Repeat("x", 2<<20) + `"}` + "\n", "longer than 1 MiB", nil},
		{"too many lines", head + strings.Repeat(`{"t": "observe", "name": "x"}`+"\n", 5), "limits.max_samples", &lim},
		{"terminal escapes are data", head + `{"t": "observe", "name": "a\u001b[31m", "values": {"k": "\u001b]0;x"}}` + "\n", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := config.DefaultLimits()
			if tc.lim != nil {
				l = *tc.lim
			}
			_, err := Parse(strings.NewReader(tc.text), l)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(pe.Reason, tc.reason) {
				t.Fatalf("err %v, want a ParseError with %q", err, tc.reason)
			}
		})
	}
}

// TestPythonSDK runs contrib/python/flameox_observe.py for real: what it
// writes parses, the phase marks the observations inside it, and with
// the variable unset nothing is written.
func TestPythonSDK(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	dir := t.TempDir()
	out := filepath.Join(dir, File)
	script := `
from flameox_observe import observe, phase
with phase("train"):
    for _ in range(3):
        observe("policy", clipping_enabled=False, max_norm=1.0)
    with phase("step"):
        observe("optimizer", name="sgd")
observe("done")
observe("odd", value=object())
`
	run := func(env ...string) {
		cmd := exec.Command(py, "-c", script)
		cmd.Env = append(os.Environ(), append([]string{"PYTHONPATH=" + filepath.Join("..", "..", "..", "contrib", "python")}, env...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("python: %v\n%s", err, b)
		}
	}
	run(EnvVar + "=")
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a file was written with FLAMEOX_OBSERVATIONS unset")
	}
	run(EnvVar + "=" + out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f, config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Observation{}
	for _, o := range c.Observations {
		got[o.Name+"@"+o.Phase] = o
	}
	if o := got["policy.clipping_enabled@train"]; string(o.Value) != "false" || o.Count != 3 {
		t.Errorf("clipping_enabled: %+v", o)
	}
	if o := got["optimizer.name@train/step"]; string(o.Value) != `"sgd"` {
		t.Errorf("nested phase: %+v", got)
	}
	if o := got["done@"]; string(o.Value) != "true" {
		t.Errorf("bare observe: %+v", got)
	}
	if o := got["odd.value@"]; !strings.HasPrefix(string(o.Value), `"<object object`) {
		t.Errorf("a value JSON cannot encode: %s", o.Value)
	}
	if len(c.Phases) != 2 || c.Phases[0].Name != "train" || c.Phases[1].Name != "train/step" || c.Languages[0] != "python" {
		t.Errorf("phases %+v languages %v", c.Phases, c.Languages)
	}
}

// TestGoSDK runs contrib/go/observe's own tests, then a program that
// imports the module (by a replace directive, as a workload outside
// this repository would by go get), and parses what it wrote.
func TestGoSDK(t *testing.T) {
	gobin := testenv.LookPath(t, "go")
	mod, err := filepath.Abs(filepath.Join("..", "..", "..", "contrib", "go", "observe"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	test := exec.Command(gobin, "test", "-count=1", ".")
	test.Dir, test.Env = mod, env
	if b, err := test.CombinedOutput(); err != nil {
		t.Fatalf("go test in contrib/go/observe: %v\n%s", err, b)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/work\n\ngo 1.22\n\nrequire github.com/flameox/flameox/contrib/go/observe v0.0.0\n\nreplace github.com/flameox/flameox/contrib/go/observe => " + mod + "\n",
		"main.go": `package main

import "github.com/flameox/flameox/contrib/go/observe"

func main() {
	end := observe.Phase("train")
	observe.Record("policy", "clipping_enabled", false)
	end()
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, File)
	run := exec.Command(gobin, "run", ".")
	run.Dir, run.Env = dir, append(env, EnvVar+"="+out)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("go run: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f, config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Observations) != 1 || c.Observations[0].Name != "policy.clipping_enabled" || c.Observations[0].Phase != "train" ||
		string(c.Observations[0].Value) != "false" || len(c.Phases) != 1 || c.Languages[0] != "go" {
		t.Fatalf("contents %+v", c)
	}
}

func TestAccepts(t *testing.T) {
	e := NewExtractor()
	dir := t.TempDir()
	p := filepath.Join(dir, "renamed.bin")
	if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if !e.Accepts(extractInput(p)) {
		t.Error("an observations file renamed .bin is not accepted")
	}
	other := filepath.Join(dir, File)
	if err := os.WriteFile(other, []byte(`{"traceEvents": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if e.Accepts(extractInput(other)) {
		t.Error("a JSON file named like observations is accepted")
	}
}

func extractInput(path string) adapter.ExtractInput { return adapter.ExtractInput{Path: path} }
