package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/flameox/flameox/pkg/fault"
)

const exe = "/opt/flameox/bin/flameox"

func testOptions(t *testing.T) Options {
	t.Helper()
	home, project := t.TempDir(), t.TempDir()
	return Options{Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex"),
		StateDir: filepath.Join(home, ".local", "state", "flameox", "setup"), ProjectRoot: project, Executable: exe, GOOS: "linux"}
}

// hostCase is one host's existing configuration: other servers, comments
// where the format has them, the layout people write.
type hostCase struct {
	host  string
	scope Scope
	rel   string // file under HOME (user) or the project
	orig  string
	// bad is a malformed file and where its error is.
	bad       string
	line, col int
}

var hostCases = []hostCase{
	{host: "claude", scope: User, rel: ".claude.json", orig: `{
  "numStartups": 42,
  "mcpServers": {
    "other": {
      "type": "stdio",
      "command": "/usr/bin/other",
      "args": ["--x"]
    }
  },
  "projects": {"/p": {"allowedTools": []}}
}
`, bad: "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\",}\n  }\n}\n", line: 3, col: 29},
	{host: "claude", scope: Project, rel: ".mcp.json", orig: "{\n  \"mcpServers\": {\n  }\n}\n",
		bad: "{\n  \"mcpServers\": {\n    // no comments in .mcp.json\n  }\n}\n", line: 3, col: 5},
	{host: "cursor", scope: User, rel: ".cursor/mcp.json", orig: "{\n\t\"mcpServers\": {\n\t\t\"github\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"]}\n\t}\n}",
		bad: `{"mcpServers": {"a": }}`, line: 1, col: 22},
	{host: "codex", scope: User, rel: ".codex/config.toml", orig: `# Codex settings
model = "o4-mini"

[mcp_servers.other]
command = "other"  # inline comment
args = ["--flag",
  "--more"]

[mcp_servers.other.env]
NAME = "x"

# trailing comment
`, bad: "model = \"x\"\n[mcp_servers.other\ncommand = \"x\"\n", line: 2, col: 19},
	{host: "gemini", scope: User, rel: ".gemini/settings.json", orig: `{
  // theme chosen by hand
  "theme": "GitHub",
  "mcpServers": {
    /* a local server */
    "local": {
      "command": "python",
      "args": ["server.py"] // the script
    }
  }
}
`, bad: "{\n  \"mcpServers\": {\n    \"local\": {\"command\": \"python\" \"args\": []}\n  }\n}\n", line: 3, col: 35},
	{host: "opencode", scope: User, rel: ".config/opencode/opencode.jsonc", orig: `{
  "$schema": "https://opencode.ai/config.json",
  // servers
  "mcp": {
    "other": {
      "type": "local",
      "command": ["bun", "x", "other"],
      "enabled": true,
    },
  },
}
`, bad: "{\n  \"mcp\": {\n    \"other\": {\"type\": 'local'}\n  }\n}\n", line: 3, col: 23},
	{host: "antigravity", scope: User, rel: ".gemini/config/mcp_config.json", orig: `{"mcpServers": {"x": {"serverUrl": "https://example.com/mcp"}}}` + "\n",
		bad: "{\"mcpServers\": {\"x\": {\"serverUrl\": \"https://example.com/mcp\"}}\n", line: 2, col: 1},
	{host: "vscode", scope: Project, rel: ".vscode/mcp.json", orig: `{
  // Servers for this workspace
  "servers": {
    "playwright": {
      "command": "npx",
      "args": ["@playwright/mcp@latest"]
    }, // keep me
  },
  "inputs": []
}
`, bad: "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n  \"inputs\": []\n}\n", line: 5, col: 3},
	{host: "vscode", scope: User, rel: ".config/Code/User/mcp.json", orig: "{\r\n  \"servers\": {\r\n    \"a\": {\"type\": \"http\", \"url\": \"http://localhost:3000/mcp\"}\r\n  }\r\n}\r\n",
		bad: "{\r\n  \"servers\": {\r\n    \"a\": {\"url\": \"http://x\r\n  }\r\n}\r\n", line: 3, col: 27},
}

