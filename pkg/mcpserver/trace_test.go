package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/mcpserver"
	"github.com/spf13/pflag"
)

// TestTraceWindowTool: get_trace_window is flameox trace window --json
// over MCP, value for value; it is read-only, takes the command line's
// parameters, pages with a cursor, and a window on no trace is NOT_FOUND.
func TestTraceWindowTool(t *testing.T) {
	dir := project(t)
	b, err := os.ReadFile(filepath.Join("..", "adapter", "trace", "testdata", "hta__inference_rank_1_legacy_cats.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inference.json.gz"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	_, art := c.importedRun("inference.json.gz")
	got := mcpResult(t, c, "get_trace_window", map[string]any{"input": art, "limit": 4})
	want := porcelainJSON(t, dir, "trace", "window", art, "--limit", "4")
	nextForms(t, "get_trace_window", got, want)
	delete(got.(map[string]any), "next_tools")
	delete(got.(map[string]any), "next_steps")
	delete(want.(map[string]any), "next_steps")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("get_trace_window differs from flameox trace window\nMCP: %v\nCLI: %v", got, want)
	}
	var page analysis.TraceWindowResult
	c.ok("get_trace_window", map[string]any{"input": art, "limit": 4}, &page)
	if !page.Truncated || page.Cursor == "" || page.Returned != 4 || page.Total <= 4 {
		t.Fatalf("page %+v", page.Page)
	}
	var next analysis.TraceWindowResult
	c.ok("get_trace_window", map[string]any{"input": art, "limit": 4, "cursor": page.Cursor}, &next)
	if next.Returned == 0 || next.Slices[0].StackID == page.Slices[0].StackID {
		t.Fatalf("second page %+v", next.Page)
	}
	c.fails("get_trace_window", map[string]any{"input": "sha256:" + strings.Repeat("0", 64)}, "NOT_FOUND")

	in, err := mcpserver.Inspect(context.Background(), mcpserver.Options{ProjectRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range in.Tools {
		if tool.Name != "get_trace_window" {
			continue
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Error("get_trace_window is not read-only")
		}
		props, _ := schemaMap(t, tool.InputSchema)["properties"].(map[string]any)
		var params []string
		for p := range props {
			params = append(params, p)
		}
		fs := pflag.NewFlagSet("trace window", pflag.ContinueOnError)
		new(analysis.TraceWindowRequest).Flags(fs)
		flags := []string{"input"}
		fs.VisitAll(func(f *pflag.Flag) { flags = append(flags, strings.ReplaceAll(f.Name, "-", "_")) })
		slices.Sort(params)
		slices.Sort(flags)
		// --start and --end are the fields start_ns and end_ns.
		for i, f := range flags {
			if f == "start" || f == "end" {
				flags[i] = f + "_ns"
			}
		}
		slices.Sort(flags)
		if !slices.Equal(params, flags) {
			t.Errorf("get_trace_window takes %v; its command line %v", params, flags)
		}
		return
	}
	t.Fatal("no get_trace_window tool")
}
