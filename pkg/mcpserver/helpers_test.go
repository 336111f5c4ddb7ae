package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/tool/foxmcp"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets the test binary act as fox-mcp in a child process, so the
// stdio tests run a real server process without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("FOX_MCP_TEST_SERVE") == "1" {
		os.Exit(cli.Main("fox-mcp", foxmcp.Run))
	}
	os.Exit(m.Run())
}

// serverCmd is the test binary running `fox-mcp serve --project-root dir`.
func serverCmd(dir string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--project-root", dir}, extra...)...)
	cmd.Env = append(os.Environ(), "FOX_MCP_TEST_SERVE=1")
	cmd.Stderr = os.Stderr
	return cmd
}

// project is a temporary project directory with an initialized workspace.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := workspace.Init(context.Background(), dir, time.Now(), publish.FirstCommit); err != nil {
		t.Fatal(err)
	}
	return dir
}

type client struct {
	t  *testing.T
	cs *mcp.ClientSession
}

// connect starts a server process for dir and connects the go-sdk client
// at the protocol version current hosts send.
func connect(t *testing.T, dir string, opts *mcp.ClientOptions) *client {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flameox-test", Version: "1"}, opts).
		Connect(ctx, &mcp.CommandTransport{Command: serverCmd(dir)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &client{t: t, cs: cs}
}

// envelope is the decoded structured content of a tool result.
type envelope struct {
	SchemaVersion int             `json:"schema_version"`
	OK            bool            `json:"ok"`
	Result        json.RawMessage `json:"result"`
	Error         *struct {
		Code        string            `json:"code"`
		Message     string            `json:"message"`
		Details     map[string]string `json:"details"`
		Remediation []string          `json:"remediation"`
		RunID       string            `json:"run_id"`
	} `json:"error"`
	isError bool
	text    string
	raw     []byte
}

// callCtx calls a tool and decodes its envelope.
func (c *client) callCtx(ctx context.Context, p *mcp.CallToolParams) envelope {
	c.t.Helper()
	res, err := c.cs.CallTool(ctx, p)
	if err != nil {
		c.t.Fatalf("%s: %v", p.Name, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		c.t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil || env.SchemaVersion != 1 {
		c.t.Fatalf("%s: not an envelope (%v): %s", p.Name, err, raw)
	}
	env.isError, env.raw = res.IsError, raw
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			env.text = tc.Text
		}
	}
	if env.OK == env.isError || env.OK != (env.Error == nil) {
		c.t.Fatalf("%s: ok=%v isError=%v error=%v", p.Name, env.OK, env.isError, env.Error)
	}
	return env
}

func (c *client) call(name string, args map[string]any) envelope {
	c.t.Helper()
	return c.callCtx(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
}

// ok calls a tool that must succeed and decodes its result into out.
func (c *client) ok(name string, args map[string]any, out any) envelope {
	c.t.Helper()
	env := c.call(name, args)
	if !env.OK {
		c.t.Fatalf("%s failed: %+v (%s)", name, env.Error, env.text)
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			c.t.Fatalf("%s: %v", name, err)
		}
	}
	return env
}

// fails calls a tool that must fail with code.
func (c *client) fails(name string, args map[string]any, code string) envelope {
	c.t.Helper()
	env := c.call(name, args)
	if env.OK || env.Error.Code != code {
		c.t.Fatalf("%s: want %s, got ok=%v error=%+v", name, code, env.OK, env.Error)
	}
	return env
}

// copyTestdata copies a profile from pkg/profile/testdata into dir.
func copyTestdata(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "profile", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// importedRun imports a project file over MCP and returns its run id.
func (c *client) importedRun(path string) (runID, artifactID string) {
	c.t.Helper()
	var res struct {
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
		ArtifactID     string `json:"artifact_id"`
		CorpusCommitID string `json:"corpus_commit_id"`
	}
	c.ok("import_artifact", map[string]any{"path": path}, &res)
	if res.Run.RunID == "" || res.CorpusCommitID == "" {
		c.t.Fatalf("import of %s: %+v", path, res)
	}
	return res.Run.RunID, res.ArtifactID
}
