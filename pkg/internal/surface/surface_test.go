// Package surface pins what users and hosts see of every binary: each
// tool's and verb's usage, its flag errors, and the MCP server's tool
// schemas, annotations, prompts and instructions. Refactors must leave
// these bytes alone; a deliberate change is re-recorded with -update and
// reviewed in the diff.
package surface

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/tool/flameox"
	"github.com/flameox/flameox/pkg/tool/foxanalyze"
	"github.com/flameox/flameox/pkg/tool/foxcapture"
	"github.com/flameox/flameox/pkg/tool/foxcatalog"
	"github.com/flameox/flameox/pkg/tool/foxcompare"
	"github.com/flameox/flameox/pkg/tool/foxmcp"
	"github.com/flameox/flameox/pkg/tool/foxpublish"
	"github.com/flameox/flameox/pkg/workspace"
)

var update = flag.Bool("update", false, "rewrite the surface goldens")

var tools = map[string]cli.RunFunc{
	"flameox":     flameox.Run,
	"fox-capture": foxcapture.Run,
	"fox-publish": foxpublish.Run,
	"fox-catalog": foxcatalog.Run,
	"fox-analyze": foxanalyze.Run,
	"fox-mcp":     foxmcp.Run,
	"fox-compare": foxcompare.Run,
}

// invocations are the usage and flag-error paths of every tool; {dir} is
// an initialized project.
func invocations() [][]string {
	inv := [][]string{
		{"flameox", "--help"},
		{"flameox", "--no-such-flag"},
		{"fox-capture", "--help"},
		{"fox-capture"},
		{"fox-capture", "import", "--help"},
		{"fox-capture", "plan", "--help"},
		{"fox-capture", "run", "--help"},
		{"fox-capture", "recover", "--help"},
		{"fox-capture", "import", "--no-such-flag"},
		{"fox-publish", "--help"},
		{"fox-publish", "--no-such-flag"},
		{"fox-catalog", "--help"},
		{"fox-catalog"},
		{"fox-analyze", "--help"},
		{"fox-analyze"},
		{"fox-compare", "--help"},
		{"fox-compare"},
		{"fox-compare", "compare", "--help"},
		{"fox-compare", "freeze", "--help"},
		{"fox-compare", "compare", "--no-such-flag"},
		{"fox-mcp", "--help"},
		{"fox-mcp", "serve", "--help"},
		{"fox-mcp", "inspect", "--help"},
		{"fox-mcp", "inspect", "--json", "--project-root", "{dir}"},
		{"fox-mcp", "inspect", "--project-root", "{dir}"},
	}
	for _, v := range []string{"rebuild", "validate", "status", "compact", "runs", "artifacts", "measurements", "evidence"} {
		inv = append(inv, []string{"fox-catalog", v, "--help"}, []string{"fox-catalog", v, "--no-such-flag"})
	}
	for _, v := range []string{"hotspots", "callers", "callees", "examples"} {
		inv = append(inv, []string{"fox-analyze", v, "--help"}, []string{"fox-analyze", v, "--no-such-flag"})
	}
	for _, c := range flameox.Commands() {
		words := append([]string{"flameox"}, strings.Fields(c.Name)...)
		inv = append(inv, append(append([]string{}, words...), "--help"), append(append([]string{}, words...), "--no-such-flag"))
	}
	return inv
}

// TestSurface runs every invocation in process and compares stdout,
// stderr and the exit status with testdata/surface.golden.
func TestSurface(t *testing.T) {
	dir := t.TempDir()
	if _, err := workspace.Init(context.Background(), dir, time.Now(), publish.FirstCommit); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, inv := range invocations() {
		args := make([]string, len(inv)-1)
		for i, a := range inv[1:] {
			args[i] = strings.ReplaceAll(a, "{dir}", dir)
		}
		var stdout, stderr bytes.Buffer
		env := &cli.Env{
			Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
			Dir: dir, Now: time.Now, Name: inv[0], Executable: filepath.Join(dir, inv[0]),
		}
		code := cli.Run(context.Background(), env, tools[inv[0]], args)
		fmt.Fprintf(&out, "$ %s\n[exit %d]\n", strings.Join(inv, " "), code)
		if stdout.Len() > 0 {
			fmt.Fprintf(&out, "[stdout]\n%s\n", strings.ReplaceAll(stdout.String(), dir, "$DIR"))
		}
		if stderr.Len() > 0 {
			fmt.Fprintf(&out, "[stderr]\n%s\n", strings.ReplaceAll(stderr.String(), dir, "$DIR"))
		}
	}
	golden := filepath.Join("testdata", "surface.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/internal/surface -update)", err)
	}
	if !bytes.Equal(want, out.Bytes()) {
		t.Fatalf("the CLI or MCP surface changed; if that is meant, run go test ./pkg/internal/surface -update and review the diff\n%s", firstDiff(string(want), out.String()))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, a, b)
		}
	}
	return ""
}
