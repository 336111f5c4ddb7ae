package profile

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// A chunked parse of perf script text: the text is cut into chunks of
// about perfChunkBytes at sample boundaries, the chunks are handed round
// the workers, each a perfParser of its own, and the parsers' distinct
// frames, stacks and events are merged in the order they first appear in
// the input (each parser records the line where it first saw each), so
// that the result equals the parse on one goroutine (parsePerfStream;
// TestPerfChunkedMatchesStream and FuzzPerfChunked check it). Parsing is
// most of what importing a large recording costs, and one goroutine
// leaves the other CPUs idle.
//
// A chunk is cut before a line that starts neither with blank space nor
// with '#': a blank line or a sample header, both of which end the open
// sample, so no sample spans two chunks. A chunk with no such line (one
// sample's callchain longer than a chunk) is cut at its last line end
// instead, and the next chunk goes to the same worker, which keeps the
// sample open across them.
//
// The limits hold for each parser as they read, which bounds what a
// worker allocates, and for the merged counts after; a limit that only
// the merged counts pass fails with no line number. An input of one chunk
// is parsed on the calling goroutine.
const (
	perfChunkBytes = 1 << 20
	maxPerfWorkers = 4
	// readLine's buffer: a line is checked against MaxStringBytes only
	// once it is longer than this, as parsePerfStream does.
	perfLineBuffer = 256 << 10
)

type perfChunk struct {
	buf    []byte // returned to the pool after parsing
	data   []byte // whole lines
	line   int    // number of data's first line
	closed bool   // data ends at a sample boundary (or at the end of the input)
	cont   bool   // data continues the previous chunk's open sample
	err    error  // a read failure after data
}

// perfFailure is a worker's (or the reader's) first failure and where.
type perfFailure struct {
	line int
	err  error
}

