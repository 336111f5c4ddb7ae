package gotest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
)

// failLines is how many lines of output a failure keeps per test, per
// build and of stderr.
const failLines = 20

// maxFailedTests bounds the failed test names a failure lists.
const maxFailedTests = 20

// failEvent is a test2json event with the fields a failure needs.
type failEvent struct {
	Action      string `json:"Action"`
	Package     string `json:"Package"`
	ImportPath  string `json:"ImportPath"`
	Test        string `json:"Test"`
	Output      string `json:"Output"`
	FailedBuild string `json:"FailedBuild"`
}

// ring keeps the last failLines lines written to it.
type ring struct{ lines []string }

func (r *ring) add(s string) {
	s = strings.TrimRight(s, "\r\n")
	if strings.TrimSpace(s) == "" {
		return
	}
	if len(r.lines) == failLines {
		copy(r.lines, r.lines[1:])
		r.lines = r.lines[:failLines-1]
	}
	r.lines = append(r.lines, s)
}

// reading is what one pass over go test's stdout and stderr found.
type reading struct {
	events      int
	buildFailed []string         // packages (or import paths) that did not build
	setupFailed []string         // packages whose test setup failed
	build       ring             // build-output lines
	failed      []string         // failed tests, pkg.Test, in order
	firstFailed string           // the pkg\x00test of the first failed test
	out         map[string]*ring // output per pkg\x00test
	panicked    string           // the pkg\x00test whose output holds a panic
	timedOut    string           // the "panic: test timed out after ..." line
	results     int              // benchmark result lines seen
	tests       int              // tests that passed, failed or skipped
	stderr      ring
	goErr       string // first "go: ..." line of stderr
	lastKey     string // the pkg\x00test that printed last
}

// ReadFailure reads a failed `go test` run's test2json stream and stderr
// and names what went wrong: the build (or its setup), tests that failed
// (by name), a panic, go test's own -timeout, or a -bench pattern that
// matched nothing. It returns nil when the output says nothing it knows.
func (*Adapter) ReadFailure(ctx context.Context, in adapter.FailureInput) *adapter.Failure {
	r := &reading{out: map[string]*ring{}}
	if f, err := os.Open(in.Stdout); err == nil {
		r.stdout(ctx, f)
		f.Close()
	}
	if f, err := os.Open(in.Stderr); err == nil {
		r.stderrText(f)
		f.Close()
	}
	bench := false
	if in.Plan != nil && len(in.Plan.Argv) > 2 {
		bench = parse(in.Plan.Argv[2:]).bench
	}
	return r.failure(in, bench)
}

func (r *reading) stdout(ctx context.Context, f io.Reader) {
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 0; ; n++ {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var ev failEvent
			if t[0] == '{' && json.Unmarshal(t, &ev) == nil && ev.Action != "" {
				r.event(ev)
			} else {
				r.text(string(line), "", "")
			}
		}
		if err != nil || (n%1024 == 0 && ctx.Err() != nil) {
			return
		}
	}
}

func (r *reading) event(ev failEvent) {
	r.events++
	switch ev.Action {
	case "build-output":
		r.build.add(ev.Output)
		return
	case "build-fail":
		r.buildFailed = appendNew(r.buildFailed, ev.ImportPath)
		return
	case "output":
		r.text(ev.Output, ev.Package, ev.Test)
	case "pass", "skip":
		if ev.Test != "" {
			r.tests++
		}
	case "fail":
		switch {
		case ev.Test != "":
			r.tests++
			if r.firstFailed == "" {
				r.firstFailed = ev.Package + "\x00" + ev.Test
			}
			if len(r.failed) < maxFailedTests {
				r.failed = append(r.failed, ev.Package+"."+ev.Test)
			}
		case ev.FailedBuild != "":
			r.buildFailed = appendNew(r.buildFailed, ev.Package)
		}
	}
}

// text reads one line of output of pkg's test (both may be empty).
func (r *reading) text(s, pkg, test string) {
	key := pkg + "\x00" + test
	o := r.out[key]
	if o == nil {
		o = &ring{}
		r.out[key] = o
	}
	o.add(s)
	if strings.TrimSpace(s) != "" {
		r.lastKey = key
	}
	t := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(t, "panic: test timed out after"):
		r.timedOut = t
	case strings.HasPrefix(t, "panic: ") && r.panicked == "":
		r.panicked = key
	case strings.HasPrefix(t, "FAIL") && strings.HasSuffix(t, "[build failed]"):
		r.buildFailed = appendNew(r.buildFailed, failPkg(t, pkg))
	case strings.HasPrefix(t, "FAIL") && strings.HasSuffix(t, "[setup failed]"):
		r.setupFailed = appendNew(r.setupFailed, failPkg(t, pkg))
	case strings.HasPrefix(t, "Benchmark") && strings.Contains(t, "ns/op"):
		r.results++
	}
}

func (r *reading) stderrText(f io.Reader) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		s := sc.Text()
		r.stderr.add(s)
		t := strings.TrimSpace(s)
		switch {
		case r.goErr == "" && (strings.HasPrefix(t, "go: ") || strings.Contains(t, "failed to initialize build cache")):
			r.goErr = t
		case strings.HasPrefix(t, "FAIL") && strings.HasSuffix(t, "[build failed]"):
			r.buildFailed = appendNew(r.buildFailed, failPkg(t, ""))
		case strings.HasPrefix(t, "FAIL") && strings.HasSuffix(t, "[setup failed]"):
			r.setupFailed = appendNew(r.setupFailed, failPkg(t, ""))
		case strings.HasPrefix(t, "panic: test timed out after"):
			r.timedOut = t
		}
	}
}

