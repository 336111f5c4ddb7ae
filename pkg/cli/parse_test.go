package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

// TestParseFlagErrorNamesProgramOnce runs a flag error through Report the
// way every tool does: the program name is Report's prefix, so the message
// must not carry it again, while the remediation names the whole command.
func TestParseFlagErrorNamesProgramOnce(t *testing.T) {
	for _, tc := range []struct {
		program, flagSet string
		args             []string
		stderr, message  string
		fix              string
	}{
		{
			program: "fox-publish", flagSet: "fox-publish", args: []string{"--no-such-flag"},
			stderr:  "fox-publish: INVALID_ARGUMENTS: unknown flag: --no-such-flag\n",
			message: "unknown flag: --no-such-flag",
			fix:     "Run 'fox-publish --help' for usage.",
		},
		{
			program: "fox-capture", flagSet: "fox-capture import", args: []string{"--x"},
			stderr:  "fox-capture: INVALID_ARGUMENTS: import: unknown flag: --x\n",
			message: "import: unknown flag: --x",
			fix:     "Run 'fox-capture import --help' for usage.",
		},
		{
			program: "flameox", flagSet: "flameox runs list", args: []string{"--limit", "many"},
			stderr:  `flameox: INVALID_ARGUMENTS: runs list: invalid argument "many" for "--limit" flag: must be an integer` + "\n",
			message: `runs list: invalid argument "many" for "--limit" flag: must be an integer`,
			fix:     "Run 'flameox runs list --help' for usage.",
		},
	} {
		t.Run(tc.flagSet, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &Env{Stdout: &stdout, Stderr: &stderr, Name: tc.program, Mode: Records}
			tool := func(_ context.Context, env *Env, args []string) error {
				fs := NewFlags(env, tc.flagSet, "usage: "+tc.flagSet)
				fs.Int("limit", 0, "")
				return Parse(fs, args)
			}
			code := Run(context.Background(), env, tool, tc.args)
			if want := fault.New(fault.InvalidArguments, "").ExitCode(); code != want {
				t.Errorf("exit status %d", code)
			}
			if got, _, _ := strings.Cut(stderr.String(), "  hint:"); got != tc.stderr {
				t.Errorf("stderr\n%q, want\n%q", got, tc.stderr)
			}
			if n := strings.Count(stderr.String(), tc.program+":"); n != 1 {
				t.Errorf("program name appears %d times in stderr %q", n, stderr.String())
			}
			fs := NewFlags(env, tc.flagSet, "usage: "+tc.flagSet)
			fs.Int("limit", 0, "")
			fe := fault.As(Parse(fs, tc.args))
			if fe.Message != tc.message {
				t.Errorf("message %q, want %q", fe.Message, tc.message)
			}
			if len(fe.Remediation) != 1 || fe.Remediation[0] != tc.fix {
				t.Errorf("remediation %q, want %q", fe.Remediation, tc.fix)
			}
			if !strings.Contains(stdout.String(), `"message":"`+strings.ReplaceAll(tc.message, `"`, `\"`)+`"`) {
				t.Errorf("error record %q lacks message %q", stdout.String(), tc.message)
			}
		})
	}
}
