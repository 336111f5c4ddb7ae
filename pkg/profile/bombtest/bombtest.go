// Package bombtest writes the bomb corpus: small files that inflate into
// far more than they weigh (gzip bombs of every format flameox reads),
// files over each decoding limit, and large or odd but genuine profiles (a
// 10^6-location pprof, huge names, invalid UTF-8). Tests import each file
// under an address-space limit and require a structured error or a correct
// result; scripts/bench/bombs.sh measures them.
//
// The files are generated, never committed. A gzip bomb is written as
// many gzip members of one compressed block each: a gzip reader reads
// concatenated members as one stream (RFC 1952, section 2.2), so a
// gigabyte inflates from a few MB that take milliseconds to write.
package bombtest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
)

// Outcome is what importing a case must end in.
type Outcome string

const (
	// Refused: ARTIFACT_TOO_LARGE naming Limit (a [limits] key).
	Refused Outcome = "refused"
	// Imported: a published run whose hotspots hold Frames frames and
	// Total for the default sample type.
	Imported Outcome = "imported"
	// Either: a structured error or a published run.
	Either Outcome = "either"
)

// Case is one file of the corpus.
type Case struct {
	Name    string
	File    string // path of the written file
	Format  string // pprof, speedscope, collapsed, perf-script
	Want    Outcome
	Limit   string // for Refused: the [limits] key, e.g. "max_strings"
	Large   bool   // slow to import (seconds); tests may skip it with -short
	Inflate int64  // decompressed bytes
	// For Imported: the distinct functions on some stack, and the total
	// of the default (last) sample type.
	Frames int
	Total  int64
}

// spec is a case before it is written.
type spec struct {
	Case
	write func(path string) (int64, error)
}

// expected holds, for each Imported case, its frames and total (computed
// when the case is written).
var expected = map[string]func() (frames int, total int64){
	"pprof-1e6-locations.pb.gz": millionExpect,
	"pprof-huge-name.pb.gz":     fixed(2, 7),
	"collapsed-huge-name.txt":   fixed(3, 3),
}

func fixed(frames int, total int64) func() (int, int64) {
	return func() (int, int64) { return frames, total }
}

const gib = 1 << 30

