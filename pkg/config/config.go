// Package config holds the workspace policy (`.diagnostics/config.toml`) and
// the strict TOML decoding every flameox configuration file uses.
//
// Policy is explicit and strict: unknown keys fail and are named, so a typo
// never silently falls back to a default. Keys that are absent take the
// documented defaults below; docs/configuration.md lists them.
package config

import (
	"os"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// SchemaVersion is the config.toml format version this build reads.
const SchemaVersion = 1

// Config is the decoded workspace policy.
type Config struct {
	SchemaVersion int     `toml:"schema_version"`
	Capture       Capture `toml:"capture"`
	Storage       Storage `toml:"storage"`
}

// Capture limits what import and capture accept.
type Capture struct {
	// MaxArtifactBytes bounds any single artifact (import or capture).
	MaxArtifactBytes int64 `toml:"max_artifact_bytes"`
	// DefaultSensitivity applies to imports that do not name one.
	DefaultSensitivity string `toml:"default_sensitivity"`
}

// Storage holds waits and budgets of the workspace itself.
type Storage struct {
	// LockTimeoutSeconds bounds every wait for a workspace lock.
	LockTimeoutSeconds float64 `toml:"lock_timeout_seconds"`
}

// Default returns the documented defaults.
func Default() Config {
	return Config{
		SchemaVersion: SchemaVersion,
		Capture: Capture{
			MaxArtifactBytes:   4 << 30,
			DefaultSensitivity: "internal",
		},
		Storage: Storage{LockTimeoutSeconds: 30},
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

[storage]
# Longest wait for a workspace lock before WRITE_LOCK_TIMEOUT (exit 7).
lock_timeout_seconds = 30
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
	if c.Storage.LockTimeoutSeconds <= 0 || c.Storage.LockTimeoutSeconds > 3600 {
		return Invalid(file, "%s: storage.lock_timeout_seconds must be in (0, 3600]", file).With("keys", "storage.lock_timeout_seconds")
	}
	return nil
}

// LockTimeout returns the lock wait as a duration.
func (c Config) LockTimeout() time.Duration {
	return time.Duration(c.Storage.LockTimeoutSeconds * float64(time.Second))
}
