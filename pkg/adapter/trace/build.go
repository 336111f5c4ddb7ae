package trace

import (
	"cmp"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// trackKey names a track: a thread (pid, tid), or an async track (pid and
// the async event's category and id).
type trackKey struct {
	pid, tid string
	async    string // "" for a thread track
}

// slice is one complete, matched begin/end or async slice; times are
// absolute nanoseconds until finish makes them relative.
type slice struct {
	start, dur int64
	name, cat  int32 // string indices
	track      int32
	order      int32 // event index in the file
	parent     int32 // index of the enclosing slice on its track, -1 for a root
	depth      int32 // 0 for a root
	frame      int32
	shapes     int32 // string index of the Input Dims, 0 for none
	ext        int64 // Kineto's External id, 0 for none
	corr       int64 // its correlation id (runtime calls and device work)
}

func (s *slice) end() int64 { return s.start + s.dur }

// mark is a begin or end event waiting to be matched, or an instant, a
// flow point or a counter sample.
type mark struct {
	ts        int64
	name, cat int32
	track     int32
	order     int32
	begin     bool
	bp        byte // flow binding: 'e' enclosing, 0 default
	ph        byte
	scope     string
}

type counterSample struct {
	ts     int64
	name   int32
	series int32
	track  int32
	value  float64
}

type flowKey struct {
	cat int32
	id  string
}

// builder collects what the events say and turns it into the model.
type builder struct {
	lim  config.Limits
	h    header
	gzip bool

	strs     []string
	strIdx   map[string]int32
	strBytes int64

	tracks   []trackKey
	trackIdx map[trackKey]int32

	slices   []slice
	be       []mark // B and E, all tracks
	async    []mark // b and e
	instants []mark
	flows    map[flowKey][]mark
	nflows   int
	counters []counterSample

	procName, procLabels, procSort map[string]string
	thrName, thrSort               map[[2]string]string

	phases  map[string]int64
	unknown map[string]int64
	// anomalies counted for the limitations
	negDur, noDur, noTime, badCounter, badMeta int64
	badArgs, shapeSlices                       int64
	memory                                     []memEvent
	catClass                                   map[int32]string

	minTs, maxEnd int64
	hasTs         bool
}

func newBuilder(lim config.Limits) *builder {
	return &builder{lim: lim, strIdx: map[string]int32{"": 0}, strs: []string{""}, trackIdx: map[trackKey]int32{},
		flows: map[flowKey][]mark{}, procName: map[string]string{}, procLabels: map[string]string{}, procSort: map[string]string{},
		thrName: map[[2]string]string{}, thrSort: map[[2]string]string{}, phases: map[string]int64{}, unknown: map[string]int64{},
		catClass: map[int32]string{}}
}

// maxPhases bounds the distinct phase strings counted by name (a hostile
// file may use a new one per event); the rest are counted as "other".
const maxPhases = 64

func (b *builder) intern(s string) (int32, error) {
	if i, ok := b.strIdx[s]; ok {
		return i, nil
	}
	b.strBytes += int64(len(s))
	if b.strBytes > b.lim.MaxStringBytes {
		return 0, &limitError{key: limitStringBytes, max: b.lim.MaxStringBytes, observed: b.strBytes, what: "bytes of distinct names"}
	}
	s = strings.Clone(strings.ToValidUTF8(s, "\uFFFD"))
	i := int32(len(b.strs))
	b.strs = append(b.strs, s)
	b.strIdx[s] = i
	return i, nil
}

func (b *builder) track(k trackKey) (int32, error) {
	if i, ok := b.trackIdx[k]; ok {
		return i, nil
	}
	b.strBytes += int64(len(k.pid) + len(k.tid) + len(k.async))
	if b.strBytes > b.lim.MaxStringBytes {
		return 0, &limitError{key: limitStringBytes, max: b.lim.MaxStringBytes, observed: b.strBytes, what: "bytes of distinct names"}
	}
	i := int32(len(b.tracks))
	b.tracks = append(b.tracks, k)
	b.trackIdx[k] = i
	return i, nil
}

func (b *builder) seen(ts int64) {
	if !b.hasTs || ts < b.minTs {
		b.minTs = ts
	}
	if !b.hasTs || ts > b.maxEnd {
		b.maxEnd = ts
	}
	b.hasTs = true
}

func (b *builder) count(ph string) {
	if _, ok := b.phases[ph]; !ok && len(b.phases) >= maxPhases {
		ph = "other"
	}
	b.phases[ph]++
}

// add takes one event.
func (b *builder) add(ev *rawEvent, order int) error {
	ph := clip(ev.Ph)
	b.count(ph)
	at := func() string { return "traceEvents[" + strconv.Itoa(order) + "]" }
	if ph == "M" {
		b.meta(ev)
		return nil
	}
	ts, hasTs, err := micros(ev.Ts)
	if err != nil {
		return &parseError{at: at() + ".ts", msg: err.Error()}
	}
	switch ph {
	case "X", "B", "E", "b", "e", "n", "i", "I", "C", "s", "t", "f":
	default:
		b.unknown[ph]++
		return nil
	}
	if !hasTs {
		b.noTime++
		return nil
	}
	b.seen(ts)
	name, err := b.intern(ev.Name)
	if err != nil {
		return err
	}
	cat, err := b.intern(ev.Cat)
	if err != nil {
		return err
	}
	pid, tid := idText(ev.Pid), idText(ev.Tid)
	m := mark{ts: ts, name: name, cat: cat, order: int32(order), ph: ph[0]}
	switch ph {
	case "X":
		dur, ok, err := micros(ev.Dur)
		if err != nil {
			return &parseError{at: at() + ".dur", msg: err.Error()}
		}
		switch {
		case !ok:
			b.noDur++
		case dur < 0:
			b.negDur++
			dur = 0
		}
		t, err := b.track(trackKey{pid: pid, tid: tid})
		if err != nil {
			return err
		}
		b.seen(ts + dur)
		b.slices = append(b.slices, slice{start: ts, dur: dur, name: name, cat: cat, track: t, order: int32(order)})
		class, ok := b.catClass[cat]
		if !ok {
			class = classOf(b.strs[cat])
			b.catClass[cat] = class
		}
		if err := b.readOpArgs(&b.slices[len(b.slices)-1], ev.Args, class); err != nil {
			return err
		}
	case "B", "E":
		t, err := b.track(trackKey{pid: pid, tid: tid})
		if err != nil {
			return err
		}
		m.track, m.begin = t, ph == "B"
		b.be = append(b.be, m)
	case "b", "e", "n":
		t, err := b.track(trackKey{pid: pid, async: b.strs[cat] + "\x00" + idText(ev.ID)})
		if err != nil {
			return err
		}
		m.track, m.begin = t, ph == "b"
		if ph == "n" {
			b.instants = append(b.instants, m)
		} else {
			b.async = append(b.async, m)
		}
	case "i", "I":
		t, err := b.track(trackKey{pid: pid, tid: tid})
		if err != nil {
			return err
		}
		m.track, m.scope = t, clip(ev.S)
		b.instants = append(b.instants, m)
		if ev.Name == memoryName {
			b.readMemory(ev.Args, ts, t)
		}
	case "C":
		return b.counter(ev, m, pid)
	case "s", "t", "f":
		t, err := b.track(trackKey{pid: pid, tid: tid})
		if err != nil {
			return err
		}
		m.track = t
		if ev.Bp == "e" {
			m.bp = 'e'
		}
		k := flowKey{cat: cat, id: idText(ev.ID)}
		if _, ok := b.flows[k]; !ok {
			b.strBytes += int64(len(k.id))
		}
		b.flows[k] = append(b.flows[k], m)
		b.nflows++
	}
	return nil
}

// counter keeps each numeric series of a C event's args; the track is the
// process's (counters are per process in the format).
func (b *builder) counter(ev *rawEvent, m mark, pid string) error {
	var args map[string]json.RawMessage
	if len(ev.Args) == 0 || json.Unmarshal(ev.Args, &args) != nil {
		b.badCounter++
		return nil
	}
	t, err := b.track(trackKey{pid: pid})
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := strconv.ParseFloat(strings.TrimSpace(string(args[k])), 64)
		if err != nil {
			b.badCounter++
			continue
		}
		series, err := b.intern(k)
		if err != nil {
			return err
		}
		b.counters = append(b.counters, counterSample{ts: m.ts, name: m.name, series: series, track: t, value: v})
	}
	return nil
}

