// Package ci holds the CI integrations (GitHub Actions, GitLab CI) and the
// test that runs their steps, contrib/ci/compare.sh, end to end.
package ci

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// need finds a tool the test runs: a skip locally, a failure under CI=true.
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed and CI=true", tool)
		}
		t.Skipf("%s is not installed", tool)
	}
	return p
}

// buildFlameox builds the flameox binary of this checkout.
func buildFlameox(t *testing.T, goBin string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flameox")
	cmd := exec.Command(goBin, "build", "-o", bin, "github.com/flameox/flameox/cmd/flameox")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build flameox: %v\n%s", err, out)
	}
	return bin
}

const workGo = `package tiny

// Rounds is how much work Work does.
const Rounds = ROUNDS

// Work mixes a number Rounds times.
func Work(x uint64) uint64 {
	for i := 0; i < Rounds; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
`

const workTestGo = `package tiny

import "testing"

var sink uint64

func BenchmarkWork(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = Work(uint64(i) + 1)
	}
}
`

const flameoxToml = `schema_version = 1

[workloads.bench]
argv = ["go", "test", "-run", "^$", "-bench", ".", "-benchtime", "100x", "-count", "8", "."]
timeout_seconds = 300
env = { GOWORK = "off", GOFLAGS = "-mod=mod" }
`

// tinyRepo makes a git repository of a Go module with a benchmark in two
// commits: the base does 20000 rounds per op, the head headRounds.
func tinyRepo(t *testing.T, git string, headRounds string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/tiny\n\ngo 1.22\n")
	write("work.go", strings.Replace(workGo, "ROUNDS", "20000", 1))
	write("work_test.go", workTestGo)
	write("flameox.toml", flameoxToml)
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	body := strings.Replace(workGo, "ROUNDS", headRounds, 1)
	if headRounds == "20000" {
		body = strings.Replace(body, "// Work mixes", "// Work (unchanged) mixes", 1)
	}
	write("work.go", body)
	run("commit", "-q", "-am", "head")
	return dir
}

// TestCompareScript runs the steps both CI integrations run on a tiny Go
// module: a head ten times slower is a regression (exit 1, the comment
// says meaningful_regression), a head that only changes a comment is not
// (exit 0). The threshold (a change past 2x) keeps the second case from
// failing when a loaded machine slows one side.
func TestCompareScript(t *testing.T) {
	bash, git, goBin := need(t, "bash"), need(t, "git"), need(t, "go")
	fx := buildFlameox(t, goBin)
	script, err := filepath.Abs("compare.sh")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		headRounds string
		exit       int
		decision   string
	}{
		{"a ten times slower head is a regression", "200000", 1, "meaningful_regression"},
		{"an unchanged benchmark is not", "20000", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := tinyRepo(t, git, tc.headRounds)
			out := t.TempDir()
			cmd := exec.Command(bash, script, "HEAD~1", "HEAD")
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "FLAMEOX="+fx, "FLAMEOX_OUT="+out, "FLAMEOX_COMPARE_ARGS=--threshold 1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			exit := 0
			if ee, ok := err.(*exec.ExitError); ok {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != tc.exit {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", exit, tc.exit, stdout.String(), stderr.String())
			}
			md, err := os.ReadFile(filepath.Join(out, "comment.md"))
			if err != nil {
				t.Fatal(err)
			}
			comment := string(md)
			for _, want := range []string{"### flameox: benchmarks of", "| sec/op | old | new |", "| Work-", "pkg=example.com/tiny", "exited " + map[int]string{0: "0", 1: "1"}[tc.exit]} {
				if !strings.Contains(comment, want) {
					t.Errorf("comment lacks %q:\n%s", want, comment)
				}
			}
			secop := comment[strings.Index(comment, "| sec/op |"):]
			secop = secop[:strings.Index(secop, "\n\n")]
			if got := strings.Contains(secop, "meaningful_regression"); got != (tc.decision != "") {
				t.Errorf("sec/op table says meaningful_regression %v, want %v:\n%s", got, tc.decision != "", secop)
			}
			if stdout.String() != comment {
				t.Errorf("stdout is not the comment:\n%s", stdout.String())
			}
			// The script leaves the head checked out and the tree clean.
			st := exec.Command(git, "status", "--porcelain", "--untracked-files=no")
			st.Dir = repo
			if b, err := st.Output(); err != nil || len(b) != 0 {
				t.Errorf("git status after the script: %q %v", b, err)
			}
			// The same workspace answers flameox history: two source
			// states in git order, a change point only on a real step.
			hcmd := exec.Command(fx, "history", "gobench.sec/op", "--workload", "bench", "--threshold", "1", "--json")
			hcmd.Dir = repo
			hb, err := hcmd.Output()
			if err != nil {
				t.Fatalf("flameox history: %v", err)
			}
			var h struct {
				Order        string `json:"order"`
				ChangePoints int    `json:"change_points"`
				Series       []struct {
					Points []struct {
						HeadCommit string `json:"head_commit"`
					} `json:"points"`
				} `json:"series"`
			}
			if err := json.Unmarshal(hb, &h); err != nil {
				t.Fatal(err)
			}
			if h.Order != "git" || len(h.Series) != 1 || len(h.Series[0].Points) != 2 || h.ChangePoints != tc.exit {
				t.Errorf("history: %s", hb)
			}
		})
	}
}

// TestWorkflowsRunTheScript: both integrations run compare.sh from the
// installed flameox module and post its comment, so the script is what
// TestCompareScript tests.
func TestWorkflowsRunTheScript(t *testing.T) {
	for file, wants := range map[string][]string{
		"github/flameox-compare.yml":           {`bash "$FLAMEOX_CI/compare.sh" "$BASE_SHA" "$HEAD_SHA"`, "go install \"github.com/flameox/flameox/cmd/flameox@", "gh pr comment", "--body-file \"$FLAMEOX_OUT/comment.md\"", `exit "${{ steps.compare.outputs.rc }}"`},
		"gitlab/flameox-compare.gitlab-ci.yml": {`bash "$FLAMEOX_CI/compare.sh" "$BASE_SHA" "$CI_COMMIT_SHA"`, "go install \"github.com/flameox/flameox/cmd/flameox@", "/merge_requests/$CI_MERGE_REQUEST_IID/notes", "exit $rc"},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
		if strings.Contains(string(b), "\t") {
			t.Errorf("%s has a tab: YAML indents with spaces", file)
		}
	}
}
