package flameox

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/cli"
)

// runInProcess runs flameox with args in dir and returns its streams and
// exit status, without a workspace or a child process.
func runInProcess(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Environ: func() []string { return nil }, Dir: dir, Now: time.Now, Name: "flameox"}
	code := cli.Run(context.Background(), env, Run, args)
	return result{stdout: out.String(), stderr: errb.String(), exit: code}
}

// A group named without a verb prints the group's verbs: --help and help
// succeed, a bare group or an unknown verb is a usage error (exit 2), and
// none of them runs a fox-<group> extension.
func TestGroupHelp(t *testing.T) {
	dir := t.TempDir()
	// No fox-<group> can be found: the old code would exec one in place of
	// the test binary.
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct {
		args   []string
		exit   int
		stream string // where the verb list goes
		want   []string
	}{
		{[]string{"analyze", "--help"}, 0, "stdout", []string{"usage: flameox analyze", "analyze hotspots"}},
		{[]string{"analyze"}, 2, "stderr", []string{"analyze hotspots", "flameox: INVALID_ARGUMENTS: analyze needs a verb: hotspots"}},
		{[]string{"runs"}, 2, "stderr", []string{"runs list", "runs show", "needs a verb: list, show"}},
		{[]string{"runs", "-h"}, 0, "stdout", []string{"runs list", "runs show"}},
		{[]string{"help", "runs"}, 0, "stdout", []string{"runs list", "runs show"}},
		{[]string{"runs", "frobnicate"}, 2, "stderr", []string{"runs list", `has no verb "frobnicate"`}},
		{[]string{"workload"}, 2, "stderr", []string{"workload list", "workload show", "workload approve"}},
		{[]string{"capture", "--help"}, 0, "stdout", []string{"capture plan", "capture run"}},
		{[]string{"stacks"}, 2, "stderr", []string{"stacks callers", "stacks callees", "stacks examples"}},
		{[]string{"measurements", "help"}, 0, "stdout", []string{"measurements query"}},
		{[]string{"catalog"}, 2, "stderr", []string{"catalog rebuild", "catalog validate", "catalog compact", "catalog status"}},
		{[]string{"artifacts"}, 2, "stderr", []string{"artifacts list", "artifacts show"}},
		{[]string{"evidence", "--help"}, 0, "stdout", []string{"evidence get"}},
		{[]string{"mcp"}, 2, "stderr", []string{"mcp serve", "mcp inspect"}},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			r := runInProcess(t, dir, tc.args...)
			if r.exit != tc.exit {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.exit, tc.exit, r.stdout, r.stderr)
			}
			got := r.stdout
			if tc.stream == "stderr" {
				got = r.stderr
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q:\n%s", tc.stream, w, got)
				}
			}
			if strings.Contains(r.stderr, "fox-") {
				t.Errorf("a group ran as an extension: %s", r.stderr)
			}
		})
	}
}
