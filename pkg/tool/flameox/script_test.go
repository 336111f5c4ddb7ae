package flameox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/tool/foxanalyze"
	"github.com/flameox/flameox/pkg/tool/foxcapture"
	"github.com/flameox/flameox/pkg/tool/foxcatalog"
	"github.com/flameox/flameox/pkg/tool/foxcompare"
	"github.com/flameox/flameox/pkg/tool/foxmcp"
	"github.com/flameox/flameox/pkg/tool/foxpublish"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptTools are the binaries a script can run, all seven of them; each is
// this test binary acting as the tool (TestMain in cli_test.go registers
// them), so a script exercises the same code as the release and a pipeline
// in `sh -c` runs real processes connected by real pipes.
var scriptTools = map[string]func(){
	"flameox":     func() { os.Exit(cli.Main("flameox", Run)) },
	"fox-capture": func() { os.Exit(cli.Main("fox-capture", foxcapture.Run)) },
	"fox-publish": func() { os.Exit(cli.Main("fox-publish", foxpublish.Run)) },
	"fox-analyze": func() { os.Exit(cli.Main("fox-analyze", foxanalyze.Run)) },
	"fox-catalog": func() { os.Exit(cli.Main("fox-catalog", foxcatalog.Run)) },
	"fox-mcp":     func() { os.Exit(cli.Main("fox-mcp", foxmcp.Run)) },
	"fox-compare": func() { os.Exit(cli.Main("fox-compare", foxcompare.Run)) },
}

// TestScripts runs the CLI suites in testdata/script (-update rewrites
// their golden sections from what the commands print): each .txtar is a
// fresh project in which a user types commands. The flameox suites' golden
// sections are what people read (text mode); the plumbing suites
// (plumbing_*.txtar) pin the record streams with `fields`, exit statuses
// with `exits`, and stderr line by line. Output that differs between runs
// and machines (run ids, hashes, times, cursors) is replaced by
// placeholders with `scrub` before it is compared.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: false,
		Setup: func(e *testscript.Env) error {
			testdata, err := filepath.Abs("testdata")
			if err != nil {
				return err
			}
			// TESTDATA holds the artifacts scripts import (copied from
			// ../shared/fixtures; testdata/SOURCES.md); EXAMPLES the
			// bundled example projects.
			e.Setenv("TESTDATA", testdata)
			e.Setenv("EXAMPLES", filepath.Join(testdata, "..", "..", "..", "..", "contrib", "examples"))
			e.Setenv("COLUMNS", "120")
			e.Setenv("GOCACHE", goEnv("GOCACHE"))
			e.Setenv("GOMODCACHE", goEnv("GOMODCACHE"))
			e.Setenv("GOFLAGS", "-mod=mod")
			e.Setenv("GOTOOLCHAIN", "local")
			e.Setenv("CI", os.Getenv("CI"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if name, ok := strings.CutPrefix(cond, "collector:"); ok {
				_, err := exec.LookPath(name)
				if err != nil && os.Getenv("CI") == "true" {
					return false, fmt.Errorf("collector %s is not installed and CI=true: run scripts/install-collectors.sh", name)
				}
				if err != nil {
					testenv.Log(name, "not installed", "TestScripts")
				}
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"scrub":  scrub,
			"grab":   grab,
			"exits":  exits,
			"fields": fields,
		},
	})
}

func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// scrubbed are the patterns every golden hides: values that change from run
// to run or machine to machine while the layout around them must not.
var scrubbed = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<RUN>"},
	{regexp.MustCompile(`sha256:[0-9a-f]{64}`), "<SHA256>"},
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?`), "<TIME>"},
	{regexp.MustCompile(`(--cursor[ =])\S+`), "${1}<CURSOR>"},
	{regexp.MustCompile(`\b(commit) [0-9a-f]{12}\b`), "${1} <COMMIT>"},
}

// scrub [-re PATTERN=>REPLACEMENT]... stdout|stderr|FILE
//
// prints the named output with the scrubbed patterns (and any extra ones)
// replaced, so that `scrub stdout` then `cmp stdout golden.txt` compares
// what stays the same.
func scrub(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! scrub")
	}
	extra := scrubbed[:len(scrubbed):len(scrubbed)]
	for len(args) > 1 && args[0] == "-re" {
		pat, with, ok := strings.Cut(args[1], "=>")
		if !ok {
			ts.Fatalf("scrub -re wants PATTERN=>REPLACEMENT, got %q", args[1])
		}
		extra = append(extra, struct {
			re   *regexp.Regexp
			with string
		}{regexp.MustCompile(pat), with})
		args = args[2:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: scrub [-re PATTERN=>REPLACEMENT]... stdout|stderr|FILE")
	}
	text := ts.ReadFile(args[0])
	for _, s := range extra {
		text = s.re.ReplaceAllString(text, s.with)
	}
	fmt.Fprint(ts.Stdout(), text)
}

// grab NAME REGEXP sets $NAME to the first submatch of REGEXP in the last
// command's stdout (a run id a later command needs).
func grab(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: grab NAME REGEXP")
	}
	m := regexp.MustCompile(args[1]).FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("grab: %q matches nothing in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}
