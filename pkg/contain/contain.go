// Package contain wraps a workload's argv in Bubblewrap when policy asks for
// containment, and says truthfully what was achieved: "contained" (a new
// mount, PID and, unless allowed, network namespace; the workspace hidden;
// only the capture's output directory and declared paths writable),
// "degraded" (contained, but something asked for could not be provided) or
// "uncontained". A result is never relabelled after the fact.
package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// States of containment.
const (
	Contained   = "contained"
	Degraded    = "degraded"
	Uncontained = "uncontained"
)

// Policy values (config execution.containment).
const (
	Never          = "never"
	Preferred      = "preferred"
	Required       = "required"
	RequiredForMCP = "required_for_mcp"
)

// PolicyKey is the configuration key of the containment policy, in
// .diagnostics/config.toml.
const PolicyKey = "execution.containment"

// Install is how to install Bubblewrap, per distribution.
const Install = "Install Bubblewrap: apt-get install bubblewrap (Debian, Ubuntu; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap; Alpine: apk add bubblewrap), or run scripts/install-collectors.sh as root."

// Remedy is what to do when Bubblewrap is missing under policy: install
// it, or (knowing what that means) choose a policy that lets captures run
// uncontained.
func Remedy(policy string) []string {
	out := []string{Install}
	switch policy {
	case Required:
		out = append(out, `Or set `+PolicyKey+` = "required_for_mcp" in .diagnostics/config.toml so only captures started through MCP must be contained (CLI captures then run uncontained), or "preferred" to contain when Bubblewrap is installed and run uncontained when it is not.`)
	default:
		out = append(out, `Or set `+PolicyKey+` = "preferred" in .diagnostics/config.toml to let MCP captures run uncontained when Bubblewrap is missing: the workload (an agent may pick its parameters) then runs with your user's full access to files, the network and the workspace, as a CLI capture does; "never" never contains.`)
	}
	return out
}

// Decision is what a plan records about containment.
type Decision struct {
	State     string   `json:"state"`
	Mechanism string   `json:"mechanism,omitempty"` // "bubblewrap"
	Network   string   `json:"network"`             // "unshared" | "shared"
	Hidden    []string `json:"hidden"`              // paths made invisible (workspace-relative or absolute)
	Writable  []string `json:"writable"`            // writable roots inside the sandbox
	Reason    string   `json:"reason"`
}

// Request describes what to contain.
type Request struct {
	Policy    string // config execution.containment
	ForMCP    bool   // the capture was requested through MCP
	DenyNet   bool   // config execution.network == deny_when_contained
	Workspace string // .diagnostics, hidden inside
	Project   string // project root, read-only inside
	Output    string // capture output directory, writable
	Writable  []string
	Cwd       string
}

// Bwrap returns the bwrap executable or "".
func Bwrap() string {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return ""
	}
	return p
}

// Decide chooses containment for a request without running anything. A
// policy that requires containment when Bubblewrap is missing is refused
// (EXECUTION_REFUSED, exit 9) with the remedy.
func Decide(req Request, bwrap string) (Decision, error) {
	need := req.Policy == Required || (req.Policy == RequiredForMCP && req.ForMCP)
	want := need || req.Policy == Preferred
	d := Decision{State: Uncontained, Network: "shared", Hidden: []string{}, Writable: []string{}}
	switch {
	case !want:
		d.Reason = "policy " + req.Policy + " does not ask for containment"
		return d, nil
	case bwrap == "":
		if need {
			what := "every capture"
			if req.Policy == RequiredForMCP {
				what = "captures requested through MCP"
			}
			return d, fault.New(fault.ExecutionRefused, "execution.containment = %q requires %s to run inside Bubblewrap, and Bubblewrap (bwrap) is not installed", req.Policy, what).
				With("policy", req.Policy).With("policy_key", PolicyKey).
				Fix(Remedy(req.Policy)...)
		}
		d.Reason = "Bubblewrap is not installed; the workload runs uncontained"
		return d, nil
	}
	d.State, d.Mechanism = Contained, "bubblewrap"
	if req.DenyNet {
		d.Network = "unshared"
	}
	d.Hidden = []string{req.Workspace}
	d.Writable = append([]string{req.Output, "/tmp (private tmpfs)"}, req.Writable...)
	d.Reason = "policy " + req.Policy
	return d, nil
}

// Wrap returns the argv that runs argv under the decision. For an
// uncontained decision it returns argv unchanged.
func Wrap(d Decision, req Request, bwrap string, argv []string) []string {
	if d.State == Uncontained {
		return argv
	}
	w := []string{bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	if d.Network == "unshared" {
		w = append(w, "--unshare-net")
	}
	// The whole file system read-only, then the exceptions on top.
	w = append(w, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	// The private /tmp would hide a project that lives under /tmp; bind the
	// project (read-only) back on top of it.
	w = append(w, "--ro-bind", req.Project, req.Project)
	// Hide the workspace (artifacts, manifests, corpus) from the workload.
	w = append(w, "--tmpfs", req.Workspace)
	// The output directory lives inside the workspace's staging area; bind
	// it back after the tmpfs so that only it is visible and writable.
	w = append(w, "--bind", req.Output, req.Output)
	writable := append([]string{}, req.Writable...)
	sort.Strings(writable)
	for _, p := range writable {
		w = append(w, "--bind", p, p)
	}
	w = append(w, "--chdir", req.Cwd, "--")
	return append(w, argv...)
}

// Probe describes Bubblewrap's availability for `flameox capabilities`.
func Probe() (status, path, version string, remediation []string) {
	p := Bwrap()
	if p == "" {
		return "unavailable", "", "", Remedy(RequiredForMCP)
	}
	if _, err := os.Stat("/proc/sys/kernel/unprivileged_userns_clone"); err == nil {
		if b, _ := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); strings.TrimSpace(string(b)) == "0" && os.Geteuid() != 0 {
			return "permission_required", p, "", []string{"Enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1"}
		}
	}
	return "available", p, "", []string{}
}

// Under reports whether path is inside dir.
func Under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
