package gotest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
)

const pprofFixture = "../../profile/testdata/google-pprof__sample.cpu.pb.gz"

// TestConformance runs the shared suite. Its plan check uses a /bin/true
// workload, which gotest refuses (so the suite skips it); contract checks
// the same properties on a go test workload, with the suffix rule
// replaced by "the workload argv is a subsequence and only the adapter's
// flags were inserted".
func TestConformance(t *testing.T) {
	cover := filepath.Join(t.TempDir(), "cover.out")
	os.WriteFile(cover, []byte("mode: set\nexample.com/x/a.go:3.14,5.2 1 1\n"), 0o644)
	adaptertest.RunWith(t, New(), adaptertest.Config{Workload: []string{"go", "test", "-run", "a b; $(x)", "."}},
		adaptertest.Fixture{Path: pprofFixture, Decl: adapter.ArtifactDecl{Kind: KindSampleProfile}},
		adaptertest.Fixture{Path: cover, Decl: adapter.ArtifactDecl{Kind: KindCoverage}})
	t.Run("contract", contract)
}

func contract(t *testing.T) {
	project, out := t.TempDir(), t.TempDir()
	workload := []string{"/usr/local/go/bin/go", "test", "-run", "a b; $(x)", "-bench", ".", "./scan"}
	p, err := New().Plan(adapter.PlanRequest{ProjectRoot: project, OutputDir: out, Argv: workload,
		Options: map[string]string{"profiles": "cpu,mem,block,mutex", "coverage": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{project, out} {
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("Plan created files in %s: %v", dir, ents)
		}
	}
	if rest := inserted(p.Argv, workload); rest == nil {
		t.Errorf("the workload argv is not a subsequence of %q", p.Argv)
	} else {
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") || (strings.Contains(a, "=") && !strings.Contains(a, out)) {
				t.Errorf("inserted %q is not an adapter flag writing to the output directory", a)
			}
		}
	}
	seen := map[string]bool{}
	garbage := filepath.Join(t.TempDir(), "garbage")
	os.WriteFile(garbage, []byte("\x00\x01not any profile format\xff\xfe"), 0o644)
	for _, d := range p.Artifacts {
		if d.RelPath == "" || filepath.IsAbs(d.RelPath) || filepath.Clean(d.RelPath) != d.RelPath || strings.HasPrefix(d.RelPath, "..") || seen[d.RelPath] {
			t.Errorf("artifact path %q is not a clean, unique relative path", d.RelPath)
		}
		seen[d.RelPath] = true
		if d.Kind == "" || d.Role == "" || d.MediaType == "" {
			t.Errorf("artifact %q lacks kind, role or media type", d.RelPath)
		}
		if d.Required && New().Validate(garbage, d) == nil {
			t.Errorf("garbage passes validation as %s", d.Kind)
		}
	}
	if p.Permissions == nil || p.Limitations == nil || p.Env == nil || p.Steps == nil {
		t.Error("plan lists must be non-nil")
	}
	head, _ := os.ReadFile(garbage)
	if (&BenchExtractor{}).Accepts(adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:x", Path: garbage, Head: head}) {
		t.Error("the extractor accepts garbage")
	}
}

// inserted returns the elements of full that are not the workload argv,
// or nil when workload is not a subsequence of full.
func inserted(full, workload []string) []string {
	rest, i := []string{}, 0
	for _, a := range full {
		if i < len(workload) && a == workload[i] {
			i++
		} else {
			rest = append(rest, a)
		}
	}
	if i != len(workload) {
		return nil
	}
	return rest
}

func TestProbe(t *testing.T) {
	c := New().Probe(context.Background())
	if c.Status != adapter.Available || !strings.HasPrefix(c.Version, "go1.") || c.Executable == "" {
		t.Fatalf("go is installed, probe says %+v", c)
	}
	a := &Adapter{LookPath: func(string) (string, error) { return "", errors.New("not found") }}
	if c := a.Probe(context.Background()); c.Status != adapter.Unavailable || !strings.Contains(strings.Join(c.Remediation, " "), "install Go 1.26+") {
		t.Fatalf("without go: %+v", c)
	}
	a = &Adapter{LookPath: func(string) (string, error) { return "/bin/go", nil },
		Output: func(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error) {
			if strings.Join(argv, " ") != "/bin/go env GOVERSION" || timeout != 5*time.Second || !contains(env, "GOTOOLCHAIN=local") || len(env) != 3 {
				t.Errorf("probe ran %q with %q", argv, env)
			}
			return nil, errors.New("boom")
		}}
	if c := a.Probe(context.Background()); c.Status != adapter.Degraded || len(c.Remediation) == 0 {
		t.Fatalf("broken go: %+v", c)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestValidate(t *testing.T) {
	a, dir := New(), t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	cov := adapter.ArtifactDecl{RelPath: "cover.out", Kind: KindCoverage}
	prof := adapter.ArtifactDecl{RelPath: "cpu.pprof", Kind: KindSampleProfile}
	for _, tt := range []struct {
		path string
		decl adapter.ArtifactDecl
		ok   bool
	}{
		{pprofFixture, prof, true},
		{pprofFixture, adapter.ArtifactDecl{RelPath: "mem.pprof", Kind: KindMemoryProfile}, true},
		{write("cov", "mode: atomic\n"), cov, true},
		{write("cov2", "mode: count\na/b.go:1.2,3.4 5 6\n"), cov, true},
		{write("bad", "mode: sometimes\n"), cov, false},
		{write("bad2", "mode: set\nnot a block\n"), cov, false},
		{write("empty", ""), cov, false},
		{write("text", "mode: set\n"), prof, false},
		{filepath.Join(dir, "missing"), prof, false},
		{write("any", "whatever"), adapter.ArtifactDecl{Kind: "collector_metadata"}, true},
	} {
		if err := a.Validate(tt.path, tt.decl); (err == nil) != tt.ok {
			t.Errorf("Validate(%s as %s) = %v", filepath.Base(tt.path), tt.decl.Kind, err)
		}
	}
}

func TestViewer(t *testing.T) {
	for kind, want := range map[string]string{
		KindSampleProfile: "go tool pprof -http=localhost:0 /p", KindMemoryProfile: "go tool pprof -http=localhost:0 /p",
		KindCoverage: "go tool cover -html=/p", KindBenchmark: "benchstat /p", KindProcessOutput: "less /p",
	} {
		v, err := New().Viewer("/p", kind)
		if err != nil || strings.Join(v.Argv, " ") != want {
			t.Errorf("viewer for %s: %+v %v", kind, v, err)
		}
	}
}
