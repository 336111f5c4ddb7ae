// Package config holds the workspace policy (`.diagnostics/config.toml`) and
// the strict TOML decoding every flameox configuration file uses.
//
// Policy is explicit and strict: unknown keys fail and are named, so a typo
// never silently falls back to a default. Keys that are absent take the
// documented defaults below; docs/configuration.md lists them.
package config

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
)

// SchemaVersion is the config.toml format version this build reads.
const SchemaVersion = 1

// Config is the decoded workspace policy.
type Config struct {
	SchemaVersion int       `toml:"schema_version"`
	Capture       Capture   `toml:"capture"`
	Execution     Execution `toml:"execution"`
	Limits        Limits    `toml:"limits"`
	Storage       Storage   `toml:"storage"`
	Retention     Retention `toml:"retention"`
	Fleet         Fleet     `toml:"fleet"`
}

// Limits bound what decoding an artifact allocates (import, capture and
// MCP import_artifact alike): a few MB of gzip can inflate into a GiB, and
// a GiB of two-byte protobuf fields into hundreds of millions of decoded
// objects, so the byte cap of [capture] alone does not bound memory. An
// artifact over any of them fails with ARTIFACT_TOO_LARGE naming the key
// (docs/configuration.md says what each counts in each format). The type
// is the parser's own, so the keys, defaults and checks cannot drift.
type Limits = profile.Limits

// DefaultLimits are the [limits] defaults.
func DefaultLimits() Limits { return profile.DefaultLimits() }

// Execution is the policy for running workloads through the broker.
type Execution struct {
	// ChildEnvironmentAllowlist names the parent variables a workload
	// inherits (a trailing * matches a prefix). Secret-looking names are
	// dropped even when listed, unless a workload's allow_env names them.
	ChildEnvironmentAllowlist []string `toml:"child_environment_allowlist"`
	// Containment: "never", "preferred", "required" or "required_for_mcp"
	// (Bubblewrap; the run records what actually happened).
	Containment string `toml:"containment"`
	// Network inside containment: "deny_when_contained" or "allow".
	Network string `toml:"network"`
	// GraceSeconds is the time between SIGTERM and SIGKILL on timeout or
	// cancellation.
	GraceSeconds float64 `toml:"grace_seconds"`
	// MaxOutputBytes bounds each of a workload's stdout and stderr.
	MaxOutputBytes int64 `toml:"max_output_bytes"`
}

// Capture limits what import and capture accept.
type Capture struct {
	// MaxArtifactBytes bounds any single artifact (import or capture).
	MaxArtifactBytes int64 `toml:"max_artifact_bytes"`
	// DefaultSensitivity applies to imports that do not name one.
	DefaultSensitivity string `toml:"default_sensitivity"`
	// OutputTailBytes bounds each of the stdout and stderr tails a failed
	// capture's result carries (0: none).
	OutputTailBytes int64 `toml:"output_tail_bytes"`
}

// MaxOutputTailBytes is the largest capture.output_tail_bytes: a tail is
// for reading in a result; get_run_output and `flameox runs output` page
// the whole stream.
const MaxOutputTailBytes = 64 << 10

// Storage holds waits and budgets of the workspace itself.
type Storage struct {
	// LockTimeoutSeconds bounds every wait for a workspace lock.
	LockTimeoutSeconds float64 `toml:"lock_timeout_seconds"`
	// MaxWorkspaceBytes bounds the stored bytes of the workspace (objects,
	// evidence, manifests, commits, runs, records; not trash, quarantine,
	// staging, caches or the catalog): an import or capture that would
	// store a new object beyond it fails with STORAGE_FULL. 0: no bound.
	MaxWorkspaceBytes int64 `toml:"max_workspace_bytes"`
}

// Retention is what `flameox gc` keeps (docs/retention.md).
type Retention struct {
	// KeepCommits is how many commits before HEAD stay roots: their whole
	// inventories are kept.
	KeepCommits int `toml:"keep_commits"`
	// MinAgeSeconds: gc never collects anything younger (except staging
	// whose owner is provably gone).
	MinAgeSeconds float64 `toml:"min_age_seconds"`
	// PurgeAfterDays is the default of `gc purge --older-than`.
	PurgeAfterDays float64 `toml:"purge_after_days"`
}

// Fleet is what an agent may read of other corpora (docs/history.md).
type Fleet struct {
	// Exports are absolute directories, outside the project, holding
	// `flameox export corpus` output that MCP query_fleet may read; the
	// project itself is always allowed. The CLI reads any directory its
	// user names.
	Exports []string `toml:"exports"`
}

// MinAge returns retention.min_age_seconds as a duration.
func (r Retention) MinAge() time.Duration {
	return time.Duration(r.MinAgeSeconds * float64(time.Second))
}

