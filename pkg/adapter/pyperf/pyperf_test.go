package pyperf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/fault"
)

var benchDecl = adapter.ArtifactDecl{RelPath: BenchFile, Kind: KindBenchmark, Role: "primary", MediaType: "application/json", Required: true}

func TestConformance(t *testing.T) {
	var fixtures []adaptertest.Fixture
	files, _ := filepath.Glob("testdata/pyperf__*")
	for _, f := range files {
		fixtures = append(fixtures, adaptertest.Fixture{Path: f, Decl: benchDecl})
	}
	adaptertest.Run(t, New(), fixtures...)
}

func fake(out string, err error) System {
	return System{LookPath: func(string) (string, error) { return "/usr/bin/python3", nil },
		Output: func(_ context.Context, argv []string) ([]byte, error) {
			if len(argv) != 3 || argv[1] != "-c" || strings.Contains(argv[2], "import pyperf") {
				return nil, errors.New("the probe ran something else than its script")
			}
			return []byte(out), err
		}}
}

// TestProbe: the probe's status follows what python3 reports, and it
// never runs pyperf.
func TestProbe(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sys     System
		status  adapter.Status
		version string
	}{
		{"installed", fake("3.11.7\n/x/site-packages/pyperf/__init__.py\n2.11.0\n", nil), adapter.Available, "2.11.0"},
		{"no metadata", fake("3.11.7\n/x/pyperf/__init__.py\n\n", nil), adapter.Degraded, ""},
		{"not installed", fake("3.11.7\n\n\n", nil), adapter.Unavailable, ""},
		{"python fails", fake("", errors.New("exit 1")), adapter.Unknown, ""},
		{"no python3", System{LookPath: func(string) (string, error) { return "", errors.New("not found") }}, adapter.Unavailable, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := (&Adapter{Sys: tt.sys}).Probe(context.Background())
			if c.Status != tt.status || c.Version != tt.version {
				t.Fatalf("%s %q, want %s %q: %+v", c.Status, c.Version, tt.status, tt.version, c)
			}
			if c.Status != adapter.Available && len(c.Remediation) == 0 {
				t.Fatalf("no remediation: %+v", c)
			}
			if c.Status == adapter.Unavailable && !strings.Contains(strings.Join(c.Remediation, " "), "pip install pyperf=="+Version) {
				t.Fatalf("remediation %q does not say how to install pyperf", c.Remediation)
			}
		})
	}
}

// TestPlan: the workload's argv follows `pyperf command -o OUT/bench.json
// --copy-env` and the flags its options ask for; without options pyperf
// chooses (and the limitations say so).
func TestPlan(t *testing.T) {
	a := &Adapter{Sys: fake("", nil)}
	out := t.TempDir()
	wl := []string{"/usr/bin/python3", "-c", "sum(range(100))"}
	for _, tt := range []struct {
		name  string
		opts  map[string]string
		flags []string
		lim   string
	}{
		{"defaults", nil, nil, "calibrated by pyperf"},
		{"declared", map[string]string{"processes": "3", "values": "2", "warmups": "0", "loops": "4", "min_time": "0.01", "name": "sum", "track_memory": "true"},
			[]string{"--processes=3", "--values=2", "--warmups=0", "--loops=4", "--min-time=0.01", "--name=sum", "--track-memory"}, "peak memory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Plan(adapter.PlanRequest{OutputDir: out, Argv: wl, Options: tt.opts})
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]string{"/usr/bin/python3", "-m", "pyperf", "command", "-o", filepath.Join(out, BenchFile), "--copy-env"}, tt.flags...), "--")
			want = append(want, wl...)
			if !slices.Equal(p.Argv, want) {
				t.Fatalf("argv %q\nwant %q", p.Argv, want)
			}
			if len(p.Artifacts) != 1 || p.Artifacts[0] != benchDecl {
				t.Fatalf("artifacts %+v", p.Artifacts)
			}
			if !strings.Contains(strings.Join(p.Limitations, "\n"), tt.lim) {
				t.Fatalf("limitations %q lack %q", p.Limitations, tt.lim)
			}
		})
	}
	for _, tt := range []struct {
		name string
		argv []string
		opts map[string]string
		msg  string
	}{
		{"unknown option", wl, map[string]string{"rigorous": "true"}, `no capture option "rigorous"`},
		{"bad count", wl, map[string]string{"processes": "0"}, "processes"},
		{"bad bool", wl, map[string]string{"track_memory": "yes"}, "track_memory"},
		{"bad min_time", wl, map[string]string{"min_time": "-1"}, "min_time"},
		{"leading --", []string{"/bin/echo", "--", "x"}, nil, `"--"`},
		{"no argv", nil, nil, "no argv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Plan(adapter.PlanRequest{OutputDir: out, Argv: tt.argv, Options: tt.opts})
			if fault.As(err).Code != fault.InvalidCapturePlan || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("%v, want INVALID_CAPTURE_PLAN saying %q", err, tt.msg)
			}
		})
	}
}

// TestValidate: a pyperf file passes, a broken one does not.
func TestValidate(t *testing.T) {
	a := New()
	if err := a.Validate("testdata/pyperf__py3.json.gz", benchDecl); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bench.json")
	os.WriteFile(bad, []byte(strings.Replace(good, "1.5", "-1", 1)), 0o644)
	if err := a.Validate(bad, benchDecl); fault.As(err).Code != fault.ArtifactParseFailed {
		t.Fatalf("%v", err)
	}
	v, err := a.Viewer("x.json", KindBenchmark)
	if err != nil || !slices.Equal(v.Argv, []string{"python3", "-m", "pyperf", "show", "x.json"}) {
		t.Fatalf("%+v %v", v, err)
	}
}

// TestInstallPinsVersion: the install script pins the pyperf the probe's
// remedy names.
func TestInstallPinsVersion(t *testing.T) {
	b, err := os.ReadFile("../../../scripts/install-collectors.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "pyperf=="+Version+" ") {
		t.Fatalf("scripts/install-collectors.sh does not install pyperf==%s", Version)
	}
}
