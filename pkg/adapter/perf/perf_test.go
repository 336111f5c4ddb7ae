package perf

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

func TestConformance(t *testing.T) {
	adaptertest.Run(t, New(),
		adaptertest.Fixture{Path: "testdata/hot.perf.script.txt", Decl: adapter.ArtifactDecl{RelPath: ScriptFile,
			Kind: "sample_profile", Role: "derived", MediaType: "text/plain", Required: true}})
}

// fakeSystem is a Linux host with perf, paranoid 2, no capabilities.
func fakeSystem(files map[string]string, pmus ...string) System {
	return System{
		GOOS:     "linux",
		LookPath: func(string) (string, error) { return "/usr/bin/perf", nil },
		ReadFile: func(name string) ([]byte, error) {
			if v, ok := files[name]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		},
		ListDir: func(string) ([]string, error) { return append([]string{"software", "tracepoint"}, pmus...), nil },
		Geteuid: func() int { return 1000 },
		Output:  func(context.Context, []string) ([]byte, error) { return []byte("perf version 6.1.192\n"), nil },
	}
}

const (
	capsNone    = "Name:\tx\nCapEff:\t0000000000000000\nSeccomp:\t0\n"
	capsRoot    = "CapEff:\t000001fffeffffff\nSeccomp:\t0\n"
	capsPerfmon = "CapEff:\t0000004000000000\nSeccomp:\t2\n"
)

func TestGatherReadsInjectedFiles(t *testing.T) {
	sys := fakeSystem(map[string]string{ParanoidFile: "4\n", StatusFile: capsPerfmon, UIDMapFile: "0 0 4294967295\n", MaxRateFile: "100000\n"}, "cpu")
	h := Gather(context.Background(), sys)
	if h.Paranoid != "4" || !h.CapPerfmon || h.CapSysAdmin || !h.HardwareEvents || h.Version != "6.1.192" || h.Seccomp != "2" || h.UserNamespace {
		t.Fatalf("host %+v", h)
	}
	c := Assess(h)
	if c.Status != adapter.Available || c.Facts["privileged"] != "cap_perfmon" || c.Facts["perf_event_paranoid"] != "4" {
		t.Fatalf("capability %+v", c)
	}
	sys.LookPath = func(string) (string, error) { return "", errors.New("not found") }
	if c := Assess(Gather(context.Background(), sys)); c.Status != adapter.Unavailable || !slices.Contains(c.Remediation, installRemedy) {
		t.Fatalf("without perf: %+v", c)
	}
}

func TestAssessTable(t *testing.T) {
	base := Host{GOOS: "linux", PerfPath: "/usr/bin/perf", Version: "6.1", CapsKnown: true, Seccomp: "0"}
	cases := []struct {
		name   string
		edit   func(*Host)
		status adapter.Status
		priv   string
		remedy string
	}{
		{"darwin", func(h *Host) { h.GOOS = "darwin" }, adapter.UnsupportedPlatform, "", ""},
		{"no perf", func(h *Host) { h.PerfPath, h.Paranoid = "", "1" }, adapter.Unavailable, "no", installRemedy},
		{"paranoid unreadable", func(h *Host) { h.Paranoid = "" }, adapter.Unknown, "no", "CONFIG_PERF_EVENTS"},
		{"paranoid -1 user", func(h *Host) { h.Paranoid = "-1" }, adapter.Available, "no", ""},
		{"paranoid 1 user", func(h *Host) { h.Paranoid = "1" }, adapter.Available, "no", ""},
		{"paranoid 2 user", func(h *Host) { h.Paranoid = "2" }, adapter.Available, "no", ""},
		{"paranoid 3 user", func(h *Host) { h.Paranoid = "3" }, adapter.PermissionRequired, "no", paranoidRemedy},
		{"paranoid 4 user", func(h *Host) { h.Paranoid = "4" }, adapter.PermissionRequired, "no", paranoidRemedy},
		{"paranoid 4 root", func(h *Host) { h.Paranoid, h.Euid, h.CapPerfmon, h.CapSysAdmin = "4", 0, true, true }, adapter.Available, "root", ""},
		{"paranoid 4 root without caps (docker)", func(h *Host) { h.Paranoid, h.Euid = "4", 0 }, adapter.PermissionRequired, "no", paranoidRemedy},
		{"paranoid 4 root, caps unknown", func(h *Host) { h.Paranoid, h.Euid, h.CapsKnown = "4", 0, false }, adapter.Available, "root", ""},
		{"paranoid 4 root in userns", func(h *Host) { h.Paranoid, h.CapPerfmon, h.UserNamespace = "4", true, true }, adapter.PermissionRequired, "no", paranoidRemedy},
		{"paranoid 3 cap_sys_admin", func(h *Host) { h.Paranoid, h.Euid, h.CapSysAdmin = "3", 1000, true }, adapter.Available, "cap_sys_admin", ""},
		{"version fails", func(h *Host) { h.Paranoid, h.Version, h.VersionErr = "1", "", errors.New("exit 1") }, adapter.Degraded, "no", "matches the running kernel"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := base
			h.Euid = 1000
			tc.edit(&h)
			c := Assess(h)
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s (%+v)", c.Status, tc.status, c)
			}
			if tc.priv != "" && c.Facts["privileged"] != tc.priv {
				t.Errorf("privileged=%q, want %q", c.Facts["privileged"], tc.priv)
			}
			if tc.remedy != "" && !strings.Contains(strings.Join(c.Remediation, "\n"), tc.remedy) {
				t.Errorf("remediation %q lacks %q", c.Remediation, tc.remedy)
			}
			if c.Status == adapter.PermissionRequired && !strings.Contains(strings.Join(c.Remediation, " "), "1 = plus kernel") {
				t.Errorf("remediation does not explain the paranoid values: %q", c.Remediation)
			}
		})
	}
}

