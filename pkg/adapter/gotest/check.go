package gotest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
)

// CheckResult fails a successful `go test` run that measured nothing: a
// benchmark workload (-bench) whose stream holds no benchmark result (the
// pattern matched no benchmark: go test still exits 0 and prints PASS), or
// a test workload in which no test passed, failed or was skipped (a -run
// pattern that matched nothing, or no test files). It reads the stored
// test2json stream with the extractor's parser.
func (*Adapter) CheckResult(ctx context.Context, p *adapter.Plan, _ string, stdout string) (bool, string) {
	if p == nil || len(p.Argv) < 2 {
		return false, "the plan has no go test command"
	}
	c := parse(p.Argv[2:])
	f, err := os.Open(stdout)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "go test wrote nothing on stdout, so no test or benchmark ran"
	}
	if err != nil {
		return false, "could not read go test's output: " + err.Error()
	}
	defer f.Close()
	pr := newParser(ctx, func(result) error { return nil })
	if err := pr.stream(f); err != nil {
		return false, "could not read go test's output: " + err.Error()
	}
	t := &pr.t
	var tests int64
	pkgs := []string{}
	for _, s := range t.suites {
		tests += s.passed + s.failed + s.skipped
		if s.pkg != "" {
			pkgs = append(pkgs, clean(s.pkg))
		}
	}
	where := "in " + plural(len(pkgs), "package")
	if len(pkgs) > 0 && len(pkgs) <= 3 {
		where += " (" + strings.Join(pkgs, ", ") + ")"
	}
	if c.bench {
		if t.results == 0 {
			return false, fmt.Sprintf("go test ran no benchmark %s: the -bench pattern %q matched none, so there is nothing to measure (%s ran)",
				where, c.benchPattern, plural(int(tests), "test"))
		}
		return true, fmt.Sprintf("go test reported %s %s", plural(t.results, "benchmark result"), where)
	}
	if tests == 0 {
		return false, fmt.Sprintf("go test ran no test %s: no test file, or the -run pattern matched none", where)
	}
	return true, fmt.Sprintf("go test ran %s %s", plural(int(tests), "test"), where)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

var _ adapter.ResultChecker = (*Adapter)(nil)