// meta keeps the names, labels and sort indices of processes and threads.
func (b *builder) meta(ev *rawEvent) {
	var args struct {
		Name      any `json:"name"`
		Labels    any `json:"labels"`
		SortIndex any `json:"sort_index"`
	}
	if len(ev.Args) > 0 && json.Unmarshal(ev.Args, &args) != nil {
		b.badMeta++
		return
	}
	text := func(v any) string {
		switch x := v.(type) {
		case string:
			return clip(x)
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return ""
	}
	pid, tid := idText(ev.Pid), idText(ev.Tid)
	switch ev.Name {
	case "process_name":
		b.procName[clip(pid)] = text(args.Name)
	case "process_labels":
		b.procLabels[clip(pid)] = text(args.Labels)
	case "process_sort_index":
		b.procSort[clip(pid)] = text(args.SortIndex)
	case "thread_name":
		b.thrName[[2]string{clip(pid), clip(tid)}] = text(args.Name)
	case "thread_sort_index":
		b.thrSort[[2]string{clip(pid), clip(tid)}] = text(args.SortIndex)
	default:
		b.unknown["M:"+clip(ev.Name)]++
	}
}

// model is the finished trace.
type model struct {
	h      header
	gzip   bool
	strs   []string
	tracks []trackInfo
	// slices are sorted by track, start, longest first, file order.
	slices   []slice
	frames   []frameInfo
	instants []mark
	counters []counterSample
	edges    map[[2]int32]*edge // nesting edges, parent frame → child frame
	flows    map[[2]int32]*edge // flow edges, source frame → destination frame
	flowCats map[int32]int64    // flows per category
	origin   int64              // absolute ns of the earliest timestamp
	span     int64
	phases   map[string]int64
	unknown  map[string]int64
	// anomalies
	negDur, noDur, noTime, badCounter, badMeta           int64
	unmatchedB, unmatchedE, unmatchedAB, unmatchedAE     int64
	misnested, unboundFlow, asyncSlices, beSlices, total int64
	badArgs, shapeSlices                                 int64
	kin                                                  kinetoStats
}

type trackInfo struct {
	key                     trackKey
	id                      uint64 // 1-based track_id
	thread, process, labels string
	device                  bool
	first, last             int // range of the track's slices in model.slices
	busy                    int64
	procSort, thrSort       string
}

type frameInfo struct {
	name, cat               int32
	count                   int64
	total, self, incl, maxD int64
	device                  bool
	class                   string
	// from Kineto's args (kineto.go)
	devSelf, devTotal, kernels, allocBytes, allocs int64
}

type edge struct {
	count int64
	dur   int64
}

// finish matches begin/end events, sorts and nests the slices, binds flows
// and totals what the rows need.
func (b *builder) finish() (*model, error) {
	m := &model{h: b.h, gzip: b.gzip, strs: b.strs, phases: b.phases, unknown: b.unknown, negDur: b.negDur, noDur: b.noDur,
		noTime: b.noTime, badCounter: b.badCounter, badMeta: b.badMeta, instants: b.instants, counters: b.counters,
		edges: map[[2]int32]*edge{}, flows: map[[2]int32]*edge{}, flowCats: map[int32]int64{}}
	nx := len(b.slices)
	m.unmatchedB, m.unmatchedE = b.match(b.be)
	m.beSlices = int64(len(b.slices) - nx)
	nx = len(b.slices)
	m.unmatchedAB, m.unmatchedAE = b.match(b.async)
	m.asyncSlices = int64(len(b.slices) - nx)
	b.be, b.async = nil, nil
	m.origin = b.minTs
	if b.hasTs {
		m.span = b.maxEnd - b.minTs
	}
	ss := b.slices
	slices.SortFunc(ss, func(x, y slice) int {
		if c := cmp.Compare(x.track, y.track); c != 0 {
			return c
		}
		if c := cmp.Compare(x.start, y.start); c != 0 {
			return c
		}
		if c := cmp.Compare(y.dur, x.dur); c != 0 {
			return c
		}
		return cmp.Compare(x.order, y.order)
	})
	m.slices = ss
	m.total = int64(len(ss))
	if err := m.tracksOf(b); err != nil {
		return nil, err
	}
	if err := m.nest(b.lim); err != nil {
		return nil, err
	}
	m.bindFlows(b.flows)
	m.badArgs, m.shapeSlices = b.badArgs, b.shapeSlices
	m.kineto(b)
	for i := range m.instants {
		m.instants[i].ts -= m.origin
	}
	slices.SortFunc(m.instants, func(x, y mark) int { return cmp.Or(cmp.Compare(x.ts, y.ts), cmp.Compare(x.order, y.order)) })
	for i := range m.counters {
		m.counters[i].ts -= m.origin
	}
	slices.SortStableFunc(m.counters, func(x, y counterSample) int { return cmp.Compare(x.ts, y.ts) })
	return m, nil
}

// match pairs begin and end marks per track in time order (file order
// among equal times): an end closes the latest open begin of its track,
// as the format says; an end with none open, and a begin never closed,
// are counted.
func (b *builder) match(ms []mark) (openLeft, endsLeft int64) {
	slices.SortFunc(ms, func(x, y mark) int {
		return cmp.Or(cmp.Compare(x.track, y.track), cmp.Compare(x.ts, y.ts), cmp.Compare(x.order, y.order))
	})
	var open []mark
	for i, x := range ms {
		if i > 0 && ms[i-1].track != x.track {
			openLeft += int64(len(open))
			open = open[:0]
		}
		if x.begin {
			open = append(open, x)
			continue
		}
		if len(open) == 0 {
			endsLeft++
			continue
		}
		o := open[len(open)-1]
		open = open[:len(open)-1]
		name, cat := o.name, o.cat
		if name == 0 {
			name = x.name
		}
		if cat == 0 {
			cat = x.cat
		}
		b.slices = append(b.slices, slice{start: o.ts, dur: x.ts - o.ts, name: name, cat: cat, track: x.track, order: o.order})
	}
	openLeft += int64(len(open))
	return openLeft, endsLeft
}

// tracksOf names the tracks from the metadata and numbers them in the
// order of their keys, so that track ids do not depend on event order.
func (m *model) tracksOf(b *builder) error {
	order := make([]int32, len(b.tracks))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(i, j int) bool {
		x, y := b.tracks[order[i]], b.tracks[order[j]]
		return x.pid+"\x00"+x.tid+"\x00"+x.async < y.pid+"\x00"+y.tid+"\x00"+y.async
	})
	id := make([]uint64, len(b.tracks))
	for n, i := range order {
		id[i] = uint64(n + 1)
	}
	m.tracks = make([]trackInfo, len(b.tracks))
	for i, k := range b.tracks {
		t := &m.tracks[i]
		t.key, t.id, t.first, t.last = k, id[i], -1, -1
		pid := clip(k.pid)
		t.process = b.procName[pid]
		if t.process == "" && pid != "" {
			t.process = "pid " + pid
		}
		t.labels = b.procLabels[pid]
		t.procSort = b.procSort[pid]
		switch {
		case k.async != "":
			cat, aid, _ := strings.Cut(k.async, "\x00")
			t.thread = "async " + clip(cat) + " " + clip(aid)
		default:
			t.thread = b.thrName[[2]string{pid, clip(k.tid)}]
			t.thrSort = b.thrSort[[2]string{pid, clip(k.tid)}]
			if t.thread == "" && k.tid != "" {
				t.thread = "tid " + clip(k.tid)
			}
		}
		t.device = deviceLabel(t.labels)
	}
	for i := range m.slices {
		s := &m.slices[i]
		s.start -= m.origin
		t := &m.tracks[s.track]
		if t.first < 0 {
			t.first = i
		}
		t.last = i
	}
	return nil
}

