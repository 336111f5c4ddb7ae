package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// File is a parsed, validated flameox.toml.
type File struct {
	SchemaVersion int
	Workloads     map[string]*Workload
	Experiments   map[string]*Experiment
	// Path is the file read ("" for a project without flameox.toml).
	Path string

	root string // the project root, when loaded by Load
}

// rawFile and its parts mirror the TOML exactly; pointers tell "absent"
// (take the default) from "given".
type rawFile struct {
	SchemaVersion *int                      `toml:"schema_version"`
	Workloads     map[string]*rawWorkload   `toml:"workloads"`
	Experiments   map[string]*rawExperiment `toml:"experiments"`
}

type rawWorkload struct {
	Description    *string                  `toml:"description"`
	Argv           []string                 `toml:"argv"`
	Cwd            *string                  `toml:"cwd"`
	TimeoutSeconds *float64                 `toml:"timeout_seconds"`
	Env            map[string]string        `toml:"env"`
	AllowEnv       []string                 `toml:"allow_env"`
	Options        map[string]string        `toml:"options"`
	Parameters     map[string]*rawParameter `toml:"parameters"`
	Oracle         *rawOracle               `toml:"oracle"`
}

// rawParameter is one `parameters` entry as written: an array of choices
// or a range table. UnmarshalTOML keeps the decoded value as it is, for
// buildParameter to validate; the fields are never set and only tell the
// strict decoder which keys a range table may have (any other key, or a
// case variant, is refused naming it).
type rawParameter struct {
	Min     any `toml:"min"`
	Max     any `toml:"max"`
	Default any `toml:"default"`

	value any
}

// UnmarshalTOML implements toml.Unmarshaler.
func (p *rawParameter) UnmarshalTOML(v any) error {
	p.value = v
	return nil
}

type rawOracle struct {
	Strength  *string  `toml:"strength"`
	Argv      []string `toml:"argv"`
	Tolerance *float64 `toml:"tolerance"`
}

var (
	nameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`) })
	paramRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]*$`) })
	envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// Load reads <projectRoot>/flameox.toml. A missing file is an empty File:
// the project simply declares no workloads.
func Load(projectRoot string) (*File, error) {
	path := filepath.Join(projectRoot, FileName)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{SchemaVersion: SchemaVersion, Workloads: map[string]*Workload{}, Experiments: map[string]*Experiment{}, root: projectRoot}, nil
	}
	if err == nil && !st.Mode().IsRegular() {
		return nil, config.Invalid(path, "%s is not a regular file", path)
	}
	if err == nil && st.Size() > MaxFileBytes {
		return nil, config.Invalid(path, "%s is larger than %d bytes", path, MaxFileBytes)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", path).With(fault.DetailKind, fault.KindConfig).With("file", path)
	}
	f, err := Parse(string(src), path)
	if f != nil {
		f.root = projectRoot
	}
	return f, err
}

// Parse decodes and validates flameox.toml text; path names it in errors.
func Parse(src, path string) (*File, error) {
	if len(src) > MaxFileBytes {
		return nil, config.Invalid(path, "%s is larger than %d bytes", path, MaxFileBytes)
	}
	if strings.IndexByte(src, 0) >= 0 {
		return nil, config.Invalid(path, "%s contains a NUL byte", path)
	}
	var raw rawFile
	if _, err := config.DecodeStrict(src, &raw, path); err != nil {
		return nil, err
	}
	return build(&raw, path)
}

// build validates a decoded file. Names are visited in sorted order so the
// first error reported is always the same one.
func build(raw *rawFile, path string) (*File, error) {
	if raw.SchemaVersion == nil {
		return nil, invalid(path, "schema_version", "is required (schema_version = %d)", SchemaVersion)
	}
	if *raw.SchemaVersion != SchemaVersion {
		return nil, invalid(path, "schema_version", "%d is not supported (this flameox reads %d)", *raw.SchemaVersion, SchemaVersion)
	}
	if len(raw.Workloads) > MaxWorkloads {
		return nil, invalid(path, "workloads", "declares %d workloads; at most %d are allowed", len(raw.Workloads), MaxWorkloads)
	}
	if len(raw.Experiments) > MaxExperiments {
		return nil, invalid(path, "experiments", "declares %d experiments; at most %d are allowed", len(raw.Experiments), MaxExperiments)
	}
	f := &File{SchemaVersion: SchemaVersion, Workloads: map[string]*Workload{}, Experiments: map[string]*Experiment{}, Path: path}
	for _, name := range sortedKeys(raw.Workloads) {
		w, err := buildWorkload(path, name, raw.Workloads[name])
		if err != nil {
			return nil, err
		}
		f.Workloads[name] = w
	}
	for _, name := range sortedKeys(raw.Experiments) {
		e, err := buildExperiment(path, name, raw.Experiments[name], f.Workloads)
		if err != nil {
			return nil, err
		}
		f.Experiments[name] = e
	}
	return f, nil
}

// Workload returns the named workload, or NOT_FOUND listing what exists;
// a name that is only proposed (proposal.go) is EXECUTION_REFUSED naming
// the command that adopts it.
func (f *File) Workload(name string) (*Workload, error) {
	if w, ok := f.Workloads[name]; ok {
		return w, nil
	}
	if hasProposal(f.root, name) {
		return nil, proposedOnly(name)
	}
	return nil, fault.New(fault.NotFound, "no workload %q is declared in %s", clip(name), FileName).
		With("workload", clip(name)).With("declared", strings.Join(f.Names(), ",")).
		FixSteps("List declared workloads with %s; workloads are added to "+FileName+" by a person.",
			fault.Step{Command: "flameox workload list", Tool: "list_workloads"})
}

// Experiment returns the named experiment or NOT_FOUND.
func (f *File) Experiment(name string) (*Experiment, error) {
	if e, ok := f.Experiments[name]; ok {
		return e, nil
	}
	return nil, fault.New(fault.NotFound, "no experiment %q is declared in %s", clip(name), FileName).
		With("experiment", clip(name)).With("declared", strings.Join(sortedKeys(f.Experiments), ","))
}

// Names returns the workload names, sorted.
func (f *File) Names() []string { return sortedKeys(f.Workloads) }

// invalid is a WORKSPACE_INVALID (exit 2) error naming the file and key path.
func invalid(path, key, format string, args ...any) *fault.Error {
	return config.Invalid(path, "%s: %s %s", path, key, fmt.Sprintf(format, args...)).With("keys", key)
}

// checkName validates a user-chosen table name.
func checkName(path, key, name string, re *regexp.Regexp) error {
	if len(name) > MaxNameBytes || !re.MatchString(name) {
		return invalid(path, key, "is not a valid name (pattern %s, at most %d bytes)", re, MaxNameBytes)
	}
	return nil
}

// checkText refuses NUL bytes, invalid UTF-8 and oversized strings in configuration text.
func checkText(path, key, s string, max int) error {
	if strings.IndexByte(s, 0) >= 0 {
		return invalid(path, key, "contains a NUL byte")
	}
	if !utf8.ValidString(s) {
		return invalid(path, key, "is not valid UTF-8")
	}
	if len(s) > max {
		return invalid(path, key, "is longer than %d bytes", max)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clip bounds user-supplied text quoted in messages.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
