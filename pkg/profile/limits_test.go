package profile

import (
	"bytes"
	"strings"
	"testing"
)

// TestLimits: each parser stops at the first count over each of its
// limits, naming it, and accepts the same input when the limit is one
// higher.
func TestLimits(t *testing.T) {
	pb := func(parts ...string) string { return strings.Join(parts, "") }
	const ss = `{"$schema":"https://www.speedscope.app/file-format-schema.json",`
	tests := []struct {
		name  string
		input string
		lim   Limits
		limit string
	}{
		{"pprof strings", pb("\x32\x00", "\x32\x01a", "\x32\x01b"), Limits{MaxStrings: 2}, LimitStrings},
		{"pprof string bytes", pb("\x32\x00", "\x32\x05abcde"), Limits{MaxStringBytes: 4}, LimitStringBytes},
		{"pprof locations", pb("\x22\x00\x22\x00\x22\x00"), Limits{MaxLocations: 2}, LimitLocations},
		{"pprof location lines", pb("\x22\x04\x22\x00\x22\x00"), Limits{MaxLocations: 2}, LimitLocations},
		{"pprof functions", pb("\x2a\x00\x2a\x00"), Limits{MaxFunctions: 1}, LimitFunctions},
		{"pprof mappings", pb("\x1a\x00\x1a\x00"), Limits{MaxMappings: 1}, LimitMappings},
		{"pprof samples", pb("\x12\x00\x12\x00"), Limits{MaxSamples: 1}, LimitSamples},
		{"pprof sample types", pb("\x0a\x00\x5a\x00"), Limits{MaxSampleTypes: 1}, LimitSampleTypes},
		{"pprof depth packed", pb("\x12\x05\x0a\x03\x01\x02\x03"), Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"pprof depth unpacked", pb("\x12\x06\x08\x01\x08\x02\x08\x03"), Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"pprof depth partial", pb("\x12\x7f\x0a\x7d\x01\x02\x03"), Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"pprof frames", pb("\x12\x04\x0a\x02\x01\x02", "\x12\x04\x0a\x02\x01\x02"), Limits{MaxStackFrames: 3}, LimitStackFrames},
		{"pprof labels", pb("\x12\x04\x1a\x00\x1a\x00"), Limits{MaxLabels: 1}, LimitLabels},
		{"pprof labels partial", pb("\x12\x7f\x1a\x00\x1a\x00\x1a\x00"), Limits{MaxLabels: 2}, LimitLabels},
		{"pprof comments", pb("\x32\x00\x6a\x02\x00\x00"), Limits{MaxStrings: 2}, LimitStrings},
		{"collapsed lines", "a;b 1\na;c 1\na;d 1\n", Limits{MaxSamples: 2}, LimitSamples},
		{"collapsed depth", "a;b;c 1\n", Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"collapsed frames", "a;b 1\na;b 1\n", Limits{MaxStackFrames: 3}, LimitStackFrames},
		{"collapsed names", "a;b 1\na;c 1\n", Limits{MaxLocations: 2}, LimitLocations},
		{"collapsed functions", "a;b 1\na;c 1\n", Limits{MaxFunctions: 2}, LimitFunctions},
		{"collapsed name bytes", "aa;bb 1\n", Limits{MaxStringBytes: 3}, LimitStringBytes},
		{"perf depth", "x 1 c:\n\t1 f (m)\n\t2 g (m)\n\n", Limits{MaxStackDepth: 1}, LimitStackDepth},
		{"perf lines", "x 1 c:\n\t1 f (m)\n\t2 g (m)\n\n", Limits{MaxLocations: 1}, LimitLocations},
		{"perf stacks", "x 1 c:\n\t1 f (m)\n\nx 1 c:\n\t2 g (m)\n\n", Limits{MaxSamples: 1}, LimitSamples},
		{"perf events", "x 1 c:\n\t1 f (m)\n\nx 1 d:\n\t1 f (m)\n\n", Limits{MaxSampleTypes: 1}, LimitSampleTypes},
		{"perf stack frames", "x 1 c:\n\t1 f (m)\n\t2 g (m)\n\nx 2 c:\n\t1 f (m)\n\n", Limits{MaxStackFrames: 2}, LimitStackFrames},
		{"perf modules", "x 1 c:\n\t1 f (m)\n\t2 g (n)\n\n", Limits{MaxMappings: 1}, LimitMappings},
		{"speedscope frames", ss + `"shared":{"frames":[{"name":"a"},{"name":"b"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","samples":[[0]],"weights":[1]}]}`, Limits{MaxLocations: 1}, LimitLocations},
		{"speedscope samples", ss + `"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","samples":[[0],[0]],"weights":[1,1]}]}`, Limits{MaxSamples: 2}, LimitSamples},
		{"speedscope depth", ss + `"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","samples":[[0,0,0]],"weights":[1]}]}`, Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"speedscope stack frames", ss + `"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","samples":[[0,0],[0,0]],"weights":[1,1]}]}`, Limits{MaxStackFrames: 3}, LimitStackFrames},
		{"speedscope events", ss + `"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","name":"t","unit":"none","endValue":2,"events":[{"type":"O","frame":0,"at":0},{"type":"C","frame":0,"at":1}]}]}`, Limits{MaxEvents: 1}, LimitEvents},
		{"speedscope open depth", ss + `"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","name":"t","unit":"none","endValue":2,"events":[{"type":"O","frame":0,"at":0},{"type":"O","frame":0,"at":1}]}]}`, Limits{MaxStackDepth: 1}, LimitStackDepth},
		{"speedscope names", ss + `"shared":{"frames":[{"name":"abc"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","samples":[[0]],"weights":[1]}]}`, Limits{MaxStringBytes: 3}, LimitStringBytes},
		{"speedscope nesting", ss + `"shared":{"frames":[{"name":"a"}]},"x":[[[]]],"profiles":[{"type":"sampled","name":"t","unit":"none","samples":[[0]],"weights":[1]}]}`, Limits{MaxJSONDepth: 3}, LimitJSONDepth},
		{"decompressed bytes", "a;b 1\na;c 1\n", Limits{MaxDecompressedBytes: 8}, LimitDecompressedBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.input), Options{Limits: tt.lim})
			le, ok := AsLimit(err)
			if !ok || le.Limit != tt.limit || le.Observed <= le.Max {
				t.Fatalf("want limit %s, got %v (%+v)", tt.limit, err, le)
			}
			// One more of the limited item is no longer over the limit
			// (the input may still fail for other reasons, as most of
			// these protobufs are no valid profile).
			raised := raise(tt.lim, le.Observed)
			_, err = Parse(bytes.NewReader([]byte(tt.input)), Options{Limits: raised})
			if le2, ok := AsLimit(err); ok && le2.Limit == tt.limit {
				t.Fatalf("limit %s raised to %d still fails: %v", tt.limit, le.Observed, err)
			}
		})
	}
}

// raise lifts every limit that lim sets far above n.
func raise(lim Limits, n int64) Limits {
	for _, p := range []*int64{&lim.MaxDecompressedBytes, &lim.MaxStrings, &lim.MaxStringBytes, &lim.MaxLocations,
		&lim.MaxFunctions, &lim.MaxMappings, &lim.MaxSamples, &lim.MaxSampleTypes, &lim.MaxLabels,
		&lim.MaxStackDepth, &lim.MaxStackFrames, &lim.MaxEvents, &lim.MaxJSONDepth} {
		if *p > 0 {
			*p = max(*p, n) * 1000
		}
	}
	return lim
}
