package identity

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/broker"
)

// Environment identifies the machine and toolchains a run executed on.
//
// Fields holds, when observable:
//
//	os                  runtime.GOOS
//	os_release          PRETTY_NAME from /etc/os-release
//	kernel              uname -r
//	arch                runtime.GOARCH
//	cpu_model           first "model name" in /proc/cpuinfo
//	cpu_logical         processors listed in /proc/cpuinfo
//	cpu_available       runtime.NumCPU (the CPUs this process may use)
//	memory_total_bytes  MemTotal from /proc/meminfo
//	flameox_go          runtime.Version() of flameox itself
//	go_toolchain        `go env GOVERSION` of the go on PATH
//	python              `python3 --version`
//	collector.<name>    versions passed in by the caller
//
// Every name that could not be observed is listed in MissingFields instead.
// A credential in a URL within a value (user info, a token query parameter)
// is recorded as "<redacted>" (broker.RedactCredentials).
type Environment struct {
	// EnvironmentID is digest.Of {identity_quality, fields, missing_fields}.
	EnvironmentID string `json:"environment_id"`
	// IdentityQuality is "exact" when nothing is missing, else "partial".
	IdentityQuality Quality `json:"identity_quality"`
	// ObservedAt is when the record was collected; not part of the id.
	ObservedAt    time.Time         `json:"observed_at"`
	Fields        map[string]string `json:"fields"`
	MissingFields []string          `json:"missing_fields"`
}

// Limits for the child processes and files the environment is read from.
const (
	toolTimeout  = 10 * time.Second
	toolOutLimit = 4 << 10
	procLimit    = 16 << 20
)

// toolEnv is the whole environment go and python run with: PATH to find
// them, no home directory (so no user configuration is read), C locale, and
// for go no toolchain switching, so nothing is downloaded.
func toolEnv() []string {
	return []string{
		"GOENV=off",
		"GOTOOLCHAIN=local",
		"HOME=/nonexistent",
		"LC_ALL=C",
		"PATH=" + os.Getenv("PATH"),
	}
}

// CollectEnvironment observes the current environment. collectors maps a
// collector name (e.g. "perf") to its version; an empty version is recorded
// as missing. It never fails: anything it cannot observe goes into
// MissingFields and makes the record partial. It is a pure function of the
// machine state; callers that need it often cache the result.
//
// toolchains names the toolchains whose versions matter for the run ("go",
// "python"); only those are probed (each costs a subprocess, and a pyenv
// shim is slow to start; docs/performance.md). A toolchain that was asked for and could not be
// observed is missing; one that was not asked for is simply not part of the
// record.
func CollectEnvironment(ctx context.Context, r Runner, collectors map[string]string, toolchains ...string) Environment {
	fields := map[string]string{}
	miss := missing{}
	set := func(key, value string) {
		if value == "" {
			miss.add(key)
			return
		}
		// A version line may quote a URL (an index, a proxy): keep any
		// credential in it out of the record.
		fields[key] = broker.RedactCredentials(value)
	}

	set("os", runtime.GOOS)
	set("arch", runtime.GOARCH)
	set("flameox_go", runtime.Version())
	set("os_release", osRelease())
	set("kernel", kernelRelease())
	model, processors := cpuInfo()
	set("cpu_model", model)
	if processors > 0 {
		set("cpu_logical", strconv.Itoa(processors))
	} else {
		miss.add("cpu_logical")
	}
	set("cpu_available", strconv.Itoa(runtime.NumCPU()))
	set("memory_total_bytes", memTotal())
	// The version probes are independent subprocesses; run them together.
	probes := map[string][]string{"go_toolchain": {"go", "env", "GOVERSION"}, "python": {"python3", "--version"}}
	want := map[string]bool{}
	for _, t := range toolchains {
		switch t {
		case "go":
			want["go_toolchain"] = true
		case "python":
			want["python"] = true
		}
	}
	results := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for field, argv := range probes {
		if !want[field] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := toolVersion(ctx, r, argv...)
			mu.Lock()
			results[field] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	for field := range want {
		set(field, results[field])
	}
	for name, version := range collectors {
		set("collector."+name, oneLine([]byte(version)))
	}

	e := Environment{
		IdentityQuality: QualityExact,
		ObservedAt:      now(),
		Fields:          fields,
		MissingFields:   miss.sorted(),
	}
	if len(e.MissingFields) > 0 {
		e.IdentityQuality = QualityPartial
	}
	// recordID cannot fail on a record of strings; if it ever did, the empty
	// id fails Verify rather than matching anything.
	e.EnvironmentID, _ = recordID(e, "environment_id", "observed_at")
	return e
}

// Verify recomputes the id and fails with ARTIFACT_INTEGRITY_FAILED when the
// record no longer matches it.
func (e Environment) Verify() error {
	return verifyID("environment", e.EnvironmentID, e, "environment_id", "observed_at")
}

// toolVersion runs a version command from "/" (so no project go.mod or
// toolchain directive applies) and returns its first output line.
func toolVersion(ctx context.Context, r Runner, argv ...string) string {
	if r == nil {
		return ""
	}
	out, err := r.Output(ctx, argv, "/", toolEnv(), toolOutLimit, toolTimeout)
	if err != nil {
		return ""
	}
	return oneLine(out)
}

// readLimited reads at most procLimit bytes of a system file.
func readLimited(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, procLimit))
	return b
}

// osRelease returns PRETTY_NAME from os-release(5).
func osRelease() string {
	for _, path := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		sc := bufio.NewScanner(bytes.NewReader(readLimited(path)))
		for sc.Scan() {
			v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "PRETTY_NAME=")
			if !ok {
				continue
			}
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			} else {
				v = strings.Trim(v, `"'`)
			}
			return oneLine([]byte(v))
		}
	}
	return ""
}

// cpuInfo returns the first "model name" and the number of "processor"
// entries in /proc/cpuinfo.
func cpuInfo() (model string, processors int) {
	sc := bufio.NewScanner(bytes.NewReader(readLimited("/proc/cpuinfo")))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "processor":
			processors++
		case "model name":
			if model == "" {
				model = oneLine([]byte(value))
			}
		}
	}
	return model, processors
}

// memTotal returns MemTotal from /proc/meminfo in bytes.
func memTotal() string {
	sc := bufio.NewScanner(bytes.NewReader(readLimited("/proc/meminfo")))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return ""
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || kb == 0 {
			return ""
		}
		return strconv.FormatUint(kb*1024, 10)
	}
	return ""
}
