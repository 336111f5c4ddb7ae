package coverage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
)

func fakeSys(out string, err error) System {
	return System{LookPath: func(string) (string, error) { return "/usr/bin/python3", nil },
		Output: func(context.Context, []string, time.Duration) ([]byte, error) { return []byte(out), err }}
}

func TestProbe(t *testing.T) {
	noPy := System{LookPath: func(string) (string, error) { return "", errors.New("not found") }}
	for _, c := range []struct {
		name    string
		sys     System
		status  adapter.Status
		version string
		remedy  string
	}{
		{"ok", fakeSys("Coverage.py, version "+Version+" with C extension\nFull documentation is at ...\n", nil), adapter.Available, Version, ""},
		{"other release", fakeSys("Coverage.py, version 7.4.0 with C extension\n", nil), adapter.Available, "7.4.0", ""},
		{"no python", noPy, adapter.Unavailable, "", "pip install coverage==" + Version},
		{"no module", fakeSys("", fault.New(fault.ProcessFailed, "exited with status 1").With("stderr", "No module named coverage")), adapter.Unavailable, "", "pip install coverage==" + Version},
		{"garbage", fakeSys("hello\n", nil), adapter.Unavailable, "", "pip install coverage==" + Version},
	} {
		t.Run(c.name, func(t *testing.T) {
			cap := (&Adapter{Sys: c.sys}).Probe(context.Background())
			if cap.Status != c.status || cap.Version != c.version {
				t.Fatalf("%+v", cap)
			}
			if c.remedy != "" && !strings.Contains(strings.Join(cap.Remediation, " "), c.remedy) {
				t.Errorf("remediation %q", cap.Remediation)
			}
			if c.name == "other release" && cap.Facts["pinned_version"] != Version {
				t.Errorf("facts %v", cap.Facts)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	a := &Adapter{Sys: fakeSys("", nil)}
	run := func(extra ...string) []string {
		return append([]string{"/usr/bin/python3", "-m", "coverage", "run", "--branch", "--data-file=/out/.coverage"}, extra...)
	}
	for _, c := range []struct {
		name string
		argv []string
		opts map[string]string
		want []string
		err  string
	}{
		{"script", []string{"/usr/bin/python3", "s.py", "x"}, nil, run("s.py", "x"), ""},
		{"module with options", []string{"/usr/bin/python3.12", "-m", "pytest", "-q"}, map[string]string{"context": "ci", "source": "pkg,lib"},
			[]string{"/usr/bin/python3.12", "-m", "coverage", "run", "--branch", "--data-file=/out/.coverage", "--context=ci", "--source=pkg,lib", "-m", "pytest", "-q"}, ""},
		{"bare script", []string{"/p/s.py"}, nil, run("/p/s.py"), ""},
		{"not python", []string{"/bin/ls"}, nil, nil, "runs Python programs"},
		{"code", []string{"python3", "-c", "print(1)"}, nil, nil, "cannot run python -c"},
		{"interpreter flag", []string{"python3", "-X", "dev", "s.py"}, nil, nil, "needs a script"},
		{"module without name", []string{"python3", "-m"}, nil, nil, "needs a script"},
		{"unknown option", []string{"python3", "s.py"}, map[string]string{"branch": "false"}, nil, "no capture option"},
		{"flag injection", []string{"python3", "s.py"}, map[string]string{"context": "x --omit=*"}, nil, "want letters"},
		{"leading dash", []string{"python3", "s.py"}, map[string]string{"source": "--rcfile=/etc/x"}, nil, "want letters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := a.Plan(adapter.PlanRequest{ProjectRoot: "/proj", OutputDir: "/out", Argv: c.argv, Options: c.opts})
			if c.err != "" {
				var fe *fault.Error
				if !errors.As(err, &fe) || fe.Code != fault.InvalidCapturePlan || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want INVALID_CAPTURE_PLAN %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(p.Argv, c.want) {
				t.Fatalf("argv %q, %v; want %q", p.Argv, err, c.want)
			}
			st := p.Steps[0]
			if st.Argv[0] != c.want[0] || st.Argv[3] != "/proj" || !slices.Equal(st.Argv[4:], []string{"json", "--show-contexts", "--data-file={out}/.coverage", "-o", "{out}/coverage.json"}) {
				t.Errorf("step %q", st.Argv)
			}
			if st.Produces.RelPath != ReportFile || p.Artifacts[0].RelPath != DataFile {
				t.Errorf("artifacts %+v %+v", p.Artifacts, st.Produces)
			}
		})
	}
}

func TestValidateAndViewer(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "data")
	os.WriteFile(db, append([]byte("SQLite format 3\x00"), make([]byte, 100)...), 0o644)
	a := New()
	dataDecl := adapter.ArtifactDecl{RelPath: DataFile, Kind: Kind, MediaType: "application/vnd.sqlite3"}
	jsonDecl := adapter.ArtifactDecl{RelPath: ReportFile, Kind: Kind, MediaType: "application/json"}
	if err := a.Validate(db, dataDecl); err != nil {
		t.Error(err)
	}
	if err := a.Validate(db, jsonDecl); err == nil {
		t.Error("a data file passes as a JSON report")
	}
	if err := a.Validate("testdata/paleae__coverage-branch.json", jsonDecl); err != nil {
		t.Error(err)
	}
	if err := a.Validate("testdata/paleae__coverage-branch.json", dataDecl); err == nil {
		t.Error("a JSON report passes as a data file")
	}
	for path, tool := range map[string]string{db: "coverage", "testdata/paleae__coverage-branch.json": "json.tool"} {
		v, err := a.Viewer(path, Kind)
		if err != nil || v.Tool != tool || !slices.ContainsFunc(v.Argv, func(s string) bool { return strings.Contains(s, path) }) {
			t.Errorf("viewer of %s: %+v %v", path, v, err)
		}
	}
}

// TestConformance checks the adapter contract with a Python workload and
// validates every report in testdata.
func TestConformance(t *testing.T) {
	decl := adapter.ArtifactDecl{RelPath: ReportFile, Kind: Kind, Role: "derived", MediaType: "application/json", Required: true}
	files, _ := filepath.Glob("testdata/*.json")
	var fixtures []adaptertest.Fixture
	for _, p := range files {
		fixtures = append(fixtures, adaptertest.Fixture{Path: p, Decl: decl})
	}
	adaptertest.RunWith(t, New(), adaptertest.Config{Workload: []string{"/usr/bin/python3", "a b; $(x).py", "--flag"}}, fixtures...)
}

const liveToml = `schema_version = 1

[workloads.shapes]
argv = ["python3", "test_shapes.py"]
timeout_seconds = 300
options = { context = "ci" }
`

// coverageReport runs `coverage report` on a data file, the reporter
// alone, and returns its TOTAL line's numbers (Stmts, Miss, Branch,
// BrPart) and `--format=total --precision=6`'s percentage.
func coverageReport(t *testing.T, dir, data string) (counts []int64, percent string) {
	t.Helper()
	sys := RealSystem()
	py, _ := sys.LookPath("python3")
	// coverage report names files relative to the current directory; the
	// data file names them absolutely, so any directory will do.
	out, err := sys.Output(context.Background(), []string{py, "-m", "coverage", "report", "--data-file=" + data}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TOTAL\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+%\s*$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no TOTAL line with branches in\n%s", out)
	}
	for _, s := range m[1:] {
		n, _ := strconv.ParseInt(s, 10, 64)
		counts = append(counts, n)
	}
	pc, err := sys.Output(context.Background(), []string{py, "-m", "coverage", "report", "--format=total", "--precision=6", "--data-file=" + data}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return counts, strings.TrimSpace(string(pc))
}

// TestLiveCapture runs the real coverage.py through capture.Service on
// a tiny test module with branches and a static context, extracts the
// JSON report the capture's step wrote, and compares its totals with
// `coverage report` run on the captured .coverage data file.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	project := t.TempDir()
	for _, f := range []string{"shapes.py", "test_shapes.py", ".coveragerc"} {
		src, err := os.ReadFile(filepath.Join("testdata/shapes", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := adaptertest.Capture(t, project, liveToml, "shapes", Name, process.New(), a)
	m := l.Result.Run
	if m.ExecutionStatus != run.ExecSucceeded || m.CaptureStatus != run.CaptureRegistered {
		t.Fatalf("run %s/%s: %+v\nstderr:\n%s", m.ExecutionStatus, m.CaptureStatus, m.Error, l.Stderr())
	}
	l.CheckLimitations(t)
	data, ok := l.Regs[DataFile]
	rep, ok2 := l.Regs[ReportFile]
	if !ok || !ok2 || data.Kind != Kind || rep.Kind != Kind {
		t.Fatalf("registrations %+v", m.Artifacts)
	}
	if !slices.Contains(m.Command.Argv, "--context=ci") || !slices.Contains(m.Command.Argv, "--branch") {
		t.Errorf("argv %q", m.Command.Argv)
	}
	x, err := extract(t, l.Path(rep), config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := totalsOf(x.measure)
	counts, pc := coverageReport(t, project, l.Path(data))
	t.Logf("coverage report: TOTAL %v, --format=total %s; extracted %v", counts, pc, got)
	for i, name := range []string{MStatements, MMissingStatements, MBranches, MPartialBranches} {
		if got[name] != float64(counts[i]) {
			t.Errorf("%s = %v, coverage report says %d", name, got[name], counts[i])
		}
	}
	if s := strconv.FormatFloat(got[MPercentCovered], 'f', 6, 64); s != pc {
		t.Errorf("%s = %s, coverage report --format=total says %s", MPercentCovered, s, pc)
	}
	if got[MCoveredStatements] != got[MStatements]-got[MMissingStatements] || got[MCoveredBranches]+got[MMissingBranches] != got[MBranches] {
		t.Errorf("totals %v", got)
	}
	// Files are project-relative; the test_function dynamic context of
	// the project's .coveragerc follows the static one.
	files, exitArc, ctx := map[string]bool{}, false, false
	for _, r := range x.obs {
		files[r["file"].(string)] = true
		exitArc = exitArc || (r["kind"] == KindArc && r["line_to"].(int32) < 0)
		ctx = ctx || r["context"] == "ci|__main__.test_negative"
	}
	if !files["shapes.py"] || !files["test_shapes.py"] || len(files) != 2 || !exitArc || !ctx {
		t.Errorf("files %v, exit arc %v, context %v", files, exitArc, ctx)
	}
}
