package analysis

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsNameRequestFields keeps the command lines and the MCP tools
// (whose input schemas are derived from the same struct tags) taking the
// same parameters: every flag a request registers sets the field of its
// JSON name, and every field but the positional ones has a flag.
func TestFlagsNameRequestFields(t *testing.T) {
	positional := []string{"input", "frame_id"}
	tests := []struct {
		name     string
		register func(fs *pflag.FlagSet)
		request  any
	}{
		{"HotspotsRequest.Flags", func(fs *pflag.FlagSet) { new(HotspotsRequest).Flags(fs, 20) }, HotspotsRequest{}},
		{"HotspotsRequest.VerbFlags", func(fs *pflag.FlagSet) { new(HotspotsRequest).VerbFlags(fs) }, HotspotsRequest{}},
		{"StacksRequest.Flags", func(fs *pflag.FlagSet) { new(StacksRequest).Flags(fs, 20) }, StacksRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet(tt.name, pflag.ContinueOnError)
			tt.register(fs)
			var flags []string
			fs.VisitAll(func(f *pflag.Flag) { flags = append(flags, strings.ReplaceAll(f.Name, "-", "_")) })
			var fields []string
			rt := reflect.TypeOf(tt.request)
			for i := range rt.NumField() {
				name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
				if !slices.Contains(positional, name) {
					fields = append(fields, name)
				}
			}
			slices.Sort(flags)
			slices.Sort(fields)
			if !slices.Equal(flags, fields) {
				t.Errorf("flags %v, want one per request field %v", flags, fields)
			}
		})
	}
}

// TestFlagsSetRequest parses each flag into the request it registered
// on, and Stacks carries every shared field over.
func TestFlagsSetRequest(t *testing.T) {
	args := []string{"--limit", "7", "--sample-type", "alloc_space", "--thread", "main", "--process", "42", "--cursor", "c1"}
	var h HotspotsRequest
	fs := pflag.NewFlagSet("verbs", pflag.ContinueOnError)
	h.VerbFlags(fs)
	if err := fs.Parse(append(args, "--focus", "^a", "--ignore", "^b")); err != nil {
		t.Fatal(err)
	}
	h.Input = "run-1"
	want := HotspotsRequest{Input: "run-1", Limit: 7, SampleType: "alloc_space", Thread: "main", Process: "42", Cursor: "c1", Focus: "^a", Ignore: "^b"}
	if h != want {
		t.Errorf("VerbFlags parsed %+v, want %+v", h, want)
	}
	got := h.Stacks("f1")
	wantStacks := StacksRequest{Input: "run-1", FrameID: "f1", SampleType: "alloc_space", Thread: "main", Process: "42", Limit: 7, Cursor: "c1"}
	if got != wantStacks {
		t.Errorf("Stacks = %+v, want %+v", got, wantStacks)
	}
	var s StacksRequest
	fs = pflag.NewFlagSet("stacks", pflag.ContinueOnError)
	s.Flags(fs, 5)
	if s.Limit != 5 {
		t.Errorf("default limit %d, want 5", s.Limit)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	wantStacks.Input, wantStacks.FrameID = "", ""
	if s != wantStacks {
		t.Errorf("StacksRequest.Flags parsed %+v, want %+v", s, wantStacks)
	}
}
