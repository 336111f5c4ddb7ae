package setup

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzEntry = []field{{"command", "/x/flameox"}, {"args", []string{"mcp", "serve"}}}

// FuzzJSONC checks the reader against encoding/json and that an edit keeps
// every other value of the document.
func FuzzJSONC(f *testing.F) {
	for _, hc := range hostCases {
		if hc.host != "codex" {
			f.Add([]byte(hc.orig), hc.host == "gemini" || hc.host == "opencode" || hc.host == "vscode")
			f.Add([]byte(hc.bad), true)
		}
	}
	f.Add([]byte(`{"mcpServers": []}`), false)
	f.Add([]byte("// only a comment\n"), true)
	f.Fuzz(func(t *testing.T, src []byte, jsonc bool) {
		root, err := parseJSON(src, jsonc)
		if !jsonc && len(src) > 0 && src[0] != 0xef {
			valid := json.Valid(src)
			if err == nil && root != nil && !valid {
				t.Fatalf("reader accepts what encoding/json refuses: %q", src)
			}
			// The reader is stricter only about UTF-8 and nesting depth.
			if valid && utf8.Valid(src) && err != nil && !strings.Contains(err.Error(), "nested deeper") {
				t.Fatalf("reader refuses valid JSON: %v", err)
			}
		}
		if err != nil || root != nil && root.kind != kObject {
			return
		}
		path := []string{"mcpServers", ServerName}
		out, _, err := jsonSet(src, jsonc, path, fuzzEntry)
		if err != nil {
			return // mcpServers is not an object
		}
		v, after, err := jsonGet(out, jsonc, path)
		if err != nil {
			t.Fatalf("edited document does not parse: %v\n%q", err, out)
		}
		if !equalJSON(v, orderedMap(fuzzEntry)) {
			if m, ok := v.(map[string]any); !ok || !equalJSON(m["command"], "/x/flameox") || !equalJSON(m["args"], []string{"mcp", "serve"}) {
				t.Fatalf("entry is %v\n%q", v, out)
			}
		}
		if root == nil {
			return
		}
		before := root.decode(src).(map[string]any)
		got := after.decode(out).(map[string]any)
		servers := got["mcpServers"].(map[string]any)
		delete(servers, ServerName)
		if _, had := before["mcpServers"]; !had {
			delete(got, "mcpServers")
		} else if old, ok := before["mcpServers"].(map[string]any); ok {
			if e, ok := old[ServerName].(map[string]any); ok {
				delete(old, ServerName)
				_ = e
			}
		}
		if !reflect.DeepEqual(before, got) {
			t.Fatalf("other values changed:\n%v\n%v\n%q", before, got, out)
		}
	})
}

// FuzzTOML checks that setting the Codex table keeps every other value.
func FuzzTOML(f *testing.F) {
	for _, hc := range hostCases {
		if hc.host == "codex" {
			f.Add([]byte(hc.orig))
			f.Add([]byte(hc.bad))
		}
	}
	f.Add([]byte("[mcp_servers.flameox]\ncommand = \"/old\"\n"))
	f.Add([]byte("a = '''\n[mcp_servers.flameox]\n'''\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		before, err := decodeTOML(src)
		if err != nil {
			return
		}
		path := []string{"mcp_servers", ServerName}
		out, _, err := tomlSet(src, path, fuzzEntry)
		if err != nil {
			return
		}
		after, err := decodeTOML(out)
		if err != nil {
			t.Fatalf("edited file does not parse: %v\n%q\n%q", err, src, out)
		}
		e, _ := tomlAt(after, path)
		m, _ := e.(map[string]any)
		if m["command"] != "/x/flameox" || !tomlEqual(m["args"], []string{"mcp", "serve"}) {
			t.Fatalf("entry is %v\n%q", e, out)
		}
		ms := after["mcp_servers"].(map[string]any)
		if _, had := before["mcp_servers"]; !had {
			delete(after, "mcp_servers")
		} else if old, ok := before["mcp_servers"].(map[string]any); ok {
			if oe, ok := old[ServerName].(map[string]any); ok {
				delete(oe, "command")
				delete(oe, "args")
				delete(m, "command")
				delete(m, "args")
			} else {
				delete(ms, ServerName)
			}
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other values changed:\n%v\n%v\n%q", before, after, out)
		}
	})
}