func (r *reading) failure(in adapter.FailureInput, bench bool) *adapter.Failure {
	f := &adapter.Failure{Remediation: []string{}}
	// The build's own lines, or stderr when go wrote its errors there.
	buildLines := r.build.lines
	if len(buildLines) == 0 {
		buildLines = r.stderr.lines
	}
	switch {
	case in.TimedOut:
		f.Class, f.Summary = adapter.FailureTimeout, "the capture's time limit ended go test"
		f.Lines = r.lastOutput()
		f.Remediation = append(f.Remediation, "Raise the workload's timeout_seconds in flameox.toml, or make it do less (a narrower -bench or -run pattern, a smaller -benchtime or -count).")
	case in.Cancelled:
		f.Class, f.Summary = adapter.FailureCancelled, "the capture was cancelled while go test ran"
		f.Lines = r.lastOutput()
	case len(r.setupFailed) > 0 || (r.goErr != "" && r.events == 0 && len(r.buildFailed) == 0):
		f.Class = adapter.FailureSetup
		f.Summary = "go test could not set up"
		if len(r.setupFailed) > 0 {
			f.Summary += " " + strings.Join(r.setupFailed, ", ")
		}
		if r.goErr != "" {
			f.Summary += ": " + r.goErr
		}
		f.Lines = buildLines
		f.Remediation = append(f.Remediation, setupFix(strings.Join(buildLines, "\n")+"\n"+r.goErr)...)
	case len(r.buildFailed) > 0:
		f.Class = adapter.FailureBuild
		f.Summary = "the build failed: " + strings.Join(r.buildFailed, ", ")
		f.Lines = buildLines
		f.Remediation = append(f.Remediation, "Fix the compile errors shown (run the workload's go test command in the project to see them all), then capture again.")
	case r.timedOut != "":
		f.Class, f.Summary = adapter.FailureTimeout, r.timedOut
		f.Lines = r.lastOutput()
		f.Remediation = append(f.Remediation, "go test's own -timeout ended the run: raise -timeout in the workload's argv, or make it do less.")
	case r.panicked != "":
		pkg, test, _ := strings.Cut(r.panicked, "\x00")
		f.Class, f.Summary = adapter.FailurePanic, "a test panicked"
		if test != "" {
			f.Summary += ": " + pkg + "." + test
		} else if pkg != "" {
			f.Summary += " in " + pkg
		}
		f.FailedTests = r.failed
		f.Lines = r.out[r.panicked].lines
		f.Remediation = append(f.Remediation, "Fix the panic (the lines show where it happened), or narrow the workload's -run pattern to tests that pass.")
	case len(r.failed) > 0:
		f.Class = adapter.FailureTest
		f.Summary = fmt.Sprintf("%d test(s) failed: %s", len(r.failed), strings.Join(r.failed[:min(len(r.failed), 3)], ", "))
		if len(r.failed) > 3 {
			f.Summary += ", …"
		}
		f.FailedTests = r.failed
		if o := r.out[r.firstFailed]; o != nil {
			f.Lines = o.lines
		}
		f.Remediation = append(f.Remediation, "Fix the failing tests, or narrow the workload's -run pattern (benchmarks need the tests they run to pass).")
	case in.Validation != "" && bench && r.results == 0:
		f.Class, f.Summary = adapter.FailureNoBenchmarks, in.Validation
		f.Remediation = append(f.Remediation, "Check the workload's -bench pattern against the benchmark names (go test -list . in the package).")
	case in.Validation != "" && !bench && r.tests == 0: // a benchmark run needs no tests; its failed check is another (an oracle)
		f.Class, f.Summary = adapter.FailureNoTests, in.Validation
		f.Remediation = append(f.Remediation, "Check the workload's -run pattern and package (go test -list . in the package).")
	default:
		return nil
	}
	return f
}

// lastOutput is the output of the test that printed last, or stderr.
func (r *reading) lastOutput() []string {
	if len(r.stderr.lines) > 0 {
		return r.stderr.lines
	}
	if o := r.out[r.lastKey]; o != nil {
		return o.lines
	}
	return nil
}

// setupFix names the cause of a go command that could not start, when
// its message says which.
func setupFix(text string) []string {
	switch {
	case strings.Contains(text, "GOCACHE") || strings.Contains(text, "build cache"):
		return []string{"The Go build cache is not usable: a contained capture gets a writable one under .diagnostics/cache/go-build; set GOCACHE to a writable directory for an uncontained one."}
	case strings.Contains(text, "read-only file system"):
		return []string{"go tried to write outside the sandbox's writable paths (the capture's output, /tmp and .diagnostics/cache): check GOFLAGS, GOPATH and GOTMPDIR in the workload's environment."}
	case strings.Contains(text, "dial tcp") || strings.Contains(text, "proxy.golang.org") || strings.Contains(text, "GOPROXY"):
		return []string{"go needed the network to download modules, which a contained capture denies: run `go mod download` in the project first (contained captures read your module cache), or set execution.network = \"allow\" in .diagnostics/config.toml."}
	}
	return []string{"Run the workload's go test command in the project to see the whole error (flameox workload show NAME prints it)."}
}

// failPkg is the package a "FAIL pkg [build failed]" line names.
func failPkg(line, pkg string) string {
	f := strings.Fields(line)
	if len(f) >= 2 && !strings.HasPrefix(f[1], "[") {
		return f[1]
	}
	return pkg
}

func appendNew(s []string, v string) []string {
	if v == "" {
		v = "(unknown package)"
	}
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

var _ adapter.FailureReader = (*Adapter)(nil)
