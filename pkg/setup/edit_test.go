package setup

import (
	"context"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

var entry = []field{{"command", "/b/flameox"}, {"args", []string{"mcp", "serve"}}}

func TestJSONSetLayouts(t *testing.T) {
	tests := []struct {
		name, src, want string
		jsonc           bool
	}{
		{"empty file", "", "{\n  \"mcpServers\": {\n    \"flameox\": {\n      \"command\": \"/b/flameox\",\n      \"args\": [\"mcp\", \"serve\"]\n    }\n  }\n}\n", false},
		{"empty object", "{}\n", "{\n  \"mcpServers\": {\n    \"flameox\": {\n      \"command\": \"/b/flameox\",\n      \"args\": [\"mcp\", \"serve\"]\n    }\n  }\n}\n", false},
		{"only a comment", "// settings\n", "// settings\n{\n  \"mcpServers\": {\n    \"flameox\": {\n      \"command\": \"/b/flameox\",\n      \"args\": [\"mcp\", \"serve\"]\n    }\n  }\n}\n", true},
		{"byte order mark kept", "\xef\xbb\xbf{\"a\": 1}", "\xef\xbb\xbf{\"a\": 1, \"mcpServers\": {\"flameox\": {\"command\": \"/b/flameox\", \"args\": [\"mcp\", \"serve\"]}}}", false},
		{"tabs and CRLF", "{\r\n\t\"x\": true\r\n}\r\n", "{\r\n\t\"x\": true,\r\n\t\"mcpServers\": {\r\n\t\t\"flameox\": {\r\n\t\t\t\"command\": \"/b/flameox\",\r\n\t\t\t\"args\": [\"mcp\", \"serve\"]\r\n\t\t}\r\n\t}\r\n}\r\n", false},
		{"four spaces", "{\n    \"mcpServers\": {\n        \"a\": {}\n    }\n}\n", "{\n    \"mcpServers\": {\n        \"a\": {},\n        \"flameox\": {\n            \"command\": \"/b/flameox\",\n            \"args\": [\"mcp\", \"serve\"]\n        }\n    }\n}\n", false},
		{"comment after the last member stays on its line", "{\n  \"mcpServers\": {\n    \"a\": {} // first\n  }\n}\n", "{\n  \"mcpServers\": {\n    \"a\": {}, // first\n    \"flameox\": {\n      \"command\": \"/b/flameox\",\n      \"args\": [\"mcp\", \"serve\"]\n    }\n  }\n}\n", true},
		{"closing brace on the last line", "{\n  \"mcpServers\": {\n    \"a\": {}}}\n", "{\n  \"mcpServers\": {\n    \"a\": {},\n    \"flameox\": {\n      \"command\": \"/b/flameox\",\n      \"args\": [\"mcp\", \"serve\"]\n    }}}\n", false},
		{"unicode and escapes elsewhere untouched", "{\"name\": \"caf\\u00e9 \\\"x\\\"\", \"mcpServers\": {}}", "{\"name\": \"caf\\u00e9 \\\"x\\\"\", \"mcpServers\": {\n  \"flameox\": {\n    \"command\": \"/b/flameox\",\n    \"args\": [\"mcp\", \"serve\"]\n  }\n}}", false},
		{"already there", "{\"mcpServers\": {\"flameox\": {\"args\": [\"mcp\",\"serve\"], \"command\": \"/b/flameox\"}}}", "{\"mcpServers\": {\"flameox\": {\"args\": [\"mcp\",\"serve\"], \"command\": \"/b/flameox\"}}}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := jsonSet([]byte(tt.src), tt.jsonc, []string{"mcpServers", "flameox"}, entry)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if changed != (tt.src != tt.want) {
				t.Errorf("changed = %v", changed)
			}
		})
	}
}

func TestJSONNotAnObject(t *testing.T) {
	for _, src := range []string{`[]`, `{"mcpServers": null}`, `{"mcpServers": {"flameox": "x"}}`} {
		if _, _, err := jsonSet([]byte(src), false, []string{"mcpServers", "flameox"}, entry); err == nil {
			t.Errorf("%s: accepted", src)
		} else if _, ok := err.(*SyntaxError); !ok {
			t.Errorf("%s: %T, want a positioned error", src, err)
		}
	}
}

func TestTOMLSetLayouts(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"empty", "", "[mcp_servers.flameox]\ncommand = \"/b/flameox\"\nargs = [\"mcp\", \"serve\"]\n"},
		{"no trailing newline", "a = 1", "a = 1\n\n[mcp_servers.flameox]\ncommand = \"/b/flameox\"\nargs = [\"mcp\", \"serve\"]\n"},
		{"CRLF", "a = 1\r\n", "a = 1\r\n\r\n[mcp_servers.flameox]\r\ncommand = \"/b/flameox\"\r\nargs = [\"mcp\", \"serve\"]\r\n"},
		{"table without the keys, at the end, no newline", "[mcp_servers.flameox]\nenabled = true", "[mcp_servers.flameox]\nenabled = true\ncommand = \"/b/flameox\"\nargs = [\"mcp\", \"serve\"]\n"},
		{"table in the middle", "[mcp_servers.flameox]\nargs = [\n  \"old\",\n]\n\n# next\n[other]\nx = 1\n",
			"[mcp_servers.flameox]\nargs = [\"mcp\", \"serve\"]\ncommand = \"/b/flameox\"\n\n# next\n[other]\nx = 1\n"},
		{"a header inside a multi-line string is not a table", "s = '''\n[mcp_servers.flameox]\n'''\n",
			"s = '''\n[mcp_servers.flameox]\n'''\n\n[mcp_servers.flameox]\ncommand = \"/b/flameox\"\nargs = [\"mcp\", \"serve\"]\n"},
		{"quoted header", "[mcp_servers.\"flameox\"]\ncommand = \"/b/flameox\"\nargs = [\"mcp\", \"serve\"]\n", "[mcp_servers.\"flameox\"]\ncommand = \"/b/flameox\"\nargs = [\"mcp\", \"serve\"]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := tomlSet([]byte(tt.src), []string{"mcp_servers", "flameox"}, entry)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			back, _, err := tomlRemove(got, []string{"mcp_servers", "flameox"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decodeTOML(back); err != nil {
				t.Errorf("after removal: %v", err)
			}
		})
	}
}

func TestApplyRefusesAFileChangedSinceThePreview(t *testing.T) {
	o := testOptions(t)
	h, _ := HostByName("cursor")
	file := h.File(o, User)
	write(t, file, "{}\n")
	changes, err := Plan(o, []*Host{h}, User, false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, "{\"edited\": 1}\n") // the host rewrote it meanwhile
	_, err = Apply(context.Background(), o, changes, "configure")
	if fault.As(err).Code != fault.RevisionConflict {
		t.Fatalf("err = %v, want REVISION_CONFLICT", err)
	}
	if read(t, file) != "{\"edited\": 1}\n" {
		t.Error("the file was overwritten")
	}
	if js, _ := Journals(o); len(js) != 0 {
		t.Error("a journal was left")
	}
}
