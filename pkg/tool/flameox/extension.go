package flameox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
)

// FindTool locates fox-<verb>: next to the running flameox first, then on
// PATH. Verbs with path separators or odd characters are refused so an
// argument can never name an arbitrary program.
func FindTool(env *cli.Env, verb string) (string, error) {
	if verb == "" || strings.ContainsAny(verb, `/\`+"\x00") || strings.HasPrefix(verb, "-") || strings.HasPrefix(verb, ".") {
		return "", cli.Usagef("unknown command %q", verb)
	}
	name := "fox-" + verb
	if env.Executable != "" {
		sibling := filepath.Join(filepath.Dir(env.Executable), name)
		if st, err := os.Stat(sibling); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return sibling, nil
		}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fault.New(fault.InvalidArguments, "unknown command %q (no %s next to flameox or on PATH)", verb, name).
			Fix("Run 'flameox --help' for the list of commands.")
	}
	return path, nil
}

// runExtension replaces the flameox process with fox-<verb>, so its exit
// status, signals and streams are the extension's own. This starts no
// child process; the extension is the user's own program, run as they
// asked, with their environment (the broker's rules apply to workloads).
func runExtension(_ context.Context, env *cli.Env, args []string) error {
	path, err := FindTool(env, args[0])
	if err != nil {
		return err
	}
	argv := append([]string{filepath.Base(path)}, args[1:]...)
	err = syscall.Exec(path, argv, env.Environ())
	return fault.Wrap(fault.ProcessFailed, errors.Join(err), "run %s", path)
}
