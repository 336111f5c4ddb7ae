package pyspy

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
)

var (
	speedscopeDecl = adapter.ArtifactDecl{RelPath: SpeedscopeFile, Kind: "sample_profile", Role: "primary", MediaType: "application/json", Required: true}
	collapsedDecl  = adapter.ArtifactDecl{RelPath: CollapsedFile, Kind: "sample_profile", Role: "primary", MediaType: "text/plain", Required: true}
)

func TestConformance(t *testing.T) {
	adaptertest.RunWith(t, New(), adaptertest.Config{Workload: []string{"python3", "script.py", "a b; $(x)"}},
		adaptertest.Fixture{Path: "testdata/burn.speedscope.json", Decl: speedscopeDecl},
		adaptertest.Fixture{Path: "testdata/burn.collapsed.txt", Decl: collapsedDecl})
}

func fakeSystem(files map[string]string) System {
	return System{
		GOOS:     "linux",
		LookPath: func(string) (string, error) { return "/usr/local/bin/py-spy", nil },
		ReadFile: func(name string) ([]byte, error) {
			if v, ok := files[name]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		},
		Geteuid: func() int { return 1000 },
		Output:  func(context.Context, []string) ([]byte, error) { return []byte("py-spy 0.4.3\n"), nil },
	}
}

func TestGatherReadsInjectedFiles(t *testing.T) {
	sys := fakeSystem(map[string]string{PtraceScopeFile: "2\n", StatusFile: "CapEff:\t0000000000080000\nSeccomp:\t2\n"})
	h := Gather(context.Background(), sys)
	if h.PtraceScope != "2" || !h.CapSysPtrace || !h.CapsKnown || h.Seccomp != "2" || h.Version != "0.4.3" {
		t.Fatalf("host %+v", h)
	}
	c := Assess(h)
	if c.Status != adapter.Available || c.Facts["ptrace_scope"] != "2" || c.Facts["cap_sys_ptrace"] != "yes" ||
		!strings.Contains(strings.Join(c.Limitations, "\n"), "seccomp filter is active") {
		t.Fatalf("capability %+v", c)
	}
}