func (hc hostCase) path(o Options) string {
	if hc.scope == Project {
		return filepath.Join(o.ProjectRoot, hc.rel)
	}
	return filepath.Join(o.Home, hc.rel)
}

func (hc hostCase) name() string { return hc.host + "/" + string(hc.scope) }

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func quiet() IO { return IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}} }

func run(t *testing.T, o Options, req Request, sio IO) (*Result, error) {
	t.Helper()
	return Run(context.Background(), o, req, sio)
}

// decodeAny reads a host file into generic values (JSONC through our
// reader, TOML through BurntSushi).
func decodeAny(t *testing.T, h *Host, src string) map[string]any {
	t.Helper()
	if h.Format == TOML {
		var v map[string]any
		if _, err := toml.Decode(src, &v); err != nil {
			t.Fatalf("result is not TOML: %v\n%s", err, src)
		}
		return v
	}
	n, err := parseJSON([]byte(src), h.Format == JSONC)
	if err != nil {
		t.Fatalf("result does not parse as %s: %v\n%s", h.Format, err, src)
	}
	if h.Format == JSON && !json.Valid([]byte(src)) {
		t.Fatalf("result is not plain JSON:\n%s", src)
	}
	return n.decode([]byte(src)).(map[string]any)
}

// keptLines checks that every line of orig is in updated, in order, the
// same or with one comma added (the one the previous last member needs).
func keptLines(t *testing.T, orig, updated string) {
	t.Helper()
	if strings.Count(strings.TrimSpace(orig), "\n") == 0 { // one line: one insertion
		p := 0
		for p < len(orig) && orig[p] == updated[p] {
			p++
		}
		if !strings.HasSuffix(updated, orig[p:]) {
			t.Fatalf("more than one insertion into %q: %q", orig, updated)
		}
		return
	}
	ol, ul := strings.SplitAfter(orig, "\n"), strings.SplitAfter(updated, "\n")
	j := 0
	for _, l := range ol {
		for j < len(ul) && !sameOrComma(ul[j], l) {
			j++
		}
		if j == len(ul) {
			t.Fatalf("line %q of the original is gone or changed:\n--- original\n%s\n--- updated\n%s", l, orig, updated)
		}
		j++
	}
}

// sameOrComma: u is l, or l with one comma inserted somewhere.
func sameOrComma(u, l string) bool {
	if u == l {
		return true
	}
	for i := 0; i < len(u); i++ {
		if u[i] == ',' && u[:i]+u[i+1:] == l {
			return true
		}
	}
	return false
}

func TestHostsEdit(t *testing.T) {
	for _, hc := range hostCases {
		t.Run(hc.name(), func(t *testing.T) {
			o := testOptions(t)
			h, _ := HostByName(hc.host)
			file := hc.path(o)
			write(t, file, hc.orig)

			// First run: only flameox's entry is added.
			res, err := run(t, o, Request{Hosts: []string{hc.host}, Scope: hc.scope, Yes: true}, quiet())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Applied || len(res.Changes) != 1 || res.Changes[0].Action != ActionUpdate || res.Changes[0].File != file {
				t.Fatalf("result %+v", res.Changes[0])
			}
			updated := read(t, file)
			keptLines(t, hc.orig, updated)
			before, after := decodeAny(t, h, hc.orig), decodeAny(t, h, updated)
			cont := h.container([]byte(updated))
			entry := after
			for _, k := range cont {
				entry, _ = entry[k].(map[string]any)
			}
			got, _ := entry[ServerName].(map[string]any)
			if got == nil {
				t.Fatalf("no %s entry under %v:\n%s", ServerName, cont, updated)
			}
			argv, _, _ := launch(h, got)
			if want := append([]string{exe}, Args(o, hc.scope)...); !reflect.DeepEqual(argv, want) {
				t.Errorf("entry starts %q, want %q", argv, want)
			}
			delete(entry, ServerName)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("other settings changed:\nbefore %v\nafter  %v", before, after)
			}
			if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's own 0640", st.Mode().Perm())
			}

			// Second run: nothing to do, no journal.
			js, _ := Journals(o)
			res, err = run(t, o, Request{Hosts: []string{hc.host}, Scope: hc.scope, Yes: true}, quiet())
			if err != nil {
				t.Fatal(err)
			}
			if res.Applied || res.Changes[0].Action != ActionAlreadyCurrent || read(t, file) != updated {
				t.Errorf("second run changed something: %+v", res.Changes[0])
			}
			if js2, _ := Journals(o); len(js2) != len(js) {
				t.Errorf("second run wrote a journal")
			}

			// Rollback: the original, byte for byte.
			if _, err := run(t, o, Request{Rollback: true}, quiet()); err != nil {
				t.Fatal(err)
			}
			if got := read(t, file); got != hc.orig {
				t.Errorf("rollback gave\n%q\nwant\n%q", got, hc.orig)
			}

			// Install then uninstall gives the original back too.
			if _, err := run(t, o, Request{Hosts: []string{hc.host}, Scope: hc.scope, Yes: true}, quiet()); err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, o, Request{Hosts: []string{hc.host}, Scope: hc.scope, Yes: true, Remove: true}, quiet()); err != nil {
				t.Fatal(err)
			}
			if got := read(t, file); got != hc.orig {
				t.Errorf("install+uninstall gave\n%s\nwant\n%s", got, hc.orig)
			}
		})
	}
}

