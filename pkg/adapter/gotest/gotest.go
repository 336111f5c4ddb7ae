package gotest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
)

// Name of the adapter.
const Name = "gotest"

// Artifact kinds this adapter declares (pkg/artifact's closed set).
const (
	KindSampleProfile = "sample_profile"
	KindMemoryProfile = "memory_profile"
	KindCoverage      = "execution_coverage"
	KindBenchmark     = "benchmark_samples"
	KindTestEvents    = "test_events"
	KindProcessOutput = "process_output"
)

// Adapter is the gotest adapter.
type Adapter struct {
	// LookPath finds the go command (default exec.LookPath).
	LookPath func(string) (string, error)
	// Output runs `go env GOVERSION` (default broker.Output).
	Output func(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error)
}

// New returns the gotest adapter.
func New() *Adapter { return &Adapter{LookPath: exec.LookPath, Output: broker.Output} }

func (*Adapter) Name() string { return Name }

// Extractors returns the extractors that read what this adapter captures:
// go test's output (benchmarks, test counts) and its coverage profile.
func (*Adapter) Extractors() []adapter.Extractor {
	return []adapter.Extractor{&BenchExtractor{}, &CoverExtractor{}}
}

// Probe finds `go` on PATH and asks it for its version (`go env GOVERSION`
// with a minimal environment and GOTOOLCHAIN=local, so no toolchain is
// downloaded). No workload runs.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	look, out := a.LookPath, a.Output
	if look == nil {
		look = exec.LookPath
	}
	if out == nil {
		out = broker.Output
	}
	exe, err := look("go")
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		c.Limitations = append(c.Limitations, "the go command was not found on PATH")
		c.Remediation = append(c.Remediation, "install Go 1.26+ and put it on PATH")
		return c
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOTOOLCHAIN=local"}
	b, err := out(ctx, []string{exe, "env", "GOVERSION"}, "", env, 4096, 5*time.Second)
	version := strings.TrimSpace(string(b))
	st := adapter.Available
	if err != nil || !strings.HasPrefix(version, "go") {
		st, version = adapter.Degraded, ""
	}
	c := adapter.NewCapability(Name, st)
	c.Executable, c.Version = exe, version
	c.Modes = []string{"bench", "test", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "coverprofile", "json"}
	c.Facts["go"] = exe
	if version != "" {
		c.Facts["goversion"] = version
	} else {
		c.Limitations = append(c.Limitations, "`go env GOVERSION` failed, so the Go version is unknown")
		c.Remediation = append(c.Remediation, "check that `"+exe+" env GOVERSION` works (install Go 1.26+ and put it on PATH)")
	}
	c.Limitations = append(c.Limitations,
		"profiles and coverage are off unless the workload's options ask for them (profiles = \"cpu,mem\", coverage = \"true\"); both slow the code under test, so benchmark timings of such a capture are perturbed",
		"profiles need a single package per workload")
	return c
}

var (
	coverModeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mode: (set|count|atomic)$`) })
	coverLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.+:[0-9]+\.[0-9]+,[0-9]+\.[0-9]+ [0-9]+ [0-9]+$`) })
)

// Validate checks pprof profiles by their gzip/protobuf header and a Go
// coverage profile by its "mode:" line and the shape of its first blocks.
// Other kinds are not this adapter's to judge.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	switch decl.Kind {
	case KindSampleProfile, KindMemoryProfile:
		f, err := os.Open(path)
		if err != nil {
			return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", decl.RelPath)
		}
		defer f.Close()
		head, _ := io.ReadAll(io.LimitReader(f, 64<<10))
		if profile.Detect(head) != profile.FormatPprof {
			return fault.New(fault.ArtifactParseFailed, "%s is not a pprof profile (no gzip/protobuf header)", decl.RelPath)
		}
	case KindCoverage:
		f, err := os.Open(path)
		if err != nil {
			return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", decl.RelPath)
		}
		defer f.Close()
		sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		n := 0
		for ; n < 6 && sc.Scan(); n++ {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if n == 0 && !coverModeRE().MatchString(line) {
				return fault.New(fault.ArtifactParseFailed, "%s is not a Go coverage profile: the first line is not `mode: set|count|atomic`", decl.RelPath)
			}
			if n > 0 && !coverLineRE().MatchString(line) {
				return fault.New(fault.ArtifactParseFailed, "%s line %d is not a Go coverage block (file:l.c,l.c stmts count)", decl.RelPath, n+1)
			}
		}
		if n == 0 {
			return fault.New(fault.ArtifactParseFailed, "%s is empty or unreadable, not a Go coverage profile", decl.RelPath)
		}
	}
	return nil
}

// Viewer opens profiles in `go tool pprof`'s web UI, coverage as HTML, and
// benchmark text with benchstat.
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	switch kind {
	case KindSampleProfile, KindMemoryProfile:
		return &adapter.Viewer{Tool: "go tool pprof", Argv: []string{"go", "tool", "pprof", "-http=localhost:0", path},
			Note: "serves the pprof web UI on a free local port"}, nil
	case KindCoverage:
		return &adapter.Viewer{Tool: "go tool cover", Argv: []string{"go", "tool", "cover", "-html=" + path},
			Note: "run it from the module the profile was captured in, so source files resolve"}, nil
	case KindBenchmark:
		return &adapter.Viewer{Tool: "benchstat", Argv: []string{"benchstat", path},
			Note: "install with `go install golang.org/x/perf/cmd/benchstat@latest`"}, nil
	}
	return &adapter.Viewer{Tool: "less", Argv: []string{"less", path},
		Note: "a gotest capture's stdout is the `go test -json` (test2json) event stream; control characters are escaped by less"}, nil
}
