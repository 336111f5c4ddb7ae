package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets the test binary be the server a host starts: run with
// "mcp serve" it serves MCP on stdio when the entry's env sets
// SETUP_TEST_SERVER (and fails without it, as a server missing its
// environment would).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "mcp" && os.Args[2] == "serve" {
		if os.Getenv("SETUP_TEST_SERVER") != "1" {
			fmt.Fprintln(os.Stderr, "SETUP_TEST_SERVER is not set")
			os.Exit(3)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "fake-flameox", Version: "0.0.1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "ping", Description: "answers"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{}, struct{}{}, nil
		})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestVerifyHandshake(t *testing.T) {
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		host   string
		rel    string
		config string
		ok     bool
		stderr string
	}{
		{"entry env reaches the server", "claude", ".claude.json",
			`{"mcpServers": {"flameox": {"type": "stdio", "command": "` + self + `", "args": ["mcp", "serve"], "env": {"SETUP_TEST_SERVER": "1"}}}}`, true, ""},
		{"opencode command array and environment", "opencode", ".config/opencode/opencode.json",
			`{"mcp": {"flameox": {"type": "local", "command": ["` + self + `", "mcp", "serve"], "environment": {"SETUP_TEST_SERVER": "1"}}}}`, true, ""},
		{"codex toml", "codex", ".codex/config.toml",
			"[mcp_servers.flameox]\ncommand = \"" + self + "\"\nargs = [\"mcp\", \"serve\"]\n\n[mcp_servers.flameox.env]\nSETUP_TEST_SERVER = \"1\"\n", true, ""},
		{"claude expands ${VAR:-default}", "claude", ".claude.json",
			`{"mcpServers": {"flameox": {"command": "${SETUP_TEST_BIN}", "args": ["mcp", "serve"], "env": {"SETUP_TEST_SERVER": "${SETUP_TEST_UNSET:-1}"}}}}`, true, ""},
		{"vscode expands ${env:VAR}", "vscode", ".config/Code/User/mcp.json",
			`{"servers": {"flameox": {"type": "stdio", "command": "${env:SETUP_TEST_BIN}", "args": ["mcp", "serve"], "env": {"SETUP_TEST_SERVER": "1", "ROOT": "${workspaceFolder}"}}}}`, true, ""},
		{"server without its env fails", "cursor", ".cursor/mcp.json",
			`{"mcpServers": {"flameox": {"command": "` + self + `", "args": ["mcp", "serve"]}}}`, false, "SETUP_TEST_SERVER is not set"},
		{"missing binary fails", "gemini", ".gemini/settings.json",
			`{"mcpServers": {"flameox": {"command": "/nonexistent/flameox", "args": ["mcp", "serve"]}}}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.Executable = self
			write(t, filepath.Join(o.Home, tt.rel), tt.config)
			res, err := run(t, o, Request{Verify: true}, IO{Out: &strings.Builder{}, Environ: append(os.Environ(), "SETUP_TEST_BIN="+self)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Verified) != 1 {
				t.Fatalf("verified %d hosts, want the one configured", len(res.Verified))
			}
			v := res.Verified[0]
			if v.OK != tt.ok || res.Failed() == tt.ok {
				t.Fatalf("ok = %v, want %v: %+v", v.OK, tt.ok, v.Error)
			}
			if tt.ok && (v.Server != "fake-flameox" || v.Tools != 1 || v.Stale || v.Protocol == "") {
				t.Errorf("handshake %+v", v)
			}
			if !strings.Contains(v.Stderr, tt.stderr) {
				t.Errorf("stderr %q, want %q", v.Stderr, tt.stderr)
			}
		})
	}
}

func TestVerifyNothingConfigured(t *testing.T) {
	o := testOptions(t)
	if _, err := run(t, o, Request{Verify: true}, quiet()); err == nil {
		t.Fatal("verify with nothing configured succeeded")
	}
}