func TestMalformedRefused(t *testing.T) {
	for _, hc := range hostCases {
		t.Run(hc.name(), func(t *testing.T) {
			o := testOptions(t)
			file := hc.path(o)
			write(t, file, hc.bad)
			for _, remove := range []bool{false, true} {
				_, err := run(t, o, Request{Hosts: []string{hc.host}, Scope: hc.scope, Yes: true, Remove: remove}, quiet())
				fe := fault.As(err)
				if err == nil || fe.Code != fault.WorkspaceInvalid || fe.Details["file"] != file {
					t.Fatalf("err = %v, want WORKSPACE_INVALID naming %s", err, file)
				}
				if fe.Details["line"] != itoa(hc.line) || fe.Details["column"] != itoa(hc.col) {
					t.Errorf("error at %s:%s, want %d:%d (%s)", fe.Details["line"], fe.Details["column"], hc.line, hc.col, fe.Message)
				}
				if fe.ExitCode() != fault.ExitUsage {
					t.Errorf("exit code %d, want %d", fe.ExitCode(), fault.ExitUsage)
				}
			}
			if read(t, file) != hc.bad {
				t.Error("the malformed file was changed")
			}
			if js, _ := Journals(o); len(js) != 0 {
				t.Error("a journal was written")
			}
		})
	}
}