// nest finds each slice's enclosing slice on its track, the frames, the
// self times and the nesting edges.
func (m *model) nest(lim config.Limits) error {
	frameIdx := map[[2]int32]int32{}
	childSum := make([]int64, len(m.slices))
	var stack []int32
	var frames int64
	for i := range m.slices {
		s := &m.slices[i]
		if i > 0 && m.slices[i-1].track != s.track {
			stack = stack[:0]
		}
		for len(stack) > 0 && m.slices[stack[len(stack)-1]].end() <= s.start {
			stack = stack[:len(stack)-1]
		}
		// A slice that ends after the open slice it starts in is not
		// nested in it (Kineto writes cuda_sync slices that overlap a
		// copy on its stream): its parent is the innermost open slice that
		// holds it whole, and the slices it passes over close, since any
		// later slice inside them is inside it too.
		if len(stack) > 0 && m.slices[stack[len(stack)-1]].end() < s.end() {
			m.misnested++
			for len(stack) > 0 && m.slices[stack[len(stack)-1]].end() < s.end() {
				stack = stack[:len(stack)-1]
			}
		}
		s.parent, s.depth = -1, 0
		if len(stack) > 0 {
			p := stack[len(stack)-1]
			s.parent, s.depth = p, m.slices[p].depth+1
			childSum[p] += s.dur
		} else {
			m.tracks[s.track].busy += s.dur
		}
		if int64(s.depth)+1 > lim.MaxStackDepth {
			return &limitError{key: limitDepth, max: lim.MaxStackDepth, observed: int64(s.depth) + 1, what: "nested slices on one track"}
		}
		frames += int64(s.depth) + 1
		if frames > lim.MaxStackFrames {
			return &limitError{key: limitFrames, max: lim.MaxStackFrames, observed: frames, what: "frames in all slices' nesting chains"}
		}
		stack = append(stack, int32(i))
		k := [2]int32{s.name, s.cat}
		f, ok := frameIdx[k]
		if !ok {
			f = int32(len(m.frames))
			frameIdx[k] = f
			cat := m.strs[s.cat]
			m.frames = append(m.frames, frameInfo{name: s.name, cat: s.cat, class: classOf(cat)})
			m.frames[f].device = m.frames[f].class == classDevice
		}
		s.frame = f
		if m.tracks[s.track].device && m.frames[f].class == classOther {
			m.frames[f].device = true
		}
	}
	// Totals, and inclusive time with recursion counted once: a slice adds
	// to its frame's inclusive time unless an enclosing slice has the same
	// frame.
	for i := range m.slices {
		s := &m.slices[i]
		f := &m.frames[s.frame]
		f.count++
		f.total += s.dur
		f.self += max(s.dur-childSum[i], 0)
		f.maxD = max(f.maxD, s.dur)
		rec := false
		for p := s.parent; p >= 0; p = m.slices[p].parent {
			if m.slices[p].frame == s.frame {
				rec = true
				break
			}
		}
		if !rec {
			f.incl += s.dur
		}
		if s.parent >= 0 {
			k := [2]int32{m.slices[s.parent].frame, s.frame}
			e := m.edges[k]
			if e == nil {
				e = &edge{}
				m.edges[k] = e
			}
			e.count++
			e.dur += s.dur
		}
	}
	return nil
}