func TestPlanArgv(t *testing.T) {
	out := t.TempDir()
	wl := []string{"/bin/echo", "hi"}
	for _, tc := range []struct {
		pmus  []string
		opts  map[string]string
		event string
		freq  string
	}{
		{nil, nil, "cpu-clock", "999"},
		{[]string{"cpu"}, nil, "cycles", "999"},
		{[]string{"armv8_pmuv3_0"}, map[string]string{"frequency": "97"}, "cycles", "97"},
	} {
		a := &Adapter{Sys: fakeSystem(nil, tc.pmus...)}
		p, err := a.Plan(adapter.PlanRequest{OutputDir: out, Argv: wl, Options: tc.opts})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"/usr/bin/perf", "record", "-g", "-F", tc.freq, "-e", tc.event, "-o", filepath.Join(out, DataFile), "--no-buildid-cache", "--", "/bin/echo", "hi"}
		if !slices.Equal(p.Argv, want) {
			t.Errorf("argv %q\nwant %q", p.Argv, want)
		}
		if len(p.Steps) != 1 || p.Steps[0].Stdout != ScriptFile || !slices.Contains(p.Steps[0].Argv, "{out}/"+DataFile) ||
			!slices.Contains(p.Steps[0].Argv, ScriptFields) {
			t.Errorf("steps %+v", p.Steps)
		}
		if tc.event == "cpu-clock" && !strings.Contains(strings.Join(p.Limitations, "\n"), "event cpu-clock") {
			t.Errorf("the cpu-clock choice is not in the limitations: %q", p.Limitations)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("Plan created files: %v", ents)
	}
	a := &Adapter{Sys: fakeSystem(nil)}
	for _, opts := range []map[string]string{{"frequency": "0"}, {"frequency": "fast"}, {"event": "cycles"}} {
		if _, err := a.Plan(adapter.PlanRequest{OutputDir: out, Argv: wl, Options: opts}); err == nil || !strings.Contains(err.Error(), "INVALID_CAPTURE_PLAN") {
			t.Errorf("options %v: %v", opts, err)
		}
	}
	if _, err := a.Plan(adapter.PlanRequest{OutputDir: out}); err == nil {
		t.Error("an empty argv was planned")
	}
}

func TestValidateAndViewer(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	os.WriteFile(data, []byte(Magic+"\x68\x00\x00\x00rest"), 0o644)
	text := filepath.Join(dir, "not-perf.txt")
	os.WriteFile(text, []byte("main;hot_loop 12\n"), 0o644)
	a := &Adapter{Sys: fakeSystem(nil)}
	dataDecl := adapter.ArtifactDecl{RelPath: DataFile, Kind: "sample_profile", MediaType: "application/x-perf-data"}
	scriptDecl := adapter.ArtifactDecl{RelPath: ScriptFile, Kind: "sample_profile", MediaType: "text/plain"}
	if err := a.Validate(data, dataDecl); err != nil {
		t.Error(err)
	}
	if a.Validate(text, dataDecl) == nil || a.Validate(text, scriptDecl) == nil || a.Validate(data, scriptDecl) == nil {
		t.Error("collapsed text or perf.data passed as the wrong format")
	}
	if v, err := a.Viewer(data, "sample_profile"); err != nil || !slices.Equal(v.Argv, []string{"/usr/bin/perf", "report", "-i", data}) {
		t.Errorf("perf.data viewer %+v %v", v, err)
	}
	if v, err := a.Viewer("testdata/hot.perf.script.txt", "sample_profile"); err != nil || v.Tool != "speedscope" || !strings.Contains(v.Note, "npm install -g speedscope") {
		t.Errorf("perf script viewer %+v %v", v, err)
	}
}