func parsePerfChunked(r io.Reader, opts Options, workers, chunkBytes int) (*Profile, error) {
	lim := opts.limits()
	opts.Limits = lim
	pool := &chunkPool{size: chunkBytes, free: make(chan []byte, 3*workers+2)}
	ck := chunker{r: r, lim: lim, pool: pool, line: 1}

	first := ck.next()
	if first.err == nil && first.closed && ck.done {
		// One chunk: no goroutine, no merge.
		pp := newPerfParser(opts)
		if f := pp.chunk(first); f != nil {
			return nil, f.err
		}
		return pp.finish()
	}

	parsers := make([]*perfParser, workers)
	fails := make([]*perfFailure, workers)
	queues := make([]chan *perfChunk, workers)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for i := range parsers {
		parsers[i] = newPerfParser(opts)
		queues[i] = make(chan *perfChunk, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range queues[i] {
				if fails[i] == nil {
					if f := parsers[i].chunk(c); f != nil {
						fails[i] = f
						failed.Store(true)
					}
				}
				pool.put(c.buf)
			}
		}()
	}
	var readFail *perfFailure
	w := 0
	for c := first; ; c = ck.next() {
		if !c.cont {
			w = (w + 1) % workers
		}
		errLine := c.line + bytes.Count(c.data, []byte{'\n'})
		err := c.err
		c.err = nil
		queues[w] <- c
		if err != nil {
			readFail = &perfFailure{errLine, err}
			break
		}
		if ck.done || failed.Load() {
			break
		}
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	if readFail != nil {
		fails = append(fails, readFail)
	}
	return mergePerf(parsers, fails)
}

// chunk parses one chunk's lines, ending the open sample when the chunk
// ends at a sample boundary.
func (pp *perfParser) chunk(c *perfChunk) *perfFailure {
	n := c.line
	data := c.data
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		raw := data
		if i >= 0 {
			raw = data[:i+1]
		}
		data = data[len(raw):]
		// parsePerfStream's readLine fails a line longer than its buffer
		// once the line passes MaxStringBytes.
		if l := int64(len(raw)); l > perfLineBuffer && l > pp.lim.MaxStringBytes {
			pe := tooMany(FormatPerfScript, LimitStringBytes, pp.lim.MaxStringBytes, l, "bytes in one line")
			pe.Line = n
			return &perfFailure{n, pe}
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
		if err := pp.line(n, line); err != nil {
			return &perfFailure{n, err}
		}
		pp.lastLine = n
		n++
	}
	if c.closed {
		if err := pp.endSample(); err != nil {
			return &perfFailure{n, err}
		}
	}
	return nil
}

// chunker cuts the input into chunks.
type chunker struct {
	r    io.Reader
	lim  Limits
	pool *chunkPool
	buf  []byte // the next chunk's start: what followed the last cut
	line int
	cont bool
	done bool
}

func (ck *chunker) next() *perfChunk {
	buf := ck.pool.get()
	buf = append(buf[:0], ck.buf...)
	ck.buf = ck.buf[:0]
	for {
		n, err := io.ReadFull(ck.r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		c := &perfChunk{buf: buf, line: ck.line, cont: ck.cont}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			ck.done = true
			c.data, c.closed = buf, true
			return c
		case err != nil: // the whole lines, then the failure
			c.data, c.err = buf[:bytes.LastIndexByte(buf, '\n')+1], err
			ck.done = true
			return c
		}
		k, boundary := perfCut(buf)
		if k == 0 { // no line end: one line longer than the buffer
			if l := int64(len(buf)); l > perfLineBuffer && l > ck.lim.MaxStringBytes {
				pe := tooMany(FormatPerfScript, LimitStringBytes, ck.lim.MaxStringBytes, l, "bytes in one line")
				pe.Line = ck.line
				c.data, c.err = buf[:0], pe
				ck.done = true
				return c
			}
			buf = slices.Grow(buf, cap(buf))
			continue
		}
		ck.buf = append(ck.buf, buf[k:]...)
		c.data, c.closed = buf[:k], boundary
		ck.line += bytes.Count(c.data, []byte{'\n'})
		ck.cont = !boundary
		return c
	}
}

// perfCut returns where to end a full buffer: after the last line end
// that is followed by a line that ends any open sample (boundary), else
// after the last line end (0 if there is none).
func perfCut(buf []byte) (k int, boundary bool) {
	last := -1
	for end := len(buf); ; {
		i := bytes.LastIndexByte(buf[:end], '\n')
		if i < 0 {
			return last + 1, false
		}
		if last < 0 {
			last = i
		}
		if i+1 < len(buf) {
			if c := buf[i+1]; c != ' ' && c != '\t' && c != '#' {
				return i + 1, true
			}
		}
		end = i
	}
}

// chunkPool recycles chunk buffers, so that a parse holds a few chunks,
// not the whole text.
type chunkPool struct {
	size int
	free chan []byte
}

func (p *chunkPool) get() []byte {
	select {
	case b := <-p.free:
		return b[:0]
	default:
		return make([]byte, 0, p.size)
	}
}

func (p *chunkPool) put(b []byte) {
	select {
	case p.free <- b:
	default:
	}
}

// mergePerf joins the workers' parses into one, in the input's order, and
// returns the earliest failure (by line) if any part failed.
func mergePerf(parsers []*perfParser, fails []*perfFailure) (*Profile, error) {
	var first *perfFailure
	for _, f := range fails {
		if f != nil && (first == nil || f.line < first.line) {
			first = f
		}
	}
	m := newPerfParser(parsers[0].opts)
	// Events, by first appearance; an event whose samples disagree
	// between workers on having a period fails at the first sample of
	// the worker that disagrees with the first.
	type evFirst struct {
		line      int
		hasPeriod bool
	}
	evs := map[string]evFirst{}
	for _, p := range parsers {
		for i, ev := range p.out.Events {
			if e, ok := evs[ev]; !ok || p.eventLine[i] < e.line {
				evs[ev] = evFirst{p.eventLine[i], p.hasPeriod[i]}
			}
		}
	}
	for _, p := range parsers {
		for i, ev := range p.out.Events {
			if e := evs[ev]; p.hasPeriod[i] != e.hasPeriod && (first == nil || p.eventLine[i] < first.line) {
				first = &perfFailure{p.eventLine[i], failf(FormatPerfScript, p.eventLine[i], "event %q has samples with and without a period", ev)}
			}
		}
	}
	if first != nil {
		return nil, first.err
	}
	events := make([]string, 0, len(evs))
	for ev := range evs {
		events = append(events, ev)
	}
	slices.SortFunc(events, func(a, b string) int { return evs[a].line - evs[b].line })
	evIdx := map[string]int{}
	for i, ev := range events {
		evIdx[ev] = i
		m.hasPeriod = append(m.hasPeriod, evs[ev].hasPeriod)
	}
	m.out.Events = events

	// Frames. The first parser's indexes stand; the others' lines are
	// looked up in its map, and those it lacks numbered after its own
	// ("tmp" indexes). Then every frame gets its place by first line.
	// Frames are copied once, into their merged place: a tmp index past
	// the first parser's names the worker and index it came from.
	base := parsers[0]
	nBase := len(base.frames)
	nTmp := nBase
	tmpLine := slices.Clone(base.frameLine)
	type frameSrc struct{ w, i int }
	var extraSrc []frameSrc // tmp index nBase+k -> its parser and index there
	others := 0
	for _, p := range parsers[1:] {
		others += len(p.frameIdx)
	}
	extraFrames := make(map[string]int, others)
	toTmp := make([][]int, len(parsers)) // worker frame index -> tmp
	for w, p := range parsers[1:] {
		local := make([]int, len(p.frames))
		for line, i := range p.frameIdx {
			t, ok := base.frameIdx[line]
			if !ok {
				t, ok = extraFrames[line]
			}
			if !ok {
				t = nTmp
				nTmp++
				extraFrames[line] = t
				tmpLine = append(tmpLine, p.frameLine[i])
				extraSrc = append(extraSrc, frameSrc{w + 1, i})
			} else if p.frameLine[i] < tmpLine[t] {
				tmpLine[t] = p.frameLine[i]
			}
			local[i] = t
		}
		toTmp[w+1] = local
	}
	byLine := make([]int32, nTmp)
	for i := range byLine {
		byLine[i] = int32(i)
	}
	slices.SortFunc(byLine, func(a, b int32) int { return tmpLine[a] - tmpLine[b] })
	global := make([]int, nTmp) // tmp -> merged
	m.frames = make([]frameResult, nTmp)
	var lineBytes int64
	for g, t := range byLine {
		global[t] = g
		if int(t) < nBase {
			m.frames[g] = base.frames[t]
		} else {
			src := extraSrc[int(t)-nBase]
			m.frames[g] = parsers[src.w].frames[src.i]
		}
	}
	for line := range base.frameIdx {
		lineBytes += int64(len(line))
	}
	for line := range extraFrames {
		lineBytes += int64(len(line))
	}
	if err := m.nFrames.add(FormatPerfScript, int64(nTmp)); err != nil {
		return nil, err
	}
	if err := m.strBytes.add(FormatPerfScript, lineBytes); err != nil {
		return nil, err
	}

	// Stacks: the others' are looked up in the first parser's map, under
	// its key (its event and frame indexes), unless a frame or the event
	// is not in it; those it lacks are keyed by tmp indexes.
	baseEv := map[string]int{}
	for i, ev := range base.out.Events {
		baseEv[ev] = i
	}
	all := slices.Clone(base.order) // frames in tmp indexes
	for _, st := range all {
		st.event = evIdx[base.out.Events[st.event]]
	}
	others = 0
	for _, p := range parsers[1:] {
		others += len(p.order)
	}
	extraStacks := make(map[string]*perfStack, others)
	var key []byte
	ids := []int(nil)
	for w, p := range parsers[1:] {
		local := toTmp[w+1]
		for _, st := range p.order {
			ids = ids[:0]
			inBase := true
			for _, f := range st.frames {
				t := local[f]
				ids = append(ids, t)
				inBase = inBase && t < len(base.frames)
			}
			var into *perfStack
			if ev, ok := baseEv[p.out.Events[st.event]]; ok && inBase {
				key = perfKey(key[:0], ev, st.pid, st.tid, st.comm, ids)
				into = base.stacks[string(key)]
			}
			ev := evIdx[p.out.Events[st.event]]
			if into == nil {
				key = perfKey(key[:0], ev, st.pid, st.tid, st.comm, ids)
				into = extraStacks[string(key)]
			}
			if into != nil {
				into.value += st.value
				into.count += st.count
				into.line = min(into.line, st.line)
				continue
			}
			ns := &perfStack{event: ev, value: st.value, count: st.count,
				frames: slices.Clone(ids), comm: st.comm, pid: st.pid, tid: st.tid, line: st.line}
			extraStacks[string(key)] = ns
			all = append(all, ns)
		}
	}
	slices.SortFunc(all, func(a, b *perfStack) int { return a.line - b.line })
	var keyBytes, frameCount int64
	for _, st := range all {
		for j, t := range st.frames {
			st.frames[j] = global[t]
		}
		keyBytes += perfKeyLen(st) + int64(len(st.comm))
		frameCount += int64(len(st.frames))
	}
	m.order = all
	if err := m.strBytes.add(FormatPerfScript, keyBytes); err != nil {
		return nil, err
	}
	if err := m.nStacks.add(FormatPerfScript, int64(len(all))); err != nil {
		return nil, err
	}
	if err := m.stackFrames.add(FormatPerfScript, frameCount); err != nil {
		return nil, err
	}
	if err := m.nEvents.add(FormatPerfScript, int64(len(events))); err != nil {
		return nil, err
	}

	// The rest: sums, and what the input's first or last lines say.
	firstSample, lastLine := 0, 0
	for _, p := range parsers {
		m.nSamples += p.nSamples
		m.noPid += p.noPid
		m.empty += p.empty
		m.demangled = m.demangled || p.demangled
		if p.firstSample > 0 && (firstSample == 0 || p.firstSample < firstSample) {
			firstSample = p.firstSample
		}
	}
	m.terminated = true
	version := 0
	for _, p := range parsers {
		for _, v := range p.versions {
			if (firstSample == 0 || v.line < firstSample) && v.line > version {
				version, m.out.Producer = v.line, v.v
			}
		}
		if p.lastLine > lastLine {
			lastLine, m.terminated = p.lastLine, p.terminated
		}
	}
	return m.finish()
}

// perfKey appends endSample's key of a stack to k.
func perfKey(k []byte, event int, pid, tid int64, comm string, frames []int) []byte {
	k = binary.AppendVarint(k, int64(event))
	k = binary.AppendVarint(k, pid)
	k = binary.AppendVarint(k, tid)
	k = binary.AppendUvarint(k, uint64(len(comm)))
	k = append(k, comm...)
	for _, f := range frames {
		k = binary.AppendUvarint(k, uint64(f))
	}
	return k
}

// perfKeyLen is len(perfKey(nil, ...)) for st, without building it.
func perfKeyLen(st *perfStack) int64 {
	var buf [binary.MaxVarintLen64]byte
	n := binary.PutVarint(buf[:], int64(st.event)) + binary.PutVarint(buf[:], st.pid) + binary.PutVarint(buf[:], st.tid) +
		binary.PutUvarint(buf[:], uint64(len(st.comm))) + len(st.comm)
	for _, f := range st.frames {
		n += binary.PutUvarint(buf[:], uint64(f))
	}
	return int64(n)
}
