package flameox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// exits N COMMAND [ARGS...]
//
// runs COMMAND like exec and fails unless it ends with exit status N, so
// a script pins the documented status (docs/exit-codes.md), not just "not
// zero" as `! exec` does.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// fields stdout|stderr|FILE PATH...
//
// prints, for every line of the named output, the values at the dotted
// PATHs of its JSON object, separated by spaces: strings as they are,
// other values as JSON, "-" where a path is missing; a line that is not a
// JSON object is printed as "!" and the line. It turns a stream of records
// into a short table a golden can pin (`fields stdout record code`).
func fields(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fields stdout|stderr|FILE PATH...")
	}
	text := ts.ReadFile(args[0])
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		var obj map[string]any
		if json.Unmarshal([]byte(line), &obj) != nil {
			fmt.Fprintf(ts.Stdout(), "! %s\n", line)
			continue
		}
		vals := make([]string, len(args)-1)
		for i, path := range args[1:] {
			vals[i] = lookupField(obj, path)
		}
		fmt.Fprintln(ts.Stdout(), strings.Join(vals, " "))
	}
}

func lookupField(obj map[string]any, path string) string {
	var v any = obj
	for _, key := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[key]; !ok {
				return "-"
			}
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return "-"
			}
			v = x[i]
		default:
			return "-"
		}
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
