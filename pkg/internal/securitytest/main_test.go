package securitytest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/tool/flameox"
	"github.com/flameox/flameox/pkg/tool/foxcapture"
	"github.com/flameox/flameox/pkg/tool/foxcatalog"
	"github.com/flameox/flameox/pkg/tool/foxmcp"
	"github.com/flameox/flameox/pkg/tool/foxpublish"
)

// asEnv names the tool a child copy of the test binary acts as.
const asEnv = "FLAMEOX_SECURITYTEST_AS"

// tools are the binaries a test runs: each is this test binary, so the
// suite exercises the release's code in real child processes (which a
// namespace, strace or a full disk can then act on).
var tools = map[string]func(){
	"flameox":     func() { os.Exit(cli.Main("flameox", flameox.Run)) },
	"fox-capture": func() { os.Exit(cli.Main("fox-capture", foxcapture.Run)) },
	"fox-publish": func() { os.Exit(cli.Main("fox-publish", foxpublish.Run)) },
	"fox-catalog": func() { os.Exit(cli.Main("fox-catalog", foxcatalog.Run)) },
	"fox-mcp":     func() { os.Exit(cli.Main("fox-mcp", foxmcp.Run)) },
	// netprobe prints the network interfaces that are up, but loopback:
	// none inside `unshare -n`.
	"netprobe": func() { os.Exit(netProbe()) },
}

func TestMain(m *testing.M) {
	// A workload the capture tests run: this binary under another name
	// (a symlink), since a workload inherits no test environment.
	if filepath.Base(os.Args[0]) == socketWorkload {
		os.Exit(openSocket())
	}
	if run, ok := tools[os.Getenv(asEnv)]; ok {
		run()
	}
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	exit           int
}

// cmdline is one command a test runs: a tool, its arguments, the directory,
// extra environment, stdin, and an optional wrapper (unshare, strace) put
// before the binary.
type cmdline struct {
	tool  string
	args  []string
	dir   string
	env   []string
	stdin string
	wrap  []string
}

func (c cmdline) run(t *testing.T) result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append(append([]string{}, c.wrap...), self), c.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(append(os.Environ(), asEnv+"="+c.tool, "COLUMNS=120"), c.env...)
	cmd.Stdin = strings.NewReader(c.stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", c.tool, c.args, err)
	}
	return r
}

func fx(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return cmdline{tool: "flameox", args: args, dir: dir}.run(t)
}

func mustOK(t *testing.T, what string, r result) result {
	t.Helper()
	if r.exit != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", what, r.exit, r.stdout, r.stderr)
	}
	return r
}

// fixture is the path of a file in testdata.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// project makes a fresh project with the workloads of toml (flameox.toml)
// declared and approved, initialised.
func project(t *testing.T, toml string, approve ...string) string {
	t.Helper()
	dir := t.TempDir()
	if toml != "" {
		if err := os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustOK(t, "init", fx(t, dir, "init"))
	for _, w := range approve {
		mustOK(t, "workload approve", fx(t, dir, "workload", "approve", w))
	}
	return dir
}

// lookTool is testenv.LookPath for a tool the suite needs.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	return testenv.LookPath(t, name)
}

func lookPathQuiet(name string) (string, error) { return exec.LookPath(name) }

// runIDOf reads run.run_id from an import or capture's --json result.
func runIDOf(t *testing.T, stdout string) string {
	t.Helper()
	var res struct {
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Run.RunID == "" {
		t.Fatalf("no run id in %s", stdout)
	}
	return res.Run.RunID
}
