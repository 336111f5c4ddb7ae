package mcpserver_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRenderPictureTool: render_picture writes the picture inside the
// project and returns its path with a resource_link, never the body; a
// PNG image block only when asked; outside the project it is refused.
func TestRenderPictureTool(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	var ids []string
	for _, name := range []string{"golang-perf__crc-old.txt", "golang-perf__crc-new.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "compare", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		var imp struct {
			Run struct {
				RunID string `json:"run_id"`
			} `json:"run"`
		}
		c.ok("import_artifact", map[string]any{"path": name, "kind": "benchmark_samples"}, &imp)
		ids = append(ids, imp.Run.RunID)
	}
	for _, tc := range []struct {
		output string
		image  bool
	}{{"cmp.svg", false}, {"cmp.svg", true}, {"cmp.png", true}} {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "render_picture",
			Arguments: map[string]any{"kind": "comparison", "inputs": ids, "output": tc.output, "image": tc.image}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tc.output, err, res)
		}
		var link *mcp.ResourceLink
		var img *mcp.ImageContent
		size := 0
		for _, ct := range res.Content {
			switch x := ct.(type) {
			case *mcp.ResourceLink:
				link = x
			case *mcp.ImageContent:
				img = x
			case *mcp.TextContent:
				size += len(x.Text)
			}
		}
		want := filepath.Join(dir, tc.output)
		if link == nil || link.URI != "file://"+want || link.Size == nil || *link.Size < 1000 {
			t.Fatalf("%s: resource link %+v, want file://%s", tc.output, link, want)
		}
		if st, err := os.Stat(want); err != nil || st.Size() != *link.Size {
			t.Fatalf("%s: %v, size %d", tc.output, err, *link.Size)
		}
		if size > 8000 {
			t.Errorf("%s: %d bytes of text: the body is inlined", tc.output, size)
		}
		switch {
		case tc.image && img == nil, !tc.image && img != nil:
			t.Fatalf("%s image=%v: image block %v", tc.output, tc.image, img != nil)
		case img != nil:
			if _, err := png.Decode(bytes.NewReader(img.Data)); err != nil || img.MIMEType != "image/png" {
				t.Fatalf("the image block is no PNG (%s): %v", img.MIMEType, err)
			}
		}
	}
	// The result is flameox render comparison --json's.
	got := mcpResult(t, c, "render_picture", map[string]any{"kind": "comparison", "inputs": ids, "output": "same.svg"})
	want := porcelainJSON(t, dir, "render", "comparison", ids[0], ids[1], "-o", "same.svg")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("render_picture differs from flameox render comparison --json\nMCP: %v\nCLI: %v", got, want)
	}
	env := c.fails("render_picture", map[string]any{"kind": "comparison", "inputs": ids, "output": "../escape.svg"}, "INVALID_ARGUMENTS")
	if !strings.Contains(env.Error.Message, "outside the project root") {
		t.Errorf("%+v", env.Error)
	}
	c.fails("render_picture", map[string]any{"kind": "pie", "inputs": ids, "output": "x.svg"}, "INVALID_ARGUMENTS")
	c.fails("render_picture", map[string]any{"kind": "report", "inputs": ids, "output": "x.html"}, "INVALID_ARGUMENTS")
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.svg")); err == nil {
		t.Fatal("wrote outside the project")
	}
}