// PurgeAfter returns retention.purge_after_days as a duration.
func (r Retention) PurgeAfter() time.Duration {
	return time.Duration(r.PurgeAfterDays * 24 * float64(time.Hour))
}

// Default returns the documented defaults.
func Default() Config {
	return Config{
		SchemaVersion: SchemaVersion,
		Capture: Capture{
			MaxArtifactBytes:   4 << 30,
			DefaultSensitivity: "internal",
			OutputTailBytes:    2048,
		},
		Execution: Execution{
			ChildEnvironmentAllowlist: []string{"PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "TERM",
				"GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "CGO_ENABLED",
				"PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_VISIBLE_DEVICES"},
			Containment:    "required_for_mcp",
			Network:        "deny_when_contained",
			GraceSeconds:   2,
			MaxOutputBytes: 16 << 20,
		},
		Limits:    DefaultLimits(),
		Storage:   Storage{LockTimeoutSeconds: 30},
		Retention: Retention{KeepCommits: 100, MinAgeSeconds: 86400, PurgeAfterDays: 30},
		Fleet:     Fleet{Exports: []string{}},
	}
}

// DefaultTOML is the config.toml `flameox init` writes: every key with its
// default and a comment saying what it does.
const DefaultTOML = `# flameox workspace policy. Unknown keys are an error; see docs/configuration.md.
schema_version = 1

[capture]
# Largest artifact accepted by import or capture, in bytes (4 GiB).
max_artifact_bytes = 4294967296
# Sensitivity of imported artifacts when --sensitivity is not given:
# "normal", "internal" or "sensitive".
default_sensitivity = "internal"
# Bytes of each of stdout and stderr (the stored, redacted output) that a
# failed, timed-out or cancelled capture's result carries as its tail,
# escaped; 0 for none, at most 65536. flameox runs output pages it all.
output_tail_bytes = 2048

[execution]
# Parent environment variables a workload inherits ("LC_*" matches a
# prefix). Names that look like secrets (TOKEN, SECRET, PASSWORD, KEY,
# COOKIE, CREDENTIAL, AUTH) and loader variables (LD_PRELOAD, PYTHONPATH, ...)
# are dropped even when listed, unless the workload's allow_env names them.
child_environment_allowlist = ["PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "TERM", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "CGO_ENABLED", "PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_VISIBLE_DEVICES"]
# Bubblewrap containment of workloads: "never", "preferred", "required" or
# "required_for_mcp" (captures started through MCP must be contained).
containment = "required_for_mcp"
# Network inside containment: "deny_when_contained" or "allow".
network = "deny_when_contained"
# Seconds between SIGTERM and SIGKILL when a workload times out or is cancelled.
grace_seconds = 2
# Bytes kept of each of a workload's stdout and stderr (16 MiB).
max_output_bytes = 16777216

[limits]
# What decoding one artifact may allocate (import, capture and MCP alike);
# over any of them the artifact fails with ARTIFACT_TOO_LARGE, naming the
# key to raise. docs/configuration.md says what each counts per format.
# Bytes after gunzip (1 GiB).
max_decompressed_bytes = 1073741824
# pprof string table entries and comments.
max_strings = 8388608
# Bytes of all names, files, modules and labels kept (512 MiB).
max_string_bytes = 536870912
# pprof locations and their lines; speedscope frames; distinct perf script
# callchain lines; distinct collapsed frame names.
max_locations = 4194304
# pprof functions; distinct function names of the text formats.
max_functions = 4194304
# pprof mappings; distinct perf script modules.
max_mappings = 1048576
# pprof samples; speedscope samples and profiles; collapsed lines; distinct
# perf script stacks.
max_samples = 4194304
# pprof sample types (and values in one sample); perf script events.
max_sample_types = 1024
# pprof sample labels, in all samples.
max_labels = 16777216
# Frames in one stack.
max_stack_depth = 65536
# Frames in all stacks together (and pprof sample values).
max_stack_frames = 134217728
# speedscope open/close events.
max_events = 8388608
# Nesting of JSON arrays and objects.
max_json_depth = 64

[storage]
# Longest wait for a workspace lock before WRITE_LOCK_TIMEOUT (exit 7).
lock_timeout_seconds = 30
# Largest stored size of the workspace in bytes (objects, evidence,
# manifests, commits, runs; not trash, quarantine, staging or caches): an
# import or capture beyond it fails with STORAGE_FULL. 0: no bound.
max_workspace_bytes = 0

[retention]
# HEAD and this many commits before it keep their whole inventories
# (docs/retention.md); older commits, and what only they need, are
# collected by flameox gc --apply unless evidence names them.
keep_commits = 100
# gc never collects anything younger than this (staging whose owner is
# provably gone excepted).
min_age_seconds = 86400
# Default of flameox gc purge --older-than, in days.
purge_after_days = 30

[fleet]
# Absolute directories outside the project with flameox export corpus
# output that an agent's query_fleet may read (read only). The project is
# always allowed; the CLI reads any directory named on its command line.
exports = []
`

