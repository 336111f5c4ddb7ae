package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/mcpserver"
	"github.com/spf13/pflag"
)

// TestAnalysisFlagsMatchSchemas: each analysis tool takes exactly the
// parameters of its command line, the flags the request type registers
// (flameox analyze/stacks, fox-analyze) plus the positional arguments,
// named alike (--sample-type is sample_type).
func TestAnalysisFlagsMatchSchemas(t *testing.T) {
	hotspots := func(fs *pflag.FlagSet) { new(analysis.HotspotsRequest).Flags(fs, 20) }
	verbs := func(fs *pflag.FlagSet) { new(analysis.HotspotsRequest).VerbFlags(fs) }
	stacks := func(fs *pflag.FlagSet) { new(analysis.StacksRequest).Flags(fs, 20) }
	tests := []struct {
		tool       string
		register   func(*pflag.FlagSet)
		positional []string
		except     []string // flags of fox-analyze's shared set only hotspots takes
		// rename maps a flag to its field where the decision rule's
		// flags (--threshold, --confidence) keep compare's names.
		rename map[string]string
	}{
		{"analyze_hotspots", hotspots, []string{"input"}, nil, nil},
		{"analyze_hotspots", verbs, []string{"input"}, nil, nil},
		{"get_frame_callers", stacks, []string{"input", "frame_id"}, nil, nil},
		{"get_frame_callees", stacks, []string{"input", "frame_id"}, nil, nil},
		{"get_stack_examples", stacks, []string{"input", "frame_id"}, nil, nil},
		{"get_stack_examples", verbs, []string{"input", "frame_id"}, []string{"focus", "ignore"}, nil},
		{"analyze_execution", func(fs *pflag.FlagSet) { new(analysis.ExecutionRequest).Flags(fs) }, []string{"input"}, nil, nil},
		{"analyze_pytorch", func(fs *pflag.FlagSet) { new(analysis.PyTorchRequest).Flags(fs) }, []string{"input"}, nil, nil},
		{"analyze_memory", func(fs *pflag.FlagSet) { new(compare.MemoryRequest).Flags(fs) }, []string{"input"}, nil,
			map[string]string{"threshold": "practical_threshold", "confidence": "confidence_level"}},
	}
	in, err := mcpserver.Inspect(context.Background(), mcpserver.Options{ProjectRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string][]string{}
	for _, tool := range in.Tools {
		props, _ := schemaMap(t, tool.InputSchema)["properties"].(map[string]any)
		for p := range props {
			schemas[tool.Name] = append(schemas[tool.Name], p)
		}
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet(tt.tool, pflag.ContinueOnError)
		tt.register(fs)
		want := slices.Clone(tt.positional)
		fs.VisitAll(func(f *pflag.Flag) {
			name := strings.ReplaceAll(f.Name, "-", "_")
			if r, ok := tt.rename[name]; ok {
				name = r
			}
			if !slices.Contains(tt.except, name) {
				want = append(want, name)
			}
		})
		got := schemas[tt.tool]
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s takes %v; its command line %v", tt.tool, got, want)
		}
	}
}
