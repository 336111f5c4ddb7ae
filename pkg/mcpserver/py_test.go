package mcpserver_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// TestPythonAgent is TestTypeScriptAgent's investigation through the
// official Python SDK (PyPI mcp, stdio_client and ClientSession; its
// client validates every structured result against the tool's output
// schema), with a short capture: the Python SDK sets no request timeout,
// so the long one is the TypeScript test's alone. The SDK is the one
// scripts/install-collectors.sh installs into python3.
func TestPythonAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("captures a go test")
	}
	python := testenv.LookPath(t, "python3")
	if out, err := exec.Command(python, "-c", "import mcp").CombinedOutput(); err != nil {
		testenv.Unable(t, "python mcp", "not installed", "%s -c 'import mcp': %v\n%s", python, err, out)
	}
	dir := agentProject(t)
	script, err := filepath.Abs(filepath.Join("testdata", "agent", "agent.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := runAgent(t, dir, python, script, agentArg(t, dir, agentConfig{Workload: "spin", Parameters: map[string]any{"seconds": 3}}))
	t.Logf("Python SDK: %s", strings.TrimPrefix(out, "ok "))
}