func TestAssessTable(t *testing.T) {
	cases := []struct {
		name   string
		h      Host
		status adapter.Status
		remedy string
	}{
		{"plan9", Host{GOOS: "plan9", PySpyPath: "/x"}, adapter.UnsupportedPlatform, ""},
		{"missing", Host{GOOS: "linux", PtraceScope: "1"}, adapter.Unavailable, "pip install py-spy"},
		{"no yama", Host{GOOS: "linux", PySpyPath: "/x", CapsKnown: true}, adapter.Available, ""},
		{"scope 0", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "0", CapsKnown: true}, adapter.Available, ""},
		{"scope 1 launches its child", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "1", CapsKnown: true}, adapter.Available, ""},
		{"scope 2 root without cap (docker)", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "2", CapsKnown: true}, adapter.PermissionRequired, "kernel.yama.ptrace_scope=1"},
		{"scope 2 with cap", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "2", CapsKnown: true, CapSysPtrace: true}, adapter.Available, ""},
		{"scope 2 root, caps unknown", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "2"}, adapter.Available, ""},
		{"scope 3", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "3", CapSysPtrace: true, CapsKnown: true}, adapter.PermissionRequired, "reboot"},
		{"scope garbage", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "x"}, adapter.Unknown, "not one of 0-3"},
		{"macos user", Host{GOOS: "darwin", PySpyPath: "/x", Euid: 501}, adapter.PermissionRequired, "sudo"},
		{"macos root", Host{GOOS: "darwin", PySpyPath: "/x"}, adapter.Available, ""},
		{"version fails", Host{GOOS: "linux", PySpyPath: "/x", PtraceScope: "1", VersionErr: errors.New("exit 1")}, adapter.Degraded, "reinstall"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Assess(tc.h)
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s: %+v", c.Status, tc.status, c)
			}
			if tc.remedy != "" && !strings.Contains(strings.Join(c.Remediation, "\n"), tc.remedy) {
				t.Errorf("remediation %q lacks %q", c.Remediation, tc.remedy)
			}
			if tc.h.GOOS == "linux" && tc.h.PySpyPath != "" && !strings.Contains(strings.Join(c.Limitations, "\n"), "not checked:") {
				t.Errorf("limitations do not say what was not checked: %q", c.Limitations)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	out := t.TempDir()
	a := &Adapter{Sys: fakeSystem(nil)}
	wl := []string{"/usr/bin/python3", "bench.py", "--n", "3"}
	plan := func(opts map[string]string) (*adapter.Plan, error) {
		return a.Plan(adapter.PlanRequest{ProjectRoot: out, OutputDir: out, Argv: wl, Options: opts})
	}
	p, err := plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"/usr/local/bin/py-spy", "record", "--format", "speedscope", "--output", filepath.Join(out, SpeedscopeFile), "--rate", "100", "--"}, wl...)
	if !slices.Equal(p.Argv, want) || p.Artifacts[0] != speedscopeDecl {
		t.Fatalf("argv %q artifacts %+v", p.Argv, p.Artifacts)
	}
	lim := strings.Join(p.Limitations, "\n")
	for _, s := range []string{"idle threads are not sampled (pass idle=true)", "pass native=true", "pass gil=true", "pass subprocesses=true", "100 times a second"} {
		if !strings.Contains(lim, s) {
			t.Errorf("limitations lack %q", s)
		}
	}
	p, err = plan(map[string]string{"native": "true", "gil": "true", "idle": "true", "subprocesses": "true", "format": "raw", "rate": "250"})
	if err != nil {
		t.Fatal(err)
	}
	want = append([]string{"/usr/local/bin/py-spy", "record", "--format", "raw", "--output", filepath.Join(out, CollapsedFile), "--rate", "250",
		"--native", "--gil", "--idle", "--subprocesses", "--"}, wl...)
	if !slices.Equal(p.Argv, want) || p.Artifacts[0] != collapsedDecl {
		t.Fatalf("argv %q artifacts %+v", p.Argv, p.Artifacts)
	}
	if lim := strings.Join(p.Limitations, "\n"); !strings.Contains(lim, "(--idle)") || strings.Contains(lim, "pass idle=true") {
		t.Errorf("enabled flags not recorded: %q", p.Limitations)
	}
	for _, bad := range []map[string]string{{"idle": "yes"}, {"format": "flamegraph"}, {"rate": "0"}, {"duration": "5"}} {
		if _, err := plan(bad); err == nil || !strings.Contains(err.Error(), "INVALID_CAPTURE_PLAN") {
			t.Errorf("options %v: %v", bad, err)
		}
	}
	for _, argv := range [][]string{{"/bin/true"}, {"/usr/bin/node", "x.py"}, {}} {
		if _, err := a.Plan(adapter.PlanRequest{OutputDir: out, Argv: argv}); err == nil || !strings.Contains(err.Error(), "INVALID_CAPTURE_PLAN") {
			t.Errorf("argv %q: %v", argv, err)
		}
	}
	for _, argv := range [][]string{{"/root/.pyenv/shims/python3.12", "-m", "x"}, {"./tool.py"}} {
		if !IsPython(argv) {
			t.Errorf("%q is Python", argv)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("Plan created files: %v", ents)
	}
}

func TestValidateAndViewer(t *testing.T) {
	a := New()
	if a.Validate("testdata/burn.speedscope.json", collapsedDecl) == nil || a.Validate("testdata/burn.collapsed.txt", speedscopeDecl) == nil {
		t.Error("a profile passed as the other format")
	}
	empty := filepath.Join(t.TempDir(), "empty.txt")
	os.WriteFile(empty, []byte(" 3\n"), 0o644)
	if a.Validate(empty, collapsedDecl) == nil {
		t.Error("a raw file with only empty stacks passed")
	}
	if a.Validate("testdata/burn.py", speedscopeDecl) == nil {
		t.Error("Python source passed as speedscope")
	}
	v, err := a.Viewer("testdata/burn.speedscope.json", "sample_profile")
	if err != nil || !slices.Equal(v.Argv, []string{"speedscope", "testdata/burn.speedscope.json"}) || !strings.Contains(v.Note, "npm install -g speedscope") {
		t.Errorf("viewer %+v %v", v, err)
	}
}
