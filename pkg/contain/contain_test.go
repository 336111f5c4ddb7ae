package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

func TestDecide(t *testing.T) {
	req := Request{Policy: Required, Workspace: "/p/.diagnostics", Project: "/p", Output: "/p/.diagnostics/staging/x/out", Cwd: "/p", DenyNet: true}
	if _, err := Decide(req, ""); !fault.Is(err, fault.ExecutionRefused) {
		t.Fatalf("required without bwrap: %v", err)
	}
	d, err := Decide(Request{Policy: Preferred}, "")
	if err != nil || d.State != Uncontained || !strings.Contains(d.Reason, "not installed") {
		t.Fatalf("preferred without bwrap: %+v %v", d, err)
	}
	d, _ = Decide(Request{Policy: RequiredForMCP, ForMCP: false}, "/usr/bin/bwrap")
	if d.State != Uncontained {
		t.Fatalf("required_for_mcp from the CLI: %+v", d)
	}
	if _, err := Decide(Request{Policy: RequiredForMCP, ForMCP: true}, ""); !fault.Is(err, fault.ExecutionRefused) {
		t.Fatal("required_for_mcp from MCP without bwrap must be refused")
	}
	d, _ = Decide(req, "/usr/bin/bwrap")
	if d.State != Contained || d.Network != "unshared" {
		t.Fatalf("contained: %+v", d)
	}
	argv := Wrap(d, req, "/usr/bin/bwrap", []string{"prog", "arg"})
	if argv[0] != "/usr/bin/bwrap" || argv[len(argv)-2] != "prog" || !contains(argv, "--unshare-net") {
		t.Fatalf("wrapped %v", argv)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestBubblewrapHidesWorkspaceAndNetwork runs a real contained child.
func TestBubblewrapHidesWorkspaceAndNetwork(t *testing.T) {
	bwrap := Bwrap()
	if bwrap == "" {
		testenv.Unable(t, "bwrap", "not installed")
	}
	project := t.TempDir()
	ws := filepath.Join(project, ".diagnostics")
	out := filepath.Join(ws, "staging", "capture-x", "out")
	os.MkdirAll(out, 0o700)
	os.WriteFile(filepath.Join(ws, "secret.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(project, "visible.txt"), []byte("ok"), 0o644)
	req := Request{Policy: Required, DenyNet: true, Workspace: ws, Project: project, Output: out, Cwd: project}
	d, err := Decide(req, bwrap)
	if err != nil {
		t.Fatal(err)
	}
	script := `ls -A .diagnostics | grep -c secret; cat visible.txt; echo; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; echo written > "$1/result"; echo x > visible.txt && echo PROJECT_WRITABLE`
	cmd := exec.Command(Wrap(d, req, bwrap, []string{"/bin/sh", "-c", script, "sh", out})[0], Wrap(d, req, bwrap, []string{"/bin/sh", "-c", script, "sh", out})[1:]...)
	got, _ := cmd.CombinedOutput()
	s := string(got)
	if !strings.HasPrefix(s, "0\nok\nlo\n") || strings.Contains(s, "PROJECT_WRITABLE") {
		t.Fatalf("inside the sandbox:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(out, "result")); err != nil || string(b) != "written\n" {
		t.Fatalf("output directory not writable: %v", err)
	}
}

// TestRefusalRemedy: a refusal for want of Bubblewrap, and the probe
// `flameox capabilities` shows, say exactly how to install it and which
// policy key lets captures run uncontained, and what that means.
func TestRefusalRemedy(t *testing.T) {
	for _, tt := range []struct{ policy, want string }{
		{Required, `"required_for_mcp"`},
		{RequiredForMCP, `"preferred"`},
	} {
		_, err := Decide(Request{Policy: tt.policy, ForMCP: true}, "")
		fe := fault.As(err)
		fix := strings.Join(fe.Remediation, "\n")
		for _, w := range []string{"apt-get install bubblewrap", "dnf install bubblewrap", PolicyKey + " = " + tt.want, "uncontained", "scripts/install-collectors.sh"} {
			if !strings.Contains(fix, w) {
				t.Errorf("policy %s: remedy %q does not say %q", tt.policy, fix, w)
			}
		}
		if fe.Code != fault.ExecutionRefused || fe.Details["policy_key"] != PolicyKey {
			t.Errorf("policy %s: %+v", tt.policy, fe)
		}
	}
	t.Setenv("PATH", t.TempDir())
	st, _, _, fix := Probe()
	if st != "unavailable" || !strings.Contains(strings.Join(fix, " "), "apt-get install bubblewrap") || !strings.Contains(strings.Join(fix, " "), PolicyKey) {
		t.Fatalf("probe without bwrap: %s %q", st, fix)
	}
}