// Load reads and validates a config file. A missing file is an error: the
// workspace is incomplete, never silently defaulted.
func Load(path string) (Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", path).With(fault.DetailKind, fault.KindConfig).With("file", path).
			Fix("Run `flameox init` to restore the default configuration.")
	}
	return Parse(string(src), path)
}

// Parse decodes and validates config text.
func Parse(src, file string) (Config, error) {
	cfg := Default()
	cfg.SchemaVersion = 0
	md, err := DecodeStrict(src, &cfg, file)
	if err != nil {
		return Config{}, err
	}
	if !md.IsDefined("schema_version") {
		return Config{}, Invalid(file, "%s: schema_version is required", file).With("keys", "schema_version")
	}
	return cfg, cfg.Validate(file)
}

// Validate checks ranges and enumerations.
func (c Config) Validate(file string) error {
	if c.SchemaVersion != SchemaVersion {
		return Invalid(file, "%s: schema_version %d is not supported (this flameox reads %d)", file, c.SchemaVersion, SchemaVersion).With("keys", "schema_version")
	}
	if c.Capture.MaxArtifactBytes <= 0 {
		return Invalid(file, "%s: capture.max_artifact_bytes must be positive", file).With("keys", "capture.max_artifact_bytes")
	}
	switch c.Capture.DefaultSensitivity {
	case "normal", "internal", "sensitive":
	default:
		return Invalid(file, "%s: capture.default_sensitivity must be normal, internal or sensitive, not %q", file, c.Capture.DefaultSensitivity).With("keys", "capture.default_sensitivity")
	}
	if c.Capture.OutputTailBytes < 0 || c.Capture.OutputTailBytes > MaxOutputTailBytes {
		return Invalid(file, "%s: capture.output_tail_bytes must be in [0, %d]", file, MaxOutputTailBytes).With("keys", "capture.output_tail_bytes")
	}
	switch c.Execution.Containment {
	case "never", "preferred", "required", "required_for_mcp":
	default:
		return Invalid(file, "%s: execution.containment must be never, preferred, required or required_for_mcp, not %q", file, c.Execution.Containment).With("keys", "execution.containment")
	}
	switch c.Execution.Network {
	case "deny_when_contained", "allow":
	default:
		return Invalid(file, "%s: execution.network must be deny_when_contained or allow, not %q", file, c.Execution.Network).With("keys", "execution.network")
	}
	if c.Execution.GraceSeconds <= 0 || c.Execution.GraceSeconds > 600 {
		return Invalid(file, "%s: execution.grace_seconds must be in (0, 600]", file).With("keys", "execution.grace_seconds")
	}
	if c.Execution.MaxOutputBytes <= 0 {
		return Invalid(file, "%s: execution.max_output_bytes must be positive", file).With("keys", "execution.max_output_bytes")
	}
	for _, k := range c.Limits.Each() {
		if k.Value <= 0 {
			return Invalid(file, "%s: limits.%s must be positive", file, k.Name).With("keys", "limits."+k.Name)
		}
	}
	if c.Storage.LockTimeoutSeconds <= 0 || c.Storage.LockTimeoutSeconds > 3600 {
		return Invalid(file, "%s: storage.lock_timeout_seconds must be in (0, 3600]", file).With("keys", "storage.lock_timeout_seconds")
	}
	if c.Storage.MaxWorkspaceBytes < 0 {
		return Invalid(file, "%s: storage.max_workspace_bytes must be 0 (no bound) or positive", file).With("keys", "storage.max_workspace_bytes")
	}
	if c.Retention.KeepCommits < 0 {
		return Invalid(file, "%s: retention.keep_commits must not be negative", file).With("keys", "retention.keep_commits")
	}
	if c.Retention.MinAgeSeconds < 0 {
		return Invalid(file, "%s: retention.min_age_seconds must not be negative", file).With("keys", "retention.min_age_seconds")
	}
	if c.Retention.PurgeAfterDays < 0 {
		return Invalid(file, "%s: retention.purge_after_days must not be negative", file).With("keys", "retention.purge_after_days")
	}
	for _, d := range c.Fleet.Exports {
		if !filepath.IsAbs(d) || strings.ContainsRune(d, 0) || filepath.Clean(d) == "/" {
			return Invalid(file, "%s: fleet.exports holds %q; each must be an absolute directory other than /", file, d).With("keys", "fleet.exports")
		}
	}
	return nil
}

// LockTimeout returns the lock wait as a duration.
func (c Config) LockTimeout() time.Duration {
	return time.Duration(c.Storage.LockTimeoutSeconds * float64(time.Second))
}
