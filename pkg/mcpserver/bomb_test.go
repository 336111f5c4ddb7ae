package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile/bombtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bombAddressSpace bounds the server process (prlimit --as): about 2 GiB
// is reserved before any request (DuckDB's threads and glibc's malloc
// arenas), the rest is what decoding may use.
const bombAddressSpace = 4 << 30

// TestImportArtifactBombs: the MCP server, under an address-space bound,
// answers import_artifact of decompression bombs (the two of issue 12: a
// gzip of ~1 GiB of empty pprof strings, and a speedscope file of tiny
// frames) with a structured ARTIFACT_TOO_LARGE naming the limit, and then
// serves the next requests, an import that succeeds among them. Before
// [limits], the first call killed the server with "fatal error: out of
// memory".
func TestImportArtifactBombs(t *testing.T) {
	testenv.LookPath(t, "prlimit") // util-linux
	dir := project(t)
	cases, err := bombtest.Write(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	bombs := map[string]string{} // name in the project -> limit
	for _, c := range cases {
		if c.Name != "pprof-strings.pb.gz" && c.Name != "speedscope-frames.json.gz" {
			continue
		}
		b, err := os.ReadFile(c.File)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		bombs[c.Name] = "limits." + c.Limit
	}
	if len(bombs) != 2 {
		t.Fatalf("corpus lacks the issue's bombs: %v", bombs)
	}
	good := copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz")

	cmd := exec.Command("prlimit", fmt.Sprintf("--as=%d", bombAddressSpace), "--", os.Args[0], "serve", "--project-root", dir)
	cmd.Env = append(os.Environ(), "FOX_MCP_TEST_SERVE=1")
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flameox-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c := &client{t: t, cs: cs}

	for name, limit := range bombs {
		env := c.fails("import_artifact", map[string]any{"path": name}, "ARTIFACT_TOO_LARGE")
		d := env.Error.Details
		if d["limit_key"] != limit || d["limit"] == "" || d["observed"] == "" {
			t.Errorf("%s: details do not name %s, its value and the count: %v", name, limit, d)
		}
		if len(env.Error.Remediation) == 0 {
			t.Errorf("%s: no remediation", name)
		}
	}
	// Still serving: a genuine profile imports and the workspace answers.
	c.importedRun(good)
	var st struct {
		Runs struct{ Total int } `json:"runs"`
	}
	c.ok("workspace_status", nil, &st)
	if st.Runs.Total < 1 {
		t.Fatalf("workspace_status after the bombs: %+v", st)
	}
}