func specs() []spec {
	return []spec{
		// The reproductions of issue 12: ~1 GiB of empty string-table
		// entries, and a speedscope file of tiny frames.
		{Case{Name: "pprof-strings.pb.gz", Format: "pprof", Want: Refused, Limit: "max_strings"},
			repeatGz([]byte("\x32\x00"), gib)},
		{Case{Name: "pprof-locations.pb.gz", Format: "pprof", Want: Refused, Limit: "max_locations"},
			repeatGz([]byte("\x22\x00"), gib)},
		{Case{Name: "pprof-samples.pb.gz", Format: "pprof", Want: Refused, Limit: "max_samples"},
			repeatGz([]byte("\x12\x00"), gib)},
		{Case{Name: "pprof-functions.pb.gz", Format: "pprof", Want: Refused, Limit: "max_functions"},
			repeatGz([]byte("\x2a\x00"), gib)},
		{Case{Name: "pprof-mappings.pb.gz", Format: "pprof", Want: Refused, Limit: "max_mappings"},
			repeatGz([]byte("\x1a\x00"), gib)},
		{Case{Name: "pprof-sample-types.pb.gz", Format: "pprof", Want: Refused, Limit: "max_sample_types"},
			repeatGz([]byte("\x0a\x00"), gib)},
		// One sample whose packed location ids go on for 1 GiB.
		{Case{Name: "pprof-deep-sample.pb.gz", Format: "pprof", Want: Refused, Limit: "max_stack_depth"},
			prefixedGz([]byte("\x12\x80\x80\x80\x80\x04\x0a\x80\x80\x80\x80\x04"), []byte{1}, gib-16)},
		// Samples of 60,000 location ids each: 128M ids in 2,200 samples.
		{Case{Name: "pprof-frames.pb.gz", Format: "pprof", Want: Refused, Limit: "max_stack_frames"},
			repeatGz(packedSample(60000), 2300*60006)},
		// One sample of 1 GiB of empty labels.
		{Case{Name: "pprof-sample-labels.pb.gz", Format: "pprof", Want: Refused, Limit: "max_labels"},
			prefixedGz([]byte("\x12\x80\x80\x80\x80\x04"), []byte("\x1a\x00"), gib)},
		// Samples of 10,000 empty labels each.
		{Case{Name: "pprof-labels.pb.gz", Format: "pprof", Want: Refused, Limit: "max_labels"},
			repeatGz(labelledSample(10000), 2000*20004)},
		{Case{Name: "speedscope-frames.json.gz", Format: "speedscope", Want: Refused, Limit: "max_locations"},
			jsonGz(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[`, `{"name":"f"},`, `{"name":"f"}]},"profiles":[]}`, 64<<20)},
		{Case{Name: "speedscope-samples.json.gz", Format: "speedscope", Want: Refused, Limit: "max_samples"},
			jsonGz(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":1,"weights":[],"samples":[`, `[],`, `[]]}]}`, 16<<20)},
		{Case{Name: "speedscope-stack.json.gz", Format: "speedscope", Want: Refused, Limit: "max_stack_depth"},
			jsonGz(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},"profiles":[{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":1,"weights":[1],"samples":[[`, `0,`, `0]]}]}`, 1<<20)},
		{Case{Name: "speedscope-events.json.gz", Format: "speedscope", Want: Refused, Limit: "max_events"},
			jsonGz(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},"profiles":[{"type":"evented","name":"t","unit":"none","startValue":0,"endValue":1,"events":[`, `{"type":"O"},{"type":"C"},`, `{"type":"O"}]}]}`, 128<<20)},
		// 100,000 levels of nesting inside an otherwise valid file.
		{Case{Name: "speedscope-deep.json", Format: "speedscope", Want: Refused, Limit: "max_json_depth"},
			plain(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},"profiles":[],"x":` +
				strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`)},
		// Issue 12's size: inflates past max_decompressed_bytes.
		{Case{Name: "speedscope-huge.json.gz", Format: "speedscope", Want: Refused, Limit: "max_decompressed_bytes", Large: true},
			jsonGz(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[`, `{"name":"f","file":"g"},`, `{"name":"f"}]},"profiles":[]}`, gib+(64<<20))},
		{Case{Name: "collapsed-lines.txt.gz", Format: "collapsed", Want: Refused, Limit: "max_samples"},
			repeatGz([]byte("a;b 1\n"), gib)},
		{Case{Name: "collapsed-names.txt.gz", Format: "collapsed", Want: Refused, Limit: "max_string_bytes", Large: true},
			prefixedGz([]byte("a;b 1\na;"), []byte("n"), 600<<20)},
		{Case{Name: "collapsed-deep.txt.gz", Format: "collapsed", Want: Refused, Limit: "max_stack_depth"},
			prefixedGz([]byte("a;b 1\na;b;"), []byte("c;"), 256<<20)},
		// One sample repeated: it merges into one stack, so it streams in
		// constant memory until the byte cap stops it.
		{Case{Name: "perf-repeat.txt.gz", Format: "perf-script", Want: Refused, Limit: "max_decompressed_bytes", Large: true},
			repeatGz([]byte("a 1 [000] 1.0: 1 cycles:\n\t1 f (m)\n\t2 g (m)\n\n"), gib+(16<<20))},
		{Case{Name: "perf-deep.txt.gz", Format: "perf-script", Want: Refused, Limit: "max_stack_depth"},
			prefixedGz([]byte("a 1 [000] 1.0: 1 cycles:\n"), []byte("\t1 f (m)\n"), 256<<20)},
		// Genuine but large or odd.
		{Case{Name: "pprof-1e6-locations.pb.gz", Format: "pprof", Want: Imported, Large: true},
			millionLocations},
		{Case{Name: "pprof-huge-name.pb.gz", Format: "pprof", Want: Imported},
			hugeName},
		{Case{Name: "collapsed-huge-name.txt", Format: "collapsed", Want: Imported},
			plain("a;b 2\na;" + strings.Repeat("n", 32<<20) + " 1\n")},
		{Case{Name: "pprof-invalid-utf8.pb.gz", Format: "pprof", Want: Either},
			invalidUTF8},
		{Case{Name: "collapsed-invalid-utf8.txt", Format: "collapsed", Want: Either},
			plain("a\xff;b\xc3\x28 1\na;\xed\xa0\x80 2\n")},
	}
}