// bindFlows binds each flow point to a slice of its track (the enclosing
// slice; a flow end without "bp":"e" to the next slice to start, the
// format's default) and counts an edge between consecutive points of a
// flow.
func (m *model) bindFlows(flows map[flowKey][]mark) {
	keys := make([]flowKey, 0, len(flows))
	for k := range flows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return cmp.Or(cmp.Compare(keys[i].cat, keys[j].cat), cmp.Compare(keys[i].id, keys[j].id)) < 0
	})
	for _, k := range keys {
		ps := flows[k]
		slices.SortFunc(ps, func(x, y mark) int { return cmp.Or(cmp.Compare(x.ts, y.ts), cmp.Compare(x.order, y.order)) })
		prev := int32(-1)
		for i, p := range ps {
			to := m.bind(p)
			if to < 0 {
				m.unboundFlow++
				prev = -1
				continue
			}
			if i > 0 && prev >= 0 {
				e := [2]int32{m.slices[prev].frame, m.slices[to].frame}
				x := m.flows[e]
				if x == nil {
					x = &edge{}
					m.flows[e] = x
				}
				x.count++
				x.dur += m.slices[to].dur
				m.flowCats[k.cat]++
			}
			prev = to
		}
	}
}

// bind returns the slice a flow point binds to, or -1.
func (m *model) bind(p mark) int32 {
	t := &m.tracks[p.track]
	if t.first < 0 {
		return -1
	}
	ts := p.ts - m.origin
	ss := m.slices[t.first : t.last+1]
	// n is the number of the track's slices starting at or before ts.
	n := sort.Search(len(ss), func(i int) bool { return ss[i].start > ts })
	if p.ph == 'f' && p.bp != 'e' {
		// The next slice: the first to start at or after ts.
		k := sort.Search(len(ss), func(i int) bool { return ss[i].start >= ts })
		if k < len(ss) {
			return int32(t.first + k)
		}
		return -1
	}
	for i := int32(t.first + n - 1); i >= int32(t.first) && i >= 0; i = m.slices[i].parent {
		s := &m.slices[i]
		if s.start <= ts && (ts < s.end() || s.dur == 0 && ts == s.start) {
			return i
		}
		if s.parent < 0 {
			break
		}
	}
	return -1
}

