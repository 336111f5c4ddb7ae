package foxanalyze

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestFocusAndFrameRegexp: fox-analyze takes --focus/--ignore for
// hotspots and a regexp for the frame tools, as flameox does.
func TestFocusAndFrameRegexp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	res, err := workspace.Init(ctx, dir, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	file, _ := filepath.Abs("../../profile/testdata/google-pprof__sample.cpu.pb.gz")
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	imp, err := svc.Import(ctx, capture.ImportRequest{Path: file})
	if err != nil {
		t.Fatal(err)
	}
	pub := &publish.Publisher{WS: ws, Extractors: all.Registry().Extractors()}
	if _, err := pub.PublishRuns(ctx, []publish.RunRef{{RunID: imp.Run.RunID, Revision: imp.Run.Revision}}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, Now: time.Now,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil }, Name: "fox-analyze"}
		code := cli.Run(ctx, env, Run, args)
		return out.String() + errb.String(), code
	}
	out, code := run("hotspots", imp.Run.RunID, "--focus", "mapassign", "--ignore", "growWork")
	var rec struct {
		Result analysis.HotspotsResult `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Result.Parameters.Focus != "mapassign" || len(rec.Result.Rows) == 0 {
		t.Fatalf("hotspots --focus: exit %d\n%s", code, out)
	}
	out, code = run("callers", imp.Run.RunID, "runtime\\.mapiter")
	if code != 0 || !strings.Contains(out, `"function":"runtime.mapiternext"`) {
		t.Fatalf("callers by regexp: exit %d\n%s", code, out)
	}
	if _, code = run("callers", imp.Run.RunID, "busyLoop", "--focus", "x"); code != 2 {
		t.Fatalf("--focus on callers: exit %d", code)
	}
}
