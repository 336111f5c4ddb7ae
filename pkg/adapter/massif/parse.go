package massif

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// No maintained Go library reads massif.out (the format is documented in
// Valgrind's manual and read by its own Perl ms_print and by
// massif-visualizer in C++), so this is a small line parser of its own,
// bounded by the workspace's limits.

// File is a parsed massif.out: its header, every snapshot, and the
// allocation tree of the peak snapshot (the last detailed one when no
// snapshot is marked peak).
type File struct {
	Desc, Cmd, TimeUnit string
	Snapshots           []Snapshot
	// Peak is the index in Snapshots of the peak snapshot, -1 for none.
	Peak int
	// Tree is the allocation tree of snapshot TreeOf (Peak when it has
	// one), in preorder; Tree[0] is the root, "(heap allocation
	// functions)". Empty when no snapshot is detailed.
	Tree   []Node
	TreeOf int
}

// Snapshot is one snapshot's sizes.
type Snapshot struct {
	Num                     int
	Time                    int64
	Heap, HeapExtra, Stacks int64
	HeapTree                string // empty, detailed or peak
}

// Total is what ms_print shows as total(B): heap, extra heap and stacks.
func (s Snapshot) Total() int64 { return s.Heap + s.HeapExtra + s.Stacks }

// Node is one allocation-tree node: bytes allocated (and live at the
// snapshot) beneath it, inclusive of its children.
type Node struct {
	Parent   int32 // -1 for the root
	Bytes    int64
	Children int
	Addr     string
	// Function is "(allocators below massif's threshold)" or "(callers
	// below massif's threshold)" for the places massif aggregated as
	// insignificant, at the top of the tree or further out.
	Function string
	File     string
	Line     int64
	Module   string // the object file for frames without source ("in /lib/...")
}

// ParseError is a massif.out that is not well formed; TooLarge is one
// over a limit.
type ParseError struct {
	Line   int
	Reason string
	// Limit is the limits key exceeded, for a file over a limit.
	Limit         string
	Max, Observed int64
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("massif.out line %d: %s", e.Line, e.Reason)
	}
	return "massif.out: " + e.Reason
}

// IsBzip2 reports whether head starts a bzip2 stream.
func IsBzip2(head []byte) bool {
	return len(head) >= 4 && head[0] == 'B' && head[1] == 'Z' && head[2] == 'h' && head[3] >= '1' && head[3] <= '9'
}

// LooksMassif reports whether a (decompressed) head starts as massif
// writes every file: a desc: line, then cmd: and time_unit:.
func LooksMassif(head []byte) bool {
	for _, want := range []string{"desc:", "cmd:", "time_unit:"} {
		if !bytes.HasPrefix(head, []byte(want)) {
			return false
		}
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return want == "desc:" || want == "cmd:" // a short head still names the format
		}
		head = head[i+1:]
		if len(head) == 0 {
			return true // a short file names the format; Parse says what it lacks
		}
	}
	return true
}

func limits(l config.Limits) config.Limits {
	d := config.DefaultLimits()
	for _, p := range []struct{ v, def *int64 }{{&l.MaxDecompressedBytes, &d.MaxDecompressedBytes}, {&l.MaxSamples, &d.MaxSamples},
		{&l.MaxLocations, &d.MaxLocations}, {&l.MaxStringBytes, &d.MaxStringBytes}, {&l.MaxStackDepth, &d.MaxStackDepth}} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	return l
}

// limitedReader counts bytes and fails past max.
type limitedReader struct {
	r      io.Reader
	n, max int64
	last   byte
	over   bool
}

var errTooBig = errors.New("too many bytes")

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if n > 0 {
		l.last = p[n-1]
	}
	if l.n > l.max {
		l.over = true
		return n, errTooBig
	}
	return n, err
}

// maxLine bounds one line (a frame's name and file).
const maxLine = 1 << 20

type parser struct {
	sc      *bufio.Scanner
	lr      *limitedReader
	line    int
	lim     config.Limits
	text    string
	strings int64
	nodes   int64
}

