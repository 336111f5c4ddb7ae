package foxanalyze

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/cli"
)

// foxAnalyze runs fox-analyze in dir: its output (stdout then stderr)
// and exit code.
func foxAnalyze(dir string) func(args ...string) (string, int) {
	return func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, Now: time.Now,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil }, Name: "fox-analyze"}
		code := cli.Run(context.Background(), env, Run, args)
		return out.String() + errb.String(), code
	}
}

// TestDiffVerb: fox-analyze diff BASE CANDIDATE writes the same result as
// flameox analyze diff, --record an analysis record naming the
// candidate, and refuses a missing candidate or --thread.
func TestDiffVerb(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, text := range []string{"main;f 10\nmain;g 5\n", "main;f 4\nmain;g 5\n"} {
		path := filepath.Join(dir, []string{"a.folded", "b.folded"}[i])
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	ws, ids := capturetest.Published(t, "", files...)
	run := foxAnalyze(ws.ProjectRoot)
	out, code := run("diff", ids[0], ids[1])
	var rec struct {
		Result analysis.DiffResult `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Result.Operation != analysis.OpDiff || len(rec.Result.Rows) != 2 {
		t.Fatalf("diff: exit %d\n%s", code, out)
	}
	if r := rec.Result.Rows[0]; r.Function != "f" || r.SelfDelta != -6 {
		t.Fatalf("top row %+v", r)
	}
	out, code = run("diff", ids[0], ids[1], "--record")
	if code != 0 || !strings.Contains(out, `"operation":"diff"`) || !strings.Contains(out, ids[1]) {
		t.Fatalf("diff --record: exit %d\n%s", code, out)
	}
	if _, code = run("diff", ids[0]); code != 2 {
		t.Fatalf("no candidate: exit %d", code)
	}
	if _, code = run("diff", ids[0], ids[1], "--thread", "x"); code != 2 {
		t.Fatalf("--thread: exit %d", code)
	}
}
