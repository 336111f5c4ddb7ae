package analysis

import "github.com/spf13/pflag"

// The command-line flags of the analyses. Each request type registers the
// flags of its own fields, named for them (--sample-type sets the field
// whose JSON name is sample_type), and the MCP tools' input schemas are
// derived from the same struct tags, so flameox, fox-analyze and MCP take
// the same parameters: flags_test.go fails when a field has no flag or a
// flag sets no field. The positional fields (input, frame_id) are the
// commands' arguments.

// Flags registers the flags of a hotspots request (`flameox analyze
// hotspots`): --limit (default def), --sample-type, --focus, --ignore,
// --thread, --process and --cursor.
func (r *HotspotsRequest) Flags(fs *pflag.FlagSet, def int) {
	limitFlag(fs, &r.Limit, def, "frames")
	sampleTypeFlag(fs, &r.SampleType)
	fs.StringVar(&r.Focus, "focus", "", "only samples with a frame matching this regexp (function, file or module; like go tool pprof -focus)")
	fs.StringVar(&r.Ignore, "ignore", "", "drop samples with a frame matching this regexp (like go tool pprof -ignore)")
	threadFlags(fs, &r.Thread, &r.Process)
	cursorFlag(fs, &r.Cursor)
}

// Flags registers the flags of a stacks request (`flameox stacks
// callers|callees|examples`): --limit (default def), --sample-type,
// --thread, --process and --cursor.
func (r *StacksRequest) Flags(fs *pflag.FlagSet, def int) {
	limitFlag(fs, &r.Limit, def, "rows")
	sampleTypeFlag(fs, &r.SampleType)
	threadFlags(fs, &r.Thread, &r.Process)
	cursorFlag(fs, &r.Cursor)
}

// VerbFlags registers one flag set for every analysis verb, as fox-analyze
// has: a stacks request's flags (default --limit 20), then --focus and
// --ignore, which filter hotspots only. Stacks gives the request of the
// other verbs.
func (r *HotspotsRequest) VerbFlags(fs *pflag.FlagSet) {
	limitFlag(fs, &r.Limit, 20, "rows")
	sampleTypeFlag(fs, &r.SampleType)
	threadFlags(fs, &r.Thread, &r.Process)
	cursorFlag(fs, &r.Cursor)
	fs.StringVar(&r.Focus, "focus", "", "hotspots: only samples with a frame matching this regexp (go tool pprof -focus)")
	fs.StringVar(&r.Ignore, "ignore", "", "hotspots: drop samples with a frame matching this regexp (go tool pprof -ignore)")
}

// Stacks is the stacks request through frameID (a frame id or a regexp of
// function names) with r's input, sample type, filters and page. Focus and
// Ignore have no counterpart: the caller refuses them.
func (r *HotspotsRequest) Stacks(frameID string) StacksRequest {
	return StacksRequest{Input: r.Input, FrameID: frameID, SampleType: r.SampleType, Thread: r.Thread,
		Process: r.Process, Limit: r.Limit, Cursor: r.Cursor}
}

func limitFlag(fs *pflag.FlagSet, p *int, def int, what string) {
	fs.IntVar(p, "limit", def, what+" to return (max 1000)")
}

func sampleTypeFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "sample-type", "", "sample type (default: the profile's default)")
}

func threadFlags(fs *pflag.FlagSet, thread, process *string) {
	fs.StringVar(thread, "thread", "", "only samples of this thread")
	fs.StringVar(process, "process", "", "only samples of this process")
}

func cursorFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "cursor", "", "continue after a previous page")
}
