package flameox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/cli"
)

// terminal describes the process a command runs in: whether stdout and
// stderr are terminals, the terminal's width, and the environment.
type terminal struct {
	stdout, stderr bool
	columns        int
	vars           map[string]string
}

// inTerminal runs flameox in process, in dir, with the terminal state t
// injected into its Env (no pty needed).
func inTerminal(t *testing.T, dir string, term terminal, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv:  func(k string) string { return term.vars[k] },
		Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")} },
		Dir:     dir, Now: time.Now, Name: "flameox",
		StdoutTerminal: term.stdout, StderrTerminal: term.stderr, StdoutColumns: term.columns,
	}
	code := cli.Run(context.Background(), env, Run, args)
	return result{stdout: out.String(), stderr: errb.String(), exit: code}
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestTerminalHabits: colour only on a terminal (auto), never with
// NO_COLOR or --color=never/--no-color (before or after the command),
// always with --color=always; runs list fits an 80-column terminal by
// cutting long names in the middle, while --json carries them whole;
// progress only on a terminal stderr, and --quiet drops it.
func TestTerminalHabits(t *testing.T) {
	dir := initProject(t)
	long := "a-profile-whose-name-is-much-wider-than-any-column-allows-" + strings.Repeat("x", 40) + ".pb.gz"
	src, err := os.ReadFile(filepath.Join("..", "..", "profile", "testdata", "google-pprof__sample.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, long), src, 0o644)
	tty := terminal{stdout: true, stderr: true, columns: 80}

	// Import on a terminal shows progress on stderr; --quiet shows none.
	r := inTerminal(t, dir, tty, "import", long)
	if r.exit != 0 || !strings.Contains(r.stderr, "\r\x1b[K") || !strings.Contains(r.stderr, "importing") {
		t.Fatalf("import on a terminal: exit %d, stderr %q", r.exit, r.stderr)
	}
	if !strings.HasSuffix(r.stderr, "\r\x1b[K") {
		t.Fatalf("the progress line was not erased: %q", r.stderr)
	}
	os.WriteFile(filepath.Join(dir, "again.pb.gz"), src, 0o644)
	if r := inTerminal(t, dir, tty, "--quiet", "import", "again.pb.gz"); r.exit != 0 || r.stderr != "" {
		t.Fatalf("import --quiet: exit %d, stderr %q", r.exit, r.stderr)
	}
	if r := inTerminal(t, dir, terminal{}, "import", "again.pb.gz", "--kind", "sample_profile"); r.stderr != "" {
		t.Fatalf("import in a pipe wrote %q on stderr", r.stderr)
	}

	for _, tc := range []struct {
		name  string
		term  terminal
		args  []string
		color bool
	}{
		{"terminal", tty, nil, true},
		{"NO_COLOR", terminal{stdout: true, stderr: true, columns: 80, vars: map[string]string{"NO_COLOR": "1"}}, nil, false},
		{"TERM=dumb", terminal{stdout: true, stderr: true, columns: 80, vars: map[string]string{"TERM": "dumb"}}, nil, false},
		{"--no-color", tty, []string{"--no-color"}, false},
		{"--color=never after", tty, []string{"runs", "list", "--color=never"}, false},
		{"--color=always over NO_COLOR", terminal{columns: 80, vars: map[string]string{"NO_COLOR": "1"}}, []string{"--color=always"}, true},
		{"pipe stdout, terminal stderr", terminal{stderr: true, columns: 80}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if len(args) == 0 || args[0] != "runs" {
				args = append(append([]string{}, args...), "runs", "list")
			}
			r := inTerminal(t, dir, tc.term, args...)
			if r.exit != 0 {
				t.Fatalf("exit %d: %s", r.exit, r.stderr)
			}
			if got := strings.Contains(r.stdout, "\x1b["); got != tc.color {
				t.Fatalf("colour %v, want %v:\n%q", got, tc.color, r.stdout)
			}
			if tc.color && (!strings.Contains(r.stdout, "\x1b[1mRUN\x1b[0m") || !strings.Contains(r.stdout, "\x1b[32mimported\x1b[0m")) {
				t.Fatalf("no bold header or green outcome:\n%q", r.stdout)
			}
			plain := sgr.ReplaceAllString(r.stdout, "")
			if strings.Contains(plain, "\x1b") {
				t.Fatalf("an escape other than colour: %q", plain)
			}
			for _, l := range strings.Split(strings.TrimSuffix(plain, "\n"), "\n") {
				if n := cli.StringWidth(l); n > 80 {
					t.Fatalf("a %d-cell line on an 80-column terminal: %q", n, l)
				}
			}
			if !strings.Contains(plain, "import") || !strings.Contains(plain, "…") || !strings.Contains(plain, "left out to fit: CREATED, ADAPTER, WALL, PEAK RSS, BENCH (--json has all)") {
				t.Fatalf("the long name is not cut, or the columns left out not named:\n%s", plain)
			}
		})
	}

	// In a pipe every column and the name's first 48 cells are printed.
	if r := inTerminal(t, dir, terminal{}, "runs", "list"); r.exit != 0 || strings.Contains(r.stdout, "left out") || !strings.Contains(r.stdout, "PEAK RSS") {
		t.Fatalf("runs list in a pipe: exit %d\n%s", r.exit, r.stdout)
	}
	// --json on a terminal: no colour, the name whole.
	if r := inTerminal(t, dir, tty, "runs", "list", "--json"); r.exit != 0 || strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, long) {
		t.Fatalf("runs list --json on a terminal: exit %d\n%s", r.exit, r.stdout)
	}
	// An error on a colour terminal has a red prefix; in a pipe none.
	if r := inTerminal(t, dir, tty, "--color=sometimes", "runs", "list"); r.exit != 2 || !strings.HasPrefix(r.stderr, "\x1b[1;31mflameox:\x1b[0m ") || !strings.Contains(r.stderr, "--color is auto, always or never") {
		t.Fatalf("--color=sometimes: exit %d, stderr %q", r.exit, r.stderr)
	}
	if r := inTerminal(t, dir, terminal{}, "runs", "list", "--color", "sometimes"); r.exit != 2 || strings.Contains(r.stderr, "\x1b") {
		t.Fatalf("--color sometimes in a pipe: exit %d, stderr %q", r.exit, r.stderr)
	}
	// A catalog rebuild shows its progress on a terminal, not with --json.
	if r := inTerminal(t, dir, tty, "catalog", "rebuild"); r.exit != 0 || !strings.Contains(r.stderr, "rebuilding catalog.duckdb") {
		t.Fatalf("catalog rebuild on a terminal: exit %d, stderr %q", r.exit, r.stderr)
	}
	if r := inTerminal(t, dir, tty, "catalog", "rebuild", "--json"); r.exit != 0 || r.stderr != "" {
		t.Fatalf("catalog rebuild --json on a terminal: exit %d, stderr %q", r.exit, r.stderr)
	}
}
