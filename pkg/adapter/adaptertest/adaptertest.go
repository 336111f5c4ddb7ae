package adaptertest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
)

// Fixture is a real file an adapter must accept.
type Fixture struct {
	Path string
	Decl adapter.ArtifactDecl
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// Config adapts the suite to an adapter.
type Config struct {
	// Workload is a workload argv the adapter accepts (default: a generic
	// program with shell metacharacters in its arguments).
	Workload []string
}

// Run checks a against the adapter contract with a generic workload.
func Run(t *testing.T, a adapter.Adapter, fixtures ...Fixture) {
	t.Helper()
	RunWith(t, a, Config{}, fixtures...)
}

// RunWith checks a against the adapter contract.
func RunWith(t *testing.T, a adapter.Adapter, cfg Config, fixtures ...Fixture) {
	t.Helper()
	if cfg.Workload == nil {
		cfg.Workload = []string{"/bin/true", "--flag", "a b; $(x)"}
	}
	if !namePattern.MatchString(a.Name()) {
		t.Errorf("adapter name %q is not [a-z0-9_.-]", a.Name())
	}
	t.Run("probe", func(t *testing.T) { checkCapability(t, a, a.Probe(context.Background())) })
	if wp, ok := a.(adapter.WorkloadProber); ok {
		t.Run("probe-workload", func(t *testing.T) { checkCapability(t, a, wp.ProbeWorkload(context.Background(), cfg.Workload)) })
	}
	t.Run("plan", func(t *testing.T) { plan(t, a, cfg.Workload) })
	if pr, ok := a.(adapter.Preparer); ok {
		t.Run("prepare", func(t *testing.T) { prepare(t, a, pr, cfg.Workload) })
	}
	t.Run("garbage", func(t *testing.T) { garbage(t, a) })
	t.Run("viewer", func(t *testing.T) {
		v, err := a.Viewer("/nonexistent/payload.bin", "collector_metadata")
		if err == nil && (v == nil || len(v.Argv) == 0 || !strings.Contains(strings.Join(v.Argv, " "), "/nonexistent/payload.bin")) {
			t.Errorf("viewer plan %+v does not open the artifact", v)
		}
	})
	for _, f := range fixtures {
		t.Run("fixture/"+filepath.Base(f.Path), func(t *testing.T) {
			if err := a.Validate(f.Path, f.Decl); err != nil {
				t.Errorf("a real %s file fails validation: %v", f.Decl.Kind, err)
			}
		})
	}
}

func checkCapability(t *testing.T, a adapter.Adapter, c adapter.Capability) {
	valid := false
	for _, s := range adapter.Statuses() {
		valid = valid || c.Status == s
	}
	if !valid {
		t.Fatalf("status %q is not one of %v", c.Status, adapter.Statuses())
	}
	if c.Adapter != a.Name() {
		t.Errorf("capability names %q, adapter is %q", c.Adapter, a.Name())
	}
	if c.Modes == nil || c.Limitations == nil || c.Remediation == nil || c.Facts == nil {
		t.Error("capability lists and maps must be non-nil (they are MCP output)")
	}
	if c.Status != adapter.Available && c.Status != adapter.UnsupportedPlatform && len(c.Remediation) == 0 {
		t.Errorf("status %s without a remediation", c.Status)
	}
}

func plan(t *testing.T, a adapter.Adapter, workload []string) {
	project := t.TempDir()
	out := t.TempDir()
	p, err := a.Plan(adapter.PlanRequest{ProjectRoot: project, OutputDir: out, Argv: workload})
	if err != nil {
		t.Skipf("plan refused a generic workload: %v", err)
	}
	for _, dir := range []string{project, out} {
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("Plan created files in %s: %v", dir, ents)
		}
	}
	if !subsequence(workload, p.Argv) {
		t.Errorf("the plan does not keep the approved workload argv, in order and unchanged: %q", p.Argv)
	}
	for _, arg := range p.Argv {
		if strings.ContainsRune(arg, 0) {
			t.Errorf("argv element %q holds a NUL byte", arg)
		}
	}
	seen := map[string]bool{}
	decls := append([]adapter.ArtifactDecl{}, p.Artifacts...)
	for _, s := range p.Steps {
		if len(s.Argv) == 0 {
			t.Errorf("step %s has no argv", s.Name)
		}
		decls = append(decls, s.Produces)
	}
	for _, d := range decls {
		clean := filepath.Clean(d.RelPath)
		if d.RelPath == "" || filepath.IsAbs(d.RelPath) || clean != d.RelPath || strings.HasPrefix(clean, "..") {
			t.Errorf("artifact path %q is not a clean relative path", d.RelPath)
		}
		if seen[d.RelPath] {
			t.Errorf("artifact %q declared twice", d.RelPath)
		}
		seen[d.RelPath] = true
		if d.Kind == "" || d.Role == "" || d.MediaType == "" {
			t.Errorf("artifact %q lacks kind, role or media type", d.RelPath)
		}
	}
	if p.Permissions == nil || p.Limitations == nil || p.Env == nil {
		t.Error("plan lists must be non-nil")
	}
}

// prepare checks that an adapter.Preparer writes only inside the output
// directory, files the plan runs but does not declare as artifacts.
func prepare(t *testing.T, a adapter.Adapter, pr adapter.Preparer, workload []string) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := a.Plan(adapter.PlanRequest{ProjectRoot: t.TempDir(), OutputDir: out, Argv: workload})
	if err != nil {
		t.Skipf("plan refused a generic workload: %v", err)
	}
	if err := pr.Prepare(out); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("Prepare wrote beside the output directory: %v", ents)
	}
	declared := map[string]bool{}
	for _, d := range p.Artifacts {
		declared[filepath.Join(out, d.RelPath)] = true
	}
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && declared[path] {
			t.Errorf("Prepare wrote %s, a declared artifact", path)
		}
		return nil
	})
}

func garbage(t *testing.T, a adapter.Adapter) {
	path := filepath.Join(t.TempDir(), "garbage")
	os.WriteFile(path, []byte("\x00\x01not any profile format\xff\xfe"), 0o644)
	p, err := a.Plan(adapter.PlanRequest{ProjectRoot: t.TempDir(), OutputDir: t.TempDir(), Argv: []string{"/bin/true"}})
	if err == nil {
		for _, d := range p.Artifacts {
			if d.Required && a.Validate(path, d) == nil {
				t.Errorf("garbage passes validation as %s", d.Kind)
			}
		}
	}
	if e, ok := a.(adapter.Extractor); ok {
		head, _ := os.ReadFile(path)
		in := adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:x", Path: path, Head: head}
		if e.Accepts(in) {
			t.Error("the extractor accepts garbage")
		}
	}
}

// subsequence reports whether every element of want appears in got, in
// order (a collector may wrap the workload, as perf does, or insert flags
// into it, as go test does, but never drop or change an argument).
func subsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