// Write writes every case into dir and returns them. With short, the
// cases marked Large are left out.
func Write(dir string, short bool) ([]Case, error) {
	var out []Case
	for _, s := range specs() {
		if short && s.Large {
			continue
		}
		c := s.Case
		c.File = filepath.Join(dir, c.Name)
		n, err := s.write(c.File)
		if err != nil {
			return nil, fmt.Errorf("bombtest: write %s: %w", c.Name, err)
		}
		c.Inflate = n
		if e, ok := expected[c.Name]; ok {
			c.Frames, c.Total = e()
		}
		out = append(out, c)
	}
	return out, nil
}

// Names lists the cases, in order.
func Names() []string {
	var out []string
	for _, s := range specs() {
		out = append(out, s.Name)
	}
	return out
}

// repeatGz writes unit repeated to about n bytes, gzipped.
func repeatGz(unit []byte, n int64) func(string) (int64, error) {
	return func(path string) (int64, error) { return writeGz(path, nil, unit, nil, n) }
}

// prefixedGz writes head, then unit repeated to about n bytes, gzipped.
func prefixedGz(head, unit []byte, n int64) func(string) (int64, error) {
	return func(path string) (int64, error) { return writeGz(path, head, unit, nil, n) }
}

// jsonGz writes head, unit repeated to about n bytes, then tail, gzipped.
func jsonGz(head, unit, tail string, n int64) func(string) (int64, error) {
	return func(path string) (int64, error) { return writeGz(path, []byte(head), []byte(unit), []byte(tail), n) }
}

func plain(s string) func(string) (int64, error) {
	return func(path string) (int64, error) { return int64(len(s)), os.WriteFile(path, []byte(s), 0o600) }
}

// writeGz writes head + unit*k + tail (k units make about n bytes) as
// gzip members: head, one member holding a 1 MiB block of units written k
// times over, the remainder, and tail.
func writeGz(path string, head, unit, tail []byte, n int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	member := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
		if _, err := zw.Write(b); err != nil {
			return err
		}
		return zw.Close()
	}
	units := (n - int64(len(head)) - int64(len(tail))) / int64(len(unit))
	per := max(1, int64(1<<20)/int64(len(unit)))
	var block bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&block, gzip.BestCompression)
	zw.Write(bytes.Repeat(unit, int(per)))
	zw.Close()
	if err := member(head); err != nil {
		return 0, err
	}
	total := int64(len(head))
	for k := int64(0); k+per <= units; k += per {
		if _, err := f.Write(block.Bytes()); err != nil {
			return 0, err
		}
		total += per * int64(len(unit))
	}
	rest := units % per
	if err := member(bytes.Repeat(unit, int(rest))); err != nil {
		return 0, err
	}
	if err := member(tail); err != nil {
		return 0, err
	}
	total += rest*int64(len(unit)) + int64(len(tail))
	return total, f.Close()
}

// packedSample is a Sample message (Profile field 2) with n packed
// location ids, all 1.
func packedSample(n int) []byte {
	ids := bytes.Repeat([]byte{1}, n)
	inner := append(append([]byte{0x0a}, uvarint(uint64(n))...), ids...)
	return append(append([]byte{0x12}, uvarint(uint64(len(inner)))...), inner...)
}

// labelledSample is a Sample message with n empty labels.
func labelledSample(n int) []byte {
	inner := bytes.Repeat([]byte{0x1a, 0x00}, n)
	return append(append([]byte{0x12}, uvarint(uint64(len(inner)))...), inner...)
}