// Parse reads a massif.out, plain or bzip2-compressed, within lim: the
// bytes read (after decompression, max_decompressed_bytes), the snapshots
// (max_samples), the nodes of one tree (max_locations), the bytes of the
// kept names (max_string_bytes) and a tree's depth (max_stack_depth).
func Parse(r io.Reader, lim config.Limits) (*File, error) {
	lim = limits(lim)
	br := bufio.NewReaderSize(r, 64<<10)
	var in io.Reader = br
	if magic, _ := br.Peek(4); IsBzip2(magic) {
		in = bzip2.NewReader(br)
	}
	lr := &limitedReader{r: in, max: lim.MaxDecompressedBytes}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	p := &parser{sc: sc, lr: lr, lim: lim}
	f, err := p.file()
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (p *parser) fail(format string, args ...any) error {
	return &ParseError{Line: p.line, Reason: fmt.Sprintf(format, args...)}
}

// next reads the next line into p.text; at the end it reports false and
// an error for a read failure, an over-long line or a cut-off last line.
func (p *parser) next() (bool, error) {
	if !p.sc.Scan() {
		err := p.sc.Err()
		switch {
		case p.lr.over || errors.Is(err, errTooBig):
			return false, &ParseError{Reason: fmt.Sprintf("more than %d bytes (limits.max_decompressed_bytes)", p.lim.MaxDecompressedBytes),
				Limit: "max_decompressed_bytes", Max: p.lim.MaxDecompressedBytes, Observed: p.lr.n}
		case errors.Is(err, bufio.ErrTooLong):
			return false, p.fail("a line longer than %d bytes", maxLine)
		case err != nil:
			return false, &ParseError{Line: p.line + 1, Reason: "reading: " + err.Error()}
		}
		return false, nil
	}
	p.line++
	p.text = p.sc.Text()
	return true, nil
}

func (p *parser) file() (*File, error) {
	f := &File{Peak: -1, TreeOf: -1}
	for _, key := range []string{"desc", "cmd", "time_unit"} {
		ok, err := p.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			if p.line == 0 {
				return nil, &ParseError{Reason: "the file is empty"}
			}
			return nil, p.fail("the header ends before its %s: line (truncated)", key)
		}
		v, found := strings.CutPrefix(p.text, key+":")
		if !found {
			return nil, p.fail("expected the header line %q, found %q: not a massif.out file", key+": ...", clip(p.text))
		}
		v = strings.TrimPrefix(v, " ")
		switch key {
		case "desc":
			f.Desc = v
		case "cmd":
			f.Cmd = v
		case "time_unit":
			if v != "i" && v != "ms" && v != "B" {
				return nil, p.fail("time_unit %q is none of massif's (i, ms, B)", clip(v))
			}
			f.TimeUnit = v
		}
	}
	ok, err := p.next()
	for {
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if p.text != "#-----------" {
			return nil, p.fail("expected a snapshot separator, found %q", clip(p.text))
		}
		s, tree, serr := p.snapshot(len(f.Snapshots))
		if serr != nil {
			return nil, serr
		}
		if int64(len(f.Snapshots)) >= p.lim.MaxSamples {
			return nil, &ParseError{Line: p.line, Reason: fmt.Sprintf("more than %d snapshots (limits.max_samples)", p.lim.MaxSamples),
				Limit: "max_samples", Max: p.lim.MaxSamples, Observed: int64(len(f.Snapshots)) + 1}
		}
		f.Snapshots = append(f.Snapshots, s)
		if tree != nil && (f.Peak < 0 || s.HeapTree == "peak") {
			if s.HeapTree == "peak" {
				if f.Peak >= 0 {
					return nil, p.fail("a second peak snapshot (%d)", s.Num)
				}
				f.Peak = len(f.Snapshots) - 1
			}
			f.Tree, f.TreeOf = tree, len(f.Snapshots)-1
		}
		ok, err = p.next()
	}
	if len(f.Snapshots) == 0 {
		return nil, p.fail("no snapshot follows the header (truncated)")
	}
	if p.lr.last != '\n' {
		return nil, p.fail("the last line has no newline: the file was cut off (truncated)")
	}
	return f, nil
}

// snapshot reads one snapshot after its first separator; the tree it
// returns is nil unless the snapshot is detailed.
func (p *parser) snapshot(want int) (Snapshot, []Node, error) {
	var s Snapshot
	fields := []string{"snapshot", "#-----------", "time", "mem_heap_B", "mem_heap_extra_B", "mem_stacks_B", "heap_tree"}
	for _, key := range fields {
		ok, err := p.next()
		if err != nil {
			return s, nil, err
		}
		if !ok {
			return s, nil, p.fail("snapshot %d ends before its %s line (truncated)", want, key)
		}
		if key == "#-----------" {
			if p.text != key {
				return s, nil, p.fail("expected a snapshot separator, found %q", clip(p.text))
			}
			continue
		}
		v, found := strings.CutPrefix(p.text, key+"=")
		if !found {
			return s, nil, p.fail("expected %s=..., found %q", key, clip(p.text))
		}
		if key == "heap_tree" {
			if v != "empty" && v != "detailed" && v != "peak" {
				return s, nil, p.fail("heap_tree=%q is none of empty, detailed, peak", clip(v))
			}
			s.HeapTree = v
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return s, nil, p.fail("%s=%q is not a byte or time count", key, clip(v))
		}
		switch key {
		case "snapshot":
			if n != int64(want) {
				return s, nil, p.fail("snapshot=%d where snapshot %d was expected", n, want)
			}
			s.Num = int(n)
		case "time":
			s.Time = n
		case "mem_heap_B":
			s.Heap = n
		case "mem_heap_extra_B":
			s.HeapExtra = n
		case "mem_stacks_B":
			s.Stacks = n
		}
	}
	if s.Heap > 1<<62 || s.HeapExtra > 1<<62 || s.Stacks > 1<<62 {
		return s, nil, p.fail("snapshot %d's sizes overflow", s.Num)
	}
	if s.HeapTree == "empty" {
		return s, nil, nil
	}
	p.nodes, p.strings = 0, 0
	tree, err := p.tree(nil, -1, 0)
	if err != nil {
		return s, nil, err
	}
	if tree[0].Bytes != s.Heap {
		return s, nil, p.fail("snapshot %d's tree holds %d bytes, its mem_heap_B %d", s.Num, tree[0].Bytes, s.Heap)
	}
	return s, tree, nil
}