// Classes of work, from the event's category.
const (
	classOperator   = "operator"   // cpu_op, Operator: framework operators on the host
	classAnnotation = "annotation" // user_annotation, record_function ranges
	classPython     = "python"     // python_function (with_stack)
	classRuntime    = "runtime"    // cuda_runtime, cuda_driver, hip_runtime, mtia_runtime, Runtime, ...
	classSync       = "sync"       // cuda_sync
	classDevice     = "device"     // kernel, gpu_memcpy, gpu_memset, gpu_user_annotation, Kernel, Memcpy, Memset
	classOther      = "other"
)

// classOf maps Kineto's categories (libkineto ActivityType names, and the
// capitalised ones of older PyTorch profilers) to a class of work.
func classOf(cat string) string {
	switch strings.ToLower(cat) {
	case "cpu_op", "operator":
		return classOperator
	case "user_annotation":
		return classAnnotation
	case "python_function":
		return classPython
	case "cuda_runtime", "cuda_driver", "runtime", "driver", "hip_runtime", "hip_driver", "mtia_runtime",
		"xpu_runtime", "xpu_driver", "privateuse1_runtime", "privateuse1_driver", "hpu_op":
		return classRuntime
	case "cuda_sync":
		return classSync
	case "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "memcpy", "memset", "mtia_ccp_events",
		"concurrent_kernel", "gpu_pm_counter":
		return classDevice
	}
	return classOther
}

// deviceLabel reports whether a process label names an accelerator
// (Kineto labels its device processes "GPU 0", "MTIA 0", ...).
func deviceLabel(labels string) bool {
	for _, p := range []string{"GPU", "MTIA", "XPU", "HPU", "TPU", "NPU"} {
		if strings.HasPrefix(strings.ToUpper(labels), p) {
			return true
		}
	}
	return false
}
