package perf

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

// Files the probe reads. All of them are read-only kernel interfaces.
const (
	ParanoidFile   = "/proc/sys/kernel/perf_event_paranoid"
	MaxRateFile    = "/proc/sys/kernel/perf_event_max_sample_rate"
	StatusFile     = "/proc/self/status"
	UIDMapFile     = "/proc/self/uid_map"
	PMUDevicesDir  = "/sys/bus/event_source/devices"
	installRemedy  = "apt-get install linux-perf (Debian) / linux-tools-$(uname -r) (Ubuntu)"
	paranoidRemedy = "sudo sysctl -w kernel.perf_event_paranoid=1"
	paranoidValues = "perf_event_paranoid: 2 = unprivileged users may sample user space only, 1 = plus kernel, 0 = plus CPU-wide events, -1 = everything; values above 2 are distribution patches (Debian, Ubuntu) that forbid unprivileged perf_event_open entirely"
)

// Capability bits of /proc/self/status CapEff (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
)

// System is what the probe and the plan look at. Tests substitute fakes;
// New uses the real machine.
type System struct {
	GOOS     string
	LookPath func(file string) (string, error)
	ReadFile func(name string) ([]byte, error)
	ListDir  func(dir string) ([]string, error)
	Geteuid  func() int
	// Output runs a short command (perf --version) and returns its stdout.
	Output func(ctx context.Context, argv []string) ([]byte, error)
}

// RealSystem is the machine flameox runs on.
func RealSystem() System {
	return System{
		GOOS: runtime.GOOS, LookPath: exec.LookPath, ReadFile: os.ReadFile, Geteuid: os.Geteuid,
		ListDir: func(dir string) ([]string, error) {
			ents, err := os.ReadDir(dir)
			names := make([]string, len(ents))
			for i, e := range ents {
				names[i] = e.Name()
			}
			return names, err
		},
		Output: func(ctx context.Context, argv []string) ([]byte, error) {
			return broker.Output(ctx, argv, "", []string{"PATH=" + os.Getenv("PATH")}, 1<<16, 5*time.Second)
		},
	}
}

// Host is everything the capability decision depends on, already observed.
type Host struct {
	GOOS           string
	PerfPath       string // "" when perf is not on PATH
	Paranoid       string // perf_event_paranoid as read, "" when unreadable
	MaxSampleRate  string // perf_event_max_sample_rate as read, "" when unreadable
	Euid           int
	UserNamespace  bool   // uid_map is not the identity map: root here is not root of the host
	CapPerfmon     bool   // CAP_PERFMON in the effective set
	CapSysAdmin    bool   // CAP_SYS_ADMIN in the effective set
	CapsKnown      bool   // /proc/self/status had a CapEff line
	HardwareEvents bool   // a CPU PMU is exposed under /sys/bus/event_source/devices
	Seccomp        string // 0 none, 1 strict, 2 filter; "" unknown
	Version        string
	VersionErr     error
}

// Gather observes the host without running a workload: it reads /proc and
// /sys, looks perf up on PATH and runs `perf --version` (5 s, PATH only).
func Gather(ctx context.Context, sys System) Host {
	h := Host{GOOS: sys.GOOS, Euid: sys.Geteuid()}
	if h.GOOS != "linux" {
		return h
	}
	if p, err := sys.LookPath("perf"); err == nil {
		h.PerfPath = p
	}
	h.Paranoid = readTrim(sys, ParanoidFile)
	h.MaxSampleRate = readTrim(sys, MaxRateFile)
	status := readTrim(sys, StatusFile)
	h.CapSysAdmin, h.CapPerfmon = hasCap(status, capSysAdmin), hasCap(status, capPerfmon)
	h.Seccomp = statusField(status, "Seccomp")
	h.CapsKnown = statusField(status, "CapEff") != ""
	if m := strings.Fields(readTrim(sys, UIDMapFile)); len(m) == 3 {
		h.UserNamespace = m[0] != "0" || m[1] != "0" || m[2] != "4294967295"
	}
	h.HardwareEvents = hardwarePMU(sys)
	if h.PerfPath != "" {
		out, err := sys.Output(ctx, []string{h.PerfPath, "--version"})
		if h.VersionErr = err; err == nil {
			h.Version = strings.TrimPrefix(strings.TrimSpace(string(out)), "perf version ")
		}
	}
	return h
}

