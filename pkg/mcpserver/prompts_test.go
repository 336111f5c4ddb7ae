package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPrompts: prompts/list offers the investigations with their
// arguments, and prompts/get renders each to at most 1 KB (arguments of
// any length included), naming only tools the server has.
func TestPrompts(t *testing.T) {
	c := connect(t, project(t), nil)
	ctx := context.Background()
	list, err := c.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Prompt{}
	for _, p := range list.Prompts {
		got[p.Name] = p
	}
	if got["find_hotspot"] == nil || got["compare_captures"] == nil {
		t.Fatalf("prompts: %+v", list.Prompts)
	}
	tools, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, tl := range tools.Tools {
		known[tl.Name] = true
	}
	long := strings.Repeat("x\n", 5000)
	for _, tt := range []struct {
		name string
		args map[string]string
		want []string
	}{
		{"find_hotspot", map[string]string{"workload": "bench"}, []string{`"bench"`, `"gotest"`, "start_capture", "analyze_hotspots", "get_frame_callers"}},
		{"find_hotspot", map[string]string{"workload": long, "adapter": long}, nil},
		{"compare_captures", map[string]string{"baseline": "r1", "candidate": "r2"}, []string{`"r1"`, `"r2"`, "list_runs", "analyze_hotspots", "get_frame_callers"}},
		{"compare_captures", map[string]string{"baseline": long, "candidate": long, "workload": long}, nil},
	} {
		res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tt.name, Arguments: tt.args})
		if err != nil || len(res.Messages) != 1 {
			t.Fatalf("%s: %v %+v", tt.name, err, res)
		}
		text := res.Messages[0].Content.(*mcp.TextContent).Text
		if len(text) > 1024 {
			t.Errorf("%s renders %d bytes (over 1 KB)", tt.name, len(text))
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, text)
			}
		}
		if strings.Contains(text, "x\nx") {
			t.Errorf("%s: an argument broke the text into lines", tt.name)
		}
		for _, word := range strings.FieldsFunc(text, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }) {
			if strings.Contains(word, "_") && (strings.HasPrefix(word, "get_") || strings.HasPrefix(word, "list_") || strings.HasPrefix(word, "analyze_") ||
				strings.HasPrefix(word, "query_") || strings.HasPrefix(word, "start_") || strings.HasPrefix(word, "plan_")) && word != "plan_token" && !known[word] {
				t.Errorf("%s names a tool that does not exist: %s", tt.name, word)
			}
		}
	}
	if _, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "find_hotspot", Arguments: map[string]string{}}); err == nil {
		t.Error("find_hotspot without a workload rendered")
	}
}
