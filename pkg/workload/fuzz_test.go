package workload

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

// FuzzParse: the decoder never panics; errors are WORKSPACE_INVALID (exit
// 2); an accepted file parses the same way again, each definition id is the
// digest of its canonical form, and the canonical form written back as TOML
// is accepted with the same id.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"full.toml", "full_reformatted.toml"} {
		f.Add(readFile(f, name))
	}
	for _, s := range []string{
		hostileTOML, base, base + exp + "variants = ['a']\n", base + exp + "factors = { n = [1, 2], p = ['b'] }\ntreatment_parameter = 'n'\n",
		wl("argv = ['x', '{p}{{}}']\ncwd = '{p}'\nenv = { A = '{n}' }"), wl("argv = ['x']\nParam = 1"),
		wl("argv = ['x', '{p.a}']"), wl("argv = ['x']\noracle = { argv = ['{n}'] }"), head + "[workloads.w]\nargv = ['x']\nparameters = { f = [1, 2.5, -0.0] }\n",
		head + "[workloads.w]\nargv = ['x', '{n}', '{f}']\nparameters = { n = {min = -5, max = 50, default = 7}, f = {min = -0.0, max = 2.5} }\noptions = { native = 'true' }\n",
		head + "[workloads.w]\nargv = ['x']\n[workloads.w.parameters.n]\nmin = 1\nmax = 0.5\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse(src, FileName)
		if err != nil {
			if fe := fault.As(err); fe.Code != fault.WorkspaceInvalid || fe.ExitCode() != fault.ExitUsage {
				t.Fatalf("error is not WORKSPACE_INVALID exit 2: %v", err)
			}
			return
		}
		again, err := Parse(src, FileName)
		if err != nil || !bytes.Equal(golden(t, file), golden(t, again)) {
			t.Fatalf("parse is not deterministic: %v", err)
		}
		for name, w := range file.Workloads {
			if id, err := digest.Of(w.Canonical()); err != nil || id != w.DefinitionID() {
				t.Fatalf("%s: id %s is not the digest of the canonical form (%v)", name, w.DefinitionID(), err)
			}
			re := encodeWorkload(t, w)
			back, err := Parse(re, FileName)
			if err != nil || back.Workloads[name].DefinitionID() != w.DefinitionID() {
				t.Fatalf("%s: canonical form does not round-trip (%v):\n%s", name, err, re)
			}
			if _, err := w.Render("/p", nil); err != nil && !fault.Is(err, fault.WorkspaceInvalid) {
				t.Fatalf("%s: rendering defaults: %v", name, err)
			}
		}
	})
}

// encodeWorkload writes w's canonical form back as flameox.toml.
func encodeWorkload(t testing.TB, w *Workload) string {
	t.Helper()
	d := w.Canonical()
	params := map[string]any{}
	for _, p := range d.Parameters {
		if !p.IsRange() {
			params[p.Name] = p.values
			continue
		}
		// The default of a range is its canonical text; read it back as
		// the range's type.
		def, why := p.resolve(p.Default)
		if why != "" || def != p.Default {
			t.Fatalf("%s: default %q of range %s does not resolve to itself: %s", w.Name, p.Default, p.Domain(), why)
		}
		var dv any
		if p.Type == TypeInteger {
			dv, _ = strconv.ParseInt(p.Default, 10, 64)
		} else {
			dv, _ = strconv.ParseFloat(p.Default, 64)
		}
		params[p.Name] = map[string]any{"min": p.lo, "max": p.hi, "default": dv}
	}
	raw := map[string]any{"argv": d.Argv, "cwd": d.Cwd, "timeout_seconds": d.TimeoutSeconds, "env": d.Env, "allow_env": d.AllowEnv, "parameters": params}
	if len(d.Options) > 0 {
		raw["options"] = d.Options
	}
	if d.Oracle != nil {
		raw["oracle"] = map[string]any{"strength": d.Oracle.Strength, "argv": d.Oracle.Argv}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(map[string]any{"schema_version": 1, "workloads": map[string]any{w.Name: raw}}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// tokenRE and reference are an independent, regexp-based statement of the
// template rules that the scanner in template.go must agree with.
var tokenRE = regexp.MustCompile(`\{\{|\}\}|\{[A-Za-z_][A-Za-z0-9_]*\}|[{}]`)

func reference(tmpl string, values map[string]string) (out string, escapes int, ok bool) {
	ok = true
	out = tokenRE.ReplaceAllStringFunc(tmpl, func(tok string) string {
		switch {
		case tok == "{{":
			escapes++
			return "{"
		case tok == "}}":
			escapes++
			return "}"
		case len(tok) > 2:
			v, found := values[tok[1:len(tok)-1]]
			ok = ok && found
			return v
		}
		ok = false
		return ""
	})
	return out, escapes, ok
}

// FuzzRender: the template scanner never panics and agrees with the
// reference; braces in its output come only from `{{`/`}}`; through Parse
// and Render, a value is refused unless it is the declared one, and an
// accepted argv element is literal text plus declared values, nothing else.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"{p}", "{{p}}", "{{{p}}}", "--x={p}{q}", "{p", "p}", "{}", "{p.a}", "{p[0]}", "{p!r}", "{p:>3}", "{zz}", "{{p}", "}}}", "{a{p}}", "{P}", "{_}"} {
		f.Add(s, "; rm -rf / $(id) | & > ' \"", "; rm -rf / $(id) | & > ' \"")
		f.Add(s, "{q}", "{q}")
	}
	f.Add("{p}", "a\x00b", "a\x00b")
	f.Add("{p}", "x", "y")
	f.Fuzz(func(t *testing.T, tmpl, value, input string) {
		markers := map[string]string{"p": "\x01P\x01", "q": "\x01Q\x01"}
		compiled, terr := compile(tmpl, func(n string) bool { return n == "p" || n == "q" })
		want, escapes, ok := reference(tmpl, markers)
		if (terr == nil) != ok {
			t.Fatalf("scanner error %v, reference ok=%v for %q", terr, ok, tmpl)
		}
		if terr == nil {
			out := compiled.render(markers)
			if out != want || strings.Count(out, "{")+strings.Count(out, "}") != escapes {
				t.Fatalf("%q rendered %q, reference %q (%d escapes)", tmpl, out, want, escapes)
			}
		}
		one := 1
		raw := &rawFile{SchemaVersion: &one, Workloads: map[string]*rawWorkload{"w": {
			Argv: []string{"prog", tmpl}, Parameters: map[string]*rawParameter{"p": {value: []any{value}}, "q": {value: []any{"Q"}}},
		}}}
		file, err := build(raw, FileName)
		if err != nil {
			if !fault.Is(err, fault.WorkspaceInvalid) {
				t.Fatalf("build: %v", err)
			}
			return
		}
		inst, err := file.Workloads["w"].Render("/p", map[string]any{"p": input})
		if input != value {
			if !fault.Is(err, fault.InvalidArguments) {
				t.Fatalf("undeclared value %q accepted (declared %q): %v", input, value, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if exp, _, _ := reference(tmpl, map[string]string{"p": value, "q": "Q"}); inst.Argv[1] != exp || inst.Argv[0] != "prog" {
			t.Fatalf("%q with p=%q rendered %q, want %q", tmpl, value, inst.Argv, exp)
		}
	})
}