// hardwarePMU reports whether the kernel exposes a CPU PMU (x86 "cpu",
// hybrid "cpu_core"/"cpu_atom", Arm "armv8_pmuv3_0", …). Virtual machines
// often expose only "software" and "tracepoint": cycles then do not exist.
func hardwarePMU(sys System) bool {
	names, _ := sys.ListDir(PMUDevicesDir)
	for _, n := range names {
		if n == "cpu" || n == "cpu_core" || n == "cpu_atom" || strings.HasPrefix(n, "armv") || strings.HasSuffix(n, "_pmu") {
			return true
		}
	}
	return false
}

// Assess decides the capability from observed facts. It is pure.
func Assess(h Host) adapter.Capability {
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable, c.Version = h.PerfPath, h.Version
	if h.GOOS != "linux" {
		c.Status = adapter.UnsupportedPlatform
		c.Limitations = append(c.Limitations, "perf_events is a Linux kernel interface; "+h.GOOS+" has none")
		return c
	}
	c.Modes = []string{"record"}
	c.Facts["perf_event_paranoid"] = orUnknown(h.Paranoid)
	c.Facts["perf_event_max_sample_rate"] = orUnknown(h.MaxSampleRate)
	c.Facts["euid"] = strconv.Itoa(h.Euid)
	c.Facts["hardware_events"] = yesNo(h.HardwareEvents)
	c.Facts["seccomp"] = orUnknown(h.Seccomp)
	priv := privilege(h)
	c.Facts["privileged"] = priv
	if !h.HardwareEvents {
		c.Limitations = append(c.Limitations, "no hardware PMU is exposed ("+PMUDevicesDir+" has no cpu device, typical of VMs): captures sample the software event cpu-clock instead of cycles")
	}
	if h.Seccomp == "2" {
		c.Limitations = append(c.Limitations, "a seccomp filter is active; whether it allows perf_event_open was not checked (Docker's default profile blocks it without CAP_PERFMON or CAP_SYS_ADMIN)")
	}
	if h.PerfPath == "" {
		c.Status = adapter.Unavailable
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	paranoid, err := strconv.Atoi(h.Paranoid)
	if err != nil {
		c.Status = adapter.Unknown
		c.Limitations = append(c.Limitations, ParanoidFile+" is unreadable: the kernel may lack CONFIG_PERF_EVENTS or /proc/sys is masked")
		c.Remediation = append(c.Remediation, "run on a kernel built with CONFIG_PERF_EVENTS=y with /proc/sys readable, then `cat "+ParanoidFile+"`")
		return c
	}
	switch {
	case paranoid > 2 && priv == "no":
		c.Status = adapter.PermissionRequired
		c.Limitations = append(c.Limitations, paranoidValues)
		c.Remediation = append(c.Remediation, paranoidRemedy,
			"or run flameox with CAP_PERFMON (e.g. `docker run --cap-add PERFMON`); "+paranoidValues)
		return c
	case paranoid > 1 && priv == "no":
		c.Limitations = append(c.Limitations, "perf_event_paranoid="+h.Paranoid+": only user-space frames are sampled, kernel frames need perf_event_paranoid <= 1 ("+paranoidRemedy+")")
	case priv != "no":
		c.Limitations = append(c.Limitations, "privileged ("+priv+"): perf_event_paranoid does not restrict sampling, kernel frames are included")
	}
	if h.VersionErr != nil {
		c.Status = adapter.Degraded
		c.Limitations = append(c.Limitations, "`perf --version` failed: "+h.VersionErr.Error())
		c.Remediation = append(c.Remediation, "check that "+h.PerfPath+" matches the running kernel: "+installRemedy)
	}
	return c
}

// privilege names what lets perf ignore perf_event_paranoid, or "no". The
// kernel checks CAP_PERFMON (or CAP_SYS_ADMIN) in the initial user
// namespace, not the uid: root in a container that dropped both, or root
// inside a user namespace, is as restricted as any user. Without
// /proc/self/status the euid is all there is to go on.
func privilege(h Host) string {
	switch {
	case h.UserNamespace:
		return "no"
	case !h.CapsKnown && h.Euid == 0:
		return "root"
	case h.CapPerfmon && h.Euid == 0:
		return "root"
	case h.CapPerfmon:
		return "cap_perfmon"
	case h.CapSysAdmin:
		return "cap_sys_admin"
	}
	return "no"
}

func hasCap(status string, bit uint) bool {
	v, err := strconv.ParseUint(statusField(status, "CapEff"), 16, 64)
	return err == nil && v&(1<<bit) != 0
}

func statusField(status, key string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func readTrim(sys System, name string) string {
	b, err := sys.ReadFile(name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
