package pyspy

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
)

// Files the probe reads.
const (
	PtraceScopeFile = "/proc/sys/kernel/yama/ptrace_scope"
	StatusFile      = "/proc/self/status"
	installRemedy   = "pip install py-spy (or pipx install py-spy) so that py-spy is on PATH"
	capSysPtrace    = 19 // linux/capability.h
)

// notChecked says what no passive probe can know.
const notChecked = "checked passively: Yama ptrace_scope, CAP_SYS_PTRACE and the seccomp mode; not checked: the contents of a seccomp filter, AppArmor/SELinux policy, and whether the child stays dumpable — only a capture proves py-spy can read the child's memory"

// System is what the probe and the plan look at; tests substitute fakes.
type System struct {
	GOOS     string
	LookPath func(file string) (string, error)
	ReadFile func(name string) ([]byte, error)
	Geteuid  func() int
	// Output runs a short command (py-spy --version) and returns its stdout.
	Output func(ctx context.Context, argv []string) ([]byte, error)
}

// RealSystem is the machine flameox runs on.
func RealSystem() System {
	return System{GOOS: runtime.GOOS, LookPath: exec.LookPath, ReadFile: os.ReadFile, Geteuid: os.Geteuid,
		Output: func(ctx context.Context, argv []string) ([]byte, error) {
			return broker.Output(ctx, argv, "", []string{"PATH=" + os.Getenv("PATH")}, 1<<16, 5*time.Second)
		}}
}

// Host is everything the capability decision depends on, already observed.
type Host struct {
	GOOS         string
	PySpyPath    string // "" when py-spy is not on PATH
	PtraceScope  string // Yama's ptrace_scope as read; "" when the file is absent (no Yama)
	Euid         int
	CapSysPtrace bool
	CapsKnown    bool   // /proc/self/status had a CapEff line
	Seccomp      string // 0 none, 1 strict, 2 filter; "" unknown
	Version      string
	VersionErr   error
}

// Gather observes the host without running a workload: /proc files, PATH,
// and `py-spy --version` (5 s, PATH only).
func Gather(ctx context.Context, sys System) Host {
	h := Host{GOOS: sys.GOOS, Euid: sys.Geteuid()}
	if p, err := sys.LookPath("py-spy"); err == nil {
		h.PySpyPath = p
	}
	if h.GOOS == "linux" {
		if b, err := sys.ReadFile(PtraceScopeFile); err == nil {
			h.PtraceScope = strings.TrimSpace(string(b))
		}
		if b, err := sys.ReadFile(StatusFile); err == nil {
			eff := statusField(string(b), "CapEff")
			v, err := strconv.ParseUint(eff, 16, 64)
			h.CapsKnown, h.CapSysPtrace = err == nil, err == nil && v&(1<<capSysPtrace) != 0
			h.Seccomp = statusField(string(b), "Seccomp")
		}
	}
	if h.PySpyPath != "" {
		out, err := sys.Output(ctx, []string{h.PySpyPath, "--version"})
		if h.VersionErr = err; err == nil {
			h.Version = strings.TrimPrefix(strings.TrimSpace(string(out)), "py-spy ")
		}
	}
	return h
}

// Assess decides the capability from observed facts. It is pure.
//
// flameox always has py-spy launch the workload (`py-spy record -- argv`),
// never attach to a running pid, so py-spy is the parent of the process it
// reads: Yama's ptrace_scope 1 ("descendants only") allows that, 2 needs
// CAP_SYS_PTRACE, 3 forbids it until reboot.
func Assess(h Host) adapter.Capability {
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable, c.Version = h.PySpyPath, h.Version
	c.Facts["euid"] = strconv.Itoa(h.Euid)
	switch h.GOOS {
	case "linux", "darwin", "windows", "freebsd":
	default:
		c.Status = adapter.UnsupportedPlatform
		c.Limitations = append(c.Limitations, "py-spy supports Linux, macOS, Windows and FreeBSD, not "+h.GOOS)
		return c
	}
	c.Modes = []string{"record-launch"}
	c.Limitations = append(c.Limitations, "only launch mode: flameox starts the workload under py-spy and never attaches to an existing pid (which would need ptrace_scope 0 or CAP_SYS_PTRACE)")
	if h.PySpyPath == "" {
		c.Status = adapter.Unavailable
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	switch h.GOOS {
	case "darwin":
		if h.Euid != 0 {
			c.Status = adapter.PermissionRequired
			c.Remediation = append(c.Remediation, "run flameox with sudo: py-spy on macOS needs root to read another process's memory, even its own child's")
			return c
		}
	case "linux":
		if !assessLinux(h, &c) {
			return c
		}
	default:
		c.Limitations = append(c.Limitations, "process access rules on "+h.GOOS+" were not checked")
	}
	if h.VersionErr != nil {
		c.Status = adapter.Degraded
		c.Limitations = append(c.Limitations, "`py-spy --version` failed: "+h.VersionErr.Error())
		c.Remediation = append(c.Remediation, "reinstall py-spy: "+installRemedy)
	}
	return c
}

// assessLinux records the Linux facts and reports whether py-spy may read
// its child; when not, c holds the status and the exact remedy.
func assessLinux(h Host, c *adapter.Capability) bool {
	scope := h.PtraceScope
	if scope == "" {
		scope = "absent"
		c.Limitations = append(c.Limitations, "Yama is not enabled ("+PtraceScopeFile+" is absent): only the classic ptrace checks apply (same uid, dumpable child)")
	}
	c.Facts["ptrace_scope"] = scope
	c.Facts["cap_sys_ptrace"] = "unknown"
	if h.CapsKnown {
		c.Facts["cap_sys_ptrace"] = map[bool]string{true: "yes", false: "no"}[h.CapSysPtrace]
	}
	c.Facts["seccomp"] = h.Seccomp
	if h.Seccomp == "" {
		c.Facts["seccomp"] = "unknown"
	}
	if h.Seccomp == "2" {
		c.Limitations = append(c.Limitations, "a seccomp filter is active and its rules were not inspected: py-spy needs process_vm_readv (and ptrace with native=true); Docker's default profile allows them only on kernels >= 4.8 or with --cap-add SYS_PTRACE")
	}
	c.Limitations = append(c.Limitations, notChecked)
	switch scope {
	case "absent", "0", "1":
		return true
	case "2":
		if h.CapSysPtrace || (!h.CapsKnown && h.Euid == 0) {
			c.Limitations = append(c.Limitations, "ptrace_scope=2 (admin-only attach) is satisfied by CAP_SYS_PTRACE")
			return true
		}
		c.Status = adapter.PermissionRequired
		c.Remediation = append(c.Remediation,
			"sudo sysctl -w kernel.yama.ptrace_scope=1 (1 = a process may read its own descendants, which is all py-spy needs when it launches the workload; 2 = only with CAP_SYS_PTRACE)",
			"or run flameox with CAP_SYS_PTRACE (root, or `docker run --cap-add SYS_PTRACE`)")
		return false
	case "3":
		c.Status = adapter.PermissionRequired
		c.Remediation = append(c.Remediation,
			"ptrace_scope=3 forbids every ptrace-style access and cannot be lowered until reboot: put kernel.yama.ptrace_scope=1 in /etc/sysctl.d/10-ptrace.conf and reboot")
		return false
	}
	c.Status = adapter.Unknown
	c.Remediation = append(c.Remediation, "check `cat "+PtraceScopeFile+"`: the value "+strconv.Quote(scope)+" is not one of 0-3")
	return false
}

func statusField(status, key string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