func TestCreateAndRollbackRemoves(t *testing.T) {
	for _, h := range Hosts() {
		for _, s := range h.Scopes {
			t.Run(h.Name+"/"+string(s), func(t *testing.T) {
				o := testOptions(t)
				file := h.File(o, s)
				res, err := run(t, o, Request{Hosts: []string{h.Name}, Scope: s, Yes: true}, quiet())
				if err != nil {
					t.Fatal(err)
				}
				if res.Changes[0].Action != ActionCreate || !strings.HasPrefix(res.Changes[0].Diff, "--- /dev/null\n+++ "+file+"\n") {
					t.Fatalf("change %+v", res.Changes[0])
				}
				decodeAny(t, h, read(t, file))
				if _, err := run(t, o, Request{Rollback: true}, quiet()); err != nil {
					t.Fatal(err)
				}
				if exists(file) {
					t.Errorf("rollback left %s", file)
				}
				base := o.Home
				if s == Project {
					base = o.ProjectRoot
				}
				entries, _ := os.ReadDir(base)
				for _, e := range entries {
					if e.Name() != ".local" {
						t.Errorf("rollback left %s in %s", e.Name(), base)
					}
				}
			})
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	o := testOptions(t)
	for _, hc := range hostCases {
		if hc.scope == User {
			write(t, hc.path(o), hc.orig)
		}
	}
	res, err := run(t, o, Request{All: true, DryRun: true, JSON: true}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 7 {
		t.Errorf("%d changes, want every user-scope host detected (7)", len(res.Changes))
	}
	for _, c := range res.Changes {
		if !strings.Contains(c.Diff, "+++ "+c.File) || !strings.Contains(c.Diff, exe) {
			t.Errorf("%s: diff %q", c.Host, c.Diff)
		}
	}
	for _, hc := range hostCases {
		if hc.scope == User && read(t, hc.path(o)) != hc.orig {
			t.Errorf("%s changed on a dry run", hc.name())
		}
	}
	if exists(o.StateDir) {
		t.Error("a dry run created the state directory")
	}
}

func TestConfirm(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		interactive bool
		wantWrite   bool
		wantCode    fault.Code
	}{
		{"yes", "y\n", true, true, ""},
		{"YES", "YES\n", true, true, ""},
		{"enter means no", "\n", true, false, ""},
		{"no", "n\n", true, false, ""},
		{"end of input means no", "", true, false, ""},
		{"not a terminal", "y\n", false, false, fault.ExecutionRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			var out, errb bytes.Buffer
			res, err := run(t, o, Request{Hosts: []string{"cursor"}}, IO{In: strings.NewReader(tt.in), Out: &out, Err: &errb, Interactive: tt.interactive})
			if tt.wantCode != "" {
				if fault.As(err).Code != tt.wantCode {
					t.Fatalf("err = %v, want %s", err, tt.wantCode)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := exists(filepath.Join(o.Home, ".cursor", "mcp.json")); got != tt.wantWrite {
				t.Errorf("written = %v, want %v", got, tt.wantWrite)
			}
			if !strings.Contains(out.String(), "+++ "+filepath.Join(o.Home, ".cursor", "mcp.json")) {
				t.Errorf("the diff was not shown before asking:\n%s", out.String())
			}
			if tt.interactive && !strings.Contains(errb.String(), "[y/N]") {
				t.Errorf("no question asked: %q", errb.String())
			}
			if res != nil && res.Applied != tt.wantWrite {
				t.Errorf("applied = %v", res.Applied)
			}
		})
	}
}

func TestNothingSelectedByDefault(t *testing.T) {
	o := testOptions(t)
	write(t, filepath.Join(o.Home, ".claude.json"), "{}\n")
	os.MkdirAll(filepath.Join(o.Home, ".codex"), 0o755)
	var out bytes.Buffer
	res, err := run(t, o, Request{}, IO{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation != "detect" || len(res.Changes) != 0 || read(t, filepath.Join(o.Home, ".claude.json")) != "{}\n" {
		t.Fatalf("result %+v", res)
	}
	found := map[string]bool{}
	for _, d := range res.Detected {
		found[d.Host] = d.Detected
	}
	if !found["claude"] || !found["codex"] || found["cursor"] {
		t.Errorf("detected %v", found)
	}
	// Interactive: the person picks by number.
	res, err = run(t, o, Request{Yes: true}, IO{In: strings.NewReader("1\n"), Out: &out, Err: &bytes.Buffer{}, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation != "detect" {
		t.Fatalf("with --yes and no host, setup must not pick: %+v", res)
	}
	res, err = run(t, o, Request{}, IO{In: strings.NewReader("claude\ny\n"), Out: &out, Err: &bytes.Buffer{}, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation != "configure" || len(res.Changes) != 1 || res.Changes[0].Host != "claude" {
		t.Fatalf("picked %+v", res.Changes)
	}
}

func TestUpdateStaleEntry(t *testing.T) {
	tests := []struct {
		host, rel, orig, want string
	}{
		{"claude", ".claude.json", "{\n  \"mcpServers\": {\n    \"flameox\": {\n      \"command\": \"/old/flameox\",\n      \"args\": [\"mcp\", \"serve\"],\n      \"env\": {\"A\": \"1\"}\n    }\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"flameox\": {\n      \"command\": \"" + exe + "\",\n      \"args\": [\"mcp\", \"serve\"],\n      \"env\": {\"A\": \"1\"},\n      \"type\": \"stdio\"\n    }\n  }\n}\n"},
		{"codex", ".codex/config.toml", "[mcp_servers.flameox]\ncommand = \"/old/flameox\" # mine\nargs = [\"mcp\", \"serve\"]\nstartup_timeout_sec = 30\n\n[mcp_servers.flameox.env]\nA = \"1\"\n",
			"[mcp_servers.flameox]\ncommand = \"" + exe + "\" # mine\nargs = [\"mcp\", \"serve\"]\nstartup_timeout_sec = 30\n\n[mcp_servers.flameox.env]\nA = \"1\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			o := testOptions(t)
			file := filepath.Join(o.Home, tt.rel)
			write(t, file, tt.orig)
			if _, err := run(t, o, Request{Hosts: []string{tt.host}, Yes: true}, quiet()); err != nil {
				t.Fatal(err)
			}
			if got := read(t, file); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestRollbackConflict(t *testing.T) {
	o := testOptions(t)
	file := filepath.Join(o.Home, ".cursor", "mcp.json")
	write(t, file, "{}\n")
	if _, err := run(t, o, Request{Hosts: []string{"cursor"}, Yes: true}, quiet()); err != nil {
		t.Fatal(err)
	}
	write(t, file, "{\"edited\": true}\n")
	_, err := run(t, o, Request{Rollback: true}, quiet())
	if fault.As(err).Code != fault.RevisionConflict {
		t.Fatalf("err = %v, want REVISION_CONFLICT", err)
	}
	if read(t, file) != "{\"edited\": true}\n" {
		t.Error("rollback overwrote a file changed since")
	}
	write(t, file, "{}\n") // back to the original: rollback has nothing to do but succeeds
	if _, err := run(t, o, Request{Rollback: true}, quiet()); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, o, Request{Rollback: true}, quiet())
	if fault.As(err).Code != fault.NotFound {
		t.Errorf("a second rollback: %v, want NOT_FOUND", err)
	}
}

func TestSymlinkedConfigStaysALink(t *testing.T) {
	o := testOptions(t)
	real := filepath.Join(o.Home, "dotfiles", "claude.json")
	write(t, real, "{}\n")
	link := filepath.Join(o.Home, ".claude.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, o, Request{Hosts: []string{"claude"}, Yes: true}, quiet()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if !strings.Contains(read(t, real), exe) {
		t.Error("the link's target was not edited")
	}
}

func TestProjectScopeRefusedWhereUnsupported(t *testing.T) {
	o := testOptions(t)
	_, err := run(t, o, Request{Hosts: []string{"antigravity"}, Scope: Project, Yes: true}, quiet())
	if fe := fault.As(err); fe.Code != fault.InvalidArguments {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenCodeV2Layout(t *testing.T) {
	o := testOptions(t)
	file := filepath.Join(o.Home, ".config", "opencode", "opencode.json")
	write(t, file, "{\n  \"mcp\": {\n    \"servers\": {}\n  }\n}\n")
	if _, err := run(t, o, Request{Hosts: []string{"opencode"}, Yes: true}, quiet()); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcp\": {\n    \"servers\": {\n      \"flameox\": {\n        \"type\": \"local\",\n        \"command\": [\"" + exe + "\", \"mcp\", \"serve\"]\n      }\n    }\n  }\n}\n"
	if got := read(t, file); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCodexInlineRefused(t *testing.T) {
	o := testOptions(t)
	file := filepath.Join(o.CodexHome, "config.toml")
	orig := "[mcp_servers]\nflameox = { command = \"/x\" }\n"
	write(t, file, orig)
	_, err := run(t, o, Request{Hosts: []string{"codex"}, Yes: true}, quiet())
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.WorkspaceInvalid || fe.Details["line"] != "1" {
		t.Fatalf("err = %v", err)
	}
	if read(t, file) != orig {
		t.Error("changed")
	}
}

// TestTransientBinary: setup warns when the binary hosts would start
// lives where it will vanish (a go run build, npx's cache).
func TestTransientBinary(t *testing.T) {
	for _, tt := range []struct{ exe, want string }{
		{"/tmp/go-build123/b001/exe/flameox", "go run"},
		{"/home/u/.npm/_npx/8f2a/node_modules/@flameox/linux-x64/bin/flameox", "npx"},
		{"/usr/local/lib/node_modules/flameox/node_modules/@flameox/linux-x64/bin/flameox", ""},
		{"/home/u/go/bin/flameox", ""},
	} {
		got := transient(tt.exe)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("transient(%s) = %q, want %q", tt.exe, got, tt.want)
		}
	}
}
