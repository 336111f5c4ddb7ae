package gotest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
)

// maxPending bounds the partial output line kept per package.
const maxPending = 4 << 10

// ProgressLines returns the function that turns the test2json events of
// one capture into lines for a person watching it: each benchmark result
// as it completes, each failed test, build errors, and each package's
// outcome (as go test prints them); everything else, and anything that is
// not an event, is "". test2json may split one output line over several
// events (a benchmark's name, then its result when it is measured), so
// partial output is joined per package until its newline.
func (*Adapter) ProgressLines() func([]byte) string {
	pending := map[string]string{}
	return func(line []byte) string {
		var ev struct {
			Action, Package, ImportPath, Test, Output string
			Elapsed                                   *float64
		}
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			return ""
		}
		pkg := ev.Package
		if pkg == "" {
			pkg = ev.ImportPath
		}
		elapsed := ""
		if ev.Elapsed != nil {
			elapsed = fmt.Sprintf(" (%.3fs)", *ev.Elapsed)
		}
		switch ev.Action {
		case "output":
			out := pending[pkg] + ev.Output
			if !strings.HasSuffix(out, "\n") {
				if len(out) > maxPending {
					out = ""
				}
				pending[pkg] = out
				return ""
			}
			delete(pending, pkg)
			if f := strings.Fields(out); isBenchResult(f) {
				// go test aligns with tabs; a terminal line needs none.
				parts := []string{f[0], f[1]}
				for i := 2; i+1 < len(f); i += 2 {
					parts = append(parts, f[i]+" "+f[i+1])
				}
				return strings.Join(parts, "  ")
			}
		case "build-output":
			return strings.TrimRight(ev.Output, "\r\n")
		case "build-fail":
			return "build failed: " + pkg
		case "fail":
			if ev.Test != "" {
				return "--- FAIL: " + ev.Test + elapsed
			}
			return "FAIL " + pkg + elapsed
		case "pass":
			if ev.Test == "" {
				return "ok   " + pkg + elapsed
			}
		case "skip":
			if ev.Test == "" {
				return "?    " + pkg + " [no test files]"
			}
		}
		return ""
	}
}

// isBenchResult reports whether the fields of a line of go test output
// are a benchmark result: "Benchmark<name> <iterations> <value> <unit> …".
func isBenchResult(f []string) bool {
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n < 1 {
		return false
	}
	_, err = strconv.ParseFloat(f[2], 64)
	return err == nil
}

var _ adapter.ProgressLiner = (*Adapter)(nil)