// tree reads the node at depth (its children recursively) into nodes.
func (p *parser) tree(nodes []Node, parent int32, depth int) ([]Node, error) {
	if int64(depth) >= p.lim.MaxStackDepth {
		return nil, &ParseError{Line: p.line, Reason: fmt.Sprintf("an allocation tree deeper than %d (limits.max_stack_depth)", p.lim.MaxStackDepth),
			Limit: "max_stack_depth", Max: p.lim.MaxStackDepth, Observed: int64(depth) + 1}
	}
	ok, err := p.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, p.fail("the allocation tree ends early (truncated)")
	}
	p.nodes++
	if p.nodes > p.lim.MaxLocations {
		return nil, &ParseError{Line: p.line, Reason: fmt.Sprintf("an allocation tree of more than %d nodes (limits.max_locations)", p.lim.MaxLocations),
			Limit: "max_locations", Max: p.lim.MaxLocations, Observed: p.nodes}
	}
	n, err := p.node(depth)
	if err != nil {
		return nil, err
	}
	n.Parent = parent
	p.strings += int64(len(n.Function) + len(n.File) + len(n.Module) + len(n.Addr))
	if p.strings > p.lim.MaxStringBytes {
		return nil, &ParseError{Line: p.line, Reason: fmt.Sprintf("an allocation tree whose names exceed %d bytes (limits.max_string_bytes)", p.lim.MaxStringBytes),
			Limit: "max_string_bytes", Max: p.lim.MaxStringBytes, Observed: p.strings}
	}
	self := int32(len(nodes))
	nodes = append(nodes, n)
	var sum int64
	for range n.Children {
		k := len(nodes)
		if nodes, err = p.tree(nodes, self, depth+1); err != nil {
			return nil, err
		}
		sum += nodes[k].Bytes
	}
	if sum > n.Bytes {
		return nil, &ParseError{Line: p.line, Reason: fmt.Sprintf("the children of the node of %d bytes hold %d bytes", n.Bytes, sum)}
	}
	return nodes, nil
}

// node parses "  nC: BYTES 0xADDR: fn (file:line)" at depth (its
// indentation), "nC: BYTES in N places, ..." or the root's description.
func (p *parser) node(depth int) (Node, error) {
	t := p.text
	if len(t) < depth || strings.TrimLeft(t[:depth], " ") != "" || (len(t) > depth && t[depth] == ' ') {
		return Node{}, p.fail("an allocation-tree line at the wrong depth (expected %d spaces): %q", depth, clip(t))
	}
	t = t[depth:]
	if !strings.HasPrefix(t, "n") {
		return Node{}, p.fail("expected an allocation-tree node (nN: BYTES ...), found %q", clip(t))
	}
	colon := strings.IndexByte(t, ':')
	if colon < 0 {
		return Node{}, p.fail("an allocation-tree node without its child count: %q", clip(t))
	}
	c, err := strconv.Atoi(t[1:colon])
	if err != nil || c < 0 {
		return Node{}, p.fail("bad child count in %q", clip(t))
	}
	rest := strings.TrimPrefix(t[colon+1:], " ")
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		sp = len(rest)
	}
	b, err := strconv.ParseInt(rest[:sp], 10, 64)
	if err != nil || b < 0 || b > 1<<62 {
		return Node{}, p.fail("bad byte count in %q", clip(t))
	}
	n := Node{Bytes: b, Children: c}
	desc := strings.TrimPrefix(rest[sp:], " ")
	if depth == 0 {
		n.Function = desc
		if n.Function == "" {
			n.Function = "(heap allocation functions)"
		}
		return n, nil
	}
	if strings.HasPrefix(desc, "in ") && strings.Contains(desc, "below massif's threshold") {
		if c != 0 {
			return Node{}, p.fail("an insignificant-places node with children: %q", clip(t))
		}
		n.Function = "(callers below massif's threshold)"
		if depth == 1 {
			n.Function = "(allocators below massif's threshold)"
		}
		return n, nil
	}
	addr, fn, found := strings.Cut(desc, ": ")
	if !found || !strings.HasPrefix(addr, "0x") {
		return Node{}, p.fail("expected 0xADDR: function in %q", clip(t))
	}
	n.Addr = addr
	if i := strings.LastIndex(fn, " ("); i >= 0 && strings.HasSuffix(fn, ")") {
		loc := fn[i+2 : len(fn)-1]
		fn = fn[:i]
		if mod, ok := strings.CutPrefix(loc, "in "); ok {
			n.Module = mod
		} else if j := strings.LastIndexByte(loc, ':'); j >= 0 {
			if line, err := strconv.ParseInt(loc[j+1:], 10, 32); err == nil && line >= 0 {
				n.File, n.Line = loc[:j], line
			} else {
				n.File = loc
			}
		} else {
			n.File = loc
		}
	}
	if fn == "" {
		fn = "???"
	}
	n.Function = fn
	return n, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