func uvarint(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// writeProfile gzips p into path and returns its uncompressed size.
func writeProfile(path string, p *profile.Profile) (int64, error) {
	if err := p.CheckValid(); err != nil {
		return 0, err
	}
	var raw bytes.Buffer
	if err := p.WriteUncompressed(&raw); err != nil {
		return 0, err
	}
	n := int64(raw.Len())
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if _, err := raw.WriteTo(zw); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return n, f.Close()
}

// MillionLocations is the shape of the 10^6-location profile: its
// locations (one function each), samples and call-tree levels.
const (
	MillionLocations = 1000000
	MillionSamples   = 250000
	MillionLevels    = 64
)

// millionLocations is a CPU profile with 10^6 locations and functions in
// a call tree of 64 levels (each location's caller is a random location of
// the level above, as in a program's call graph), and 250,000 samples whose
// leaves are random locations of the lower 32 levels: stacks 33 to 64
// frames deep (about 12M frames), sharing their callers near the root.
func millionLocations(path string) (int64, error) { return writeProfile(path, million()) }

// millionExpect is the 10^6-location profile's distinct functions on some
// stack and its CPU time.
func millionExpect() (int, int64) {
	p := million()
	seen := map[uint64]bool{}
	total := int64(0)
	for _, s := range p.Sample {
		total += s.Value[len(s.Value)-1]
		for _, l := range s.Location {
			seen[l.ID] = true
		}
	}
	return len(seen), total
}

func million() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10000000,
	}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x40000000, File: "/usr/bin/app", HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	for i := 0; i < MillionLocations; i++ {
		name := fmt.Sprintf("app/pkg%03d.(*T%d).Method%d", i%977, i%31, i)
		fn := &profile.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: fmt.Sprintf("/src/app/pkg%03d/f%d.go", i%977, i%89)}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Mapping: m, Address: 0x400000 + uint64(i)*16,
			Line: []profile.Line{{Function: fn, Line: int64(i%500 + 1)}}})
	}
	state := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
	per := MillionLocations / MillionLevels // locations per level; level L holds [L*per, (L+1)*per)
	parent := make([]int, MillionLocations)
	for i := per; i < MillionLocations; i++ {
		level := min(i/per, MillionLevels-1)
		parent[i] = (level-1)*per + int(next()%uint64(per))
	}
	for s := 0; s < MillionSamples; s++ {
		level := MillionLevels/2 + int(next()%uint64(MillionLevels/2))
		leaf := level*per + int(next()%uint64(per))
		var locs []*profile.Location
		for id := leaf; ; id = parent[id] {
			locs = append(locs, p.Location[id])
			if id < per {
				break
			}
		}
		v := int64(next()%5 + 1)
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{v, v * 10000000}})
	}
	return p
}

// hugeName is a valid profile whose hot function has a 64 MiB name.
func hugeName(path string) (int64, error) {
	return writeProfile(path, small(strings.Repeat("N", 64<<20)))
}

// invalidUTF8 is a valid profile whose function names and file are not
// UTF-8.
func invalidUTF8(path string) (int64, error) {
	p := small("main.\xff\xfebad")
	p.Function[1].Filename = "/src/\xc3\x28.go"
	return writeProfile(path, p)
}

// small is a two-function profile whose leaf is named leaf.
func small(leaf string) *profile.Profile {
	f1 := &profile.Function{ID: 1, Name: "main.main", SystemName: "main.main", Filename: "main.go"}
	f2 := &profile.Function{ID: 2, Name: leaf, SystemName: leaf, Filename: "leaf.go"}
	l1 := &profile.Location{ID: 1, Line: []profile.Line{{Function: f1, Line: 3}}}
	l2 := &profile.Location{ID: 2, Line: []profile.Line{{Function: f2, Line: 7}}}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1,
		Function: []*profile.Function{f1, f2}, Location: []*profile.Location{l1, l2},
		Sample: []*profile.Sample{{Location: []*profile.Location{l2, l1}, Value: []int64{5}},
			{Location: []*profile.Location{l1}, Value: []int64{2}}},
	}
}
