package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// What Kineto (torch.profiler's tracer) writes in args that the pytorch
// recipe needs and the slice rows do not hold: the "External id" that
// links a kernel to the host operator that launched it, the operator's
// "Input Dims" (record_shapes), and the "[memory]" instant events of
// profile_memory. Only those keys are decoded, and only on the events that
// carry them (operators, device work, [memory] instants).

// Names of the derived measurements (scope trace).
const (
	NameOpDeviceSelf  = "trace.op.device_self"  // device time of the kernels an operator launched itself
	NameOpDeviceTotal = "trace.op.device_total" // device time of the kernels it and the slices in it launched
	NameOpShapes      = "trace.op.shapes"       // slices of an operator per Input Dims
	NameOpAlloc       = "trace.op.alloc_bytes"  // bytes allocated inside an operator ([memory] events)
	NameStep          = "trace.step"            // one per ProfilerStep#N annotation
	NameDeviceBusy    = "trace.device.busy"     // union of a device's work intervals
	NameDeviceIdle    = "trace.device.idle"     // its first work to its last, less busy
	NameDeviceGaps    = "trace.device.gaps"     // idle intervals between work
	NameDeviceGap     = "trace.device.gap"      // the largest idle intervals, one row each
	NameDeviceLinked  = "trace.device.linked"   // device time linked to a host operator, and not
	NameMemAllocated  = "trace.memory.allocated"
	NameMemFreed      = "trace.memory.freed"
	NameMemPeak       = "trace.memory.peak"
)

// Bounds of the derived rows.
const (
	maxShapesPerOp = 16   // distinct Input Dims kept per operator
	maxShapeRows   = 4096 // trace.op.shapes rows in all
	maxShapeBytes  = 512  // an Input Dims text longer than this is cut
	maxGapRows     = 10   // trace.device.gap rows per device
)

// argNumber is one args value read as encoding/json reads a json.Number
// field: a number as written, a string holding a valid number, null as
// absent; ok is false for anything else.
func argNumber(v []byte) (n string, ok bool) {
	switch v[0] {
	case 'n':
		return "", true
	case '"':
		var sc scanner
		t := sc.unquoteNoCache(v)
		return t, validNumber(t)
	case '{', '[', 't', 'f':
		return "", false
	}
	return string(v), true
}

// eachArg calls f with each member of a (validated) args object: its key
// unquoted and its raw value; false when args is not an object.
func eachArg(args []byte, f func(key string, val []byte) bool) bool {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' {
		return len(args) > 0 && args[0] == 'n'
	}
	var sc scanner
	ok := true
	_, err := sc.val(args, 0, 0, func(key, val []byte) error {
		if ok {
			ok = f(sc.unquoteNoCache(key), val)
		}
		return nil
	})
	return err == nil && ok
}

// memEvent is one [memory] instant: an allocation (bytes > 0) or a free.
type memEvent struct {
	ts, bytes, total int64
	hasTotal         bool
	track            int32
	device           string
}

// memoryName is the name Kineto gives profile_memory's instant events.
const memoryName = "[memory]"

// stepPrefix starts the annotation torch.profiler's prof.step() writes.
const stepPrefix = "ProfilerStep#"

// readOpArgs fills a slice's External id, correlation and shapes from its
// args, for the classes that carry them; a malformed args object is
// counted, not fatal.
func (b *builder) readOpArgs(s *slice, raw json.RawMessage, class string) error {
	if len(raw) == 0 || (class != classOperator && class != classDevice && class != classRuntime) {
		return nil
	}
	// The keys are matched without regard to case, as encoding/json
	// matches struct fields, so "external id" (older profilers) is read
	// as "External id"; the last of a repeated key wins.
	var ext, corr string
	var dims []byte
	ok := eachArg(raw, func(key string, val []byte) bool {
		var good bool
		switch {
		case val[0] == 'n' && !strings.EqualFold(key, "Input Dims"):
			good = true // null leaves a number as it was
		case strings.EqualFold(key, "External id"):
			ext, good = argNumber(val)
		case strings.EqualFold(key, "correlation"):
			corr, good = argNumber(val)
		case strings.EqualFold(key, "Input Dims"):
			dims, good = val, true
		default:
			good = true
		}
		return good
	})
	if !ok {
		b.badArgs++
		return nil
	}
	if ext != "" {
		if v, err := strconv.ParseInt(ext, 10, 64); err == nil {
			s.ext = v
		}
	}
	if corr != "" {
		if v, err := strconv.ParseInt(corr, 10, 64); err == nil {
			s.corr = v
		}
	}
	if class == classOperator {
		d := bytes.TrimSpace(dims)
		if len(d) > 0 && !bytes.Equal(d, []byte("null")) {
			b.shapeSlices++
			var buf bytes.Buffer
			if json.Compact(&buf, d) == nil {
				d = buf.Bytes()
			}
			txt := string(d)
			if len(txt) > maxShapeBytes {
				txt = strings.ToValidUTF8(txt[:maxShapeBytes], "") + "…"
			}
			i, err := b.intern(txt)
			if err != nil {
				return err
			}
			s.shapes = i
		}
	}
	return nil
}

// readMemory keeps a [memory] instant's bytes and device.
func (b *builder) readMemory(raw json.RawMessage, ts int64, track int32) {
	var bytesN, total string
	var devType, devID []byte
	ok := len(raw) > 0 && eachArg(raw, func(key string, val []byte) bool {
		var good bool
		switch {
		case val[0] == 'n' && !strings.EqualFold(key, "Device Type") && !strings.EqualFold(key, "Device Id"):
			good = true // null leaves a number as it was
		case strings.EqualFold(key, "Bytes"):
			bytesN, good = argNumber(val)
		case strings.EqualFold(key, "Total Allocated"):
			total, good = argNumber(val)
		case strings.EqualFold(key, "Device Type"):
			devType, good = val, true
		case strings.EqualFold(key, "Device Id"):
			devID, good = val, true
		default:
			good = true
		}
		return good
	})
	n, err := strconv.ParseInt(bytesN, 10, 64)
	if !ok || err != nil {
		b.badArgs++
		return
	}
	e := memEvent{ts: ts, bytes: n, track: track}
	if t, err := strconv.ParseInt(total, 10, 64); err == nil {
		e.total, e.hasTotal = t, true
	}
	e.device = clip(deviceName(devType, devID))
	b.memory = append(b.memory, e)
}

// deviceName is Kineto's (Device Type, Device Id) as "cpu", "cuda:0", ...:
// the type is c10's DeviceType number (0 cpu, 1 cuda, ...) or a name.
func deviceName(typ, id json.RawMessage) string {
	t := idText(typ)
	switch t {
	case "0":
		t = "cpu"
	case "1":
		t = "cuda"
	case "8":
		t = "xpu"
	case "13":
		t = "mps"
	case "":
		t = "unknown"
	}
	if d := idText(id); d != "" && d != "-1" && t != "cpu" {
		return t + ":" + d
	}
	return t
}

// kinetoStats are the derived totals the rows of kineto.go write.
type kinetoStats struct {
	shapes        map[[2]int32]*shapeStat // frame, shapes string → count, time
	shapesDropped int64
	steps         []int32 // slice indices of ProfilerStep#N annotations, by start
	devices       []deviceStat
	linked        int64 // device time linked to an operator
	unlinked      int64 // device time with no External id, or one no operator has
	memory        []memDevice
	memUnbound    int64
}

type shapeStat struct {
	count, total int64
}

type deviceStat struct {
	pid, process                string
	first, last, busy, gapCount int64
	gaps                        [][2]int64 // the largest, longest first
}

type memDevice struct {
	device                   string
	allocated, freed, allocs int64
	peak                     int64
	hasPeak                  bool
	frees                    int64
}

// kineto derives the operator device time, shapes, steps, device idle
// gaps and memory from the nested slices.
func (m *model) kineto(b *builder) {
	k := &m.kin
	k.shapes = map[[2]int32]*shapeStat{}
	perOp := map[int32]int{}
	// Host operators by External id, runtime calls (launches) by
	// correlation id: the first when two share one.
	ops, launches := map[int64]int32{}, map[int64]int32{}
	for i := range m.slices {
		s := &m.slices[i]
		f := &m.frames[s.frame]
		if f.class == classRuntime && s.corr != 0 {
			if _, ok := launches[s.corr]; !ok {
				launches[s.corr] = int32(i)
			}
		}
		if f.class == classOperator && !f.device {
			if s.ext != 0 {
				if _, ok := ops[s.ext]; !ok {
					ops[s.ext] = int32(i)
				}
			}
			if s.shapes != 0 {
				key := [2]int32{s.frame, s.shapes}
				st := k.shapes[key]
				if st == nil {
					if perOp[s.frame] >= maxShapesPerOp || len(k.shapes) >= maxShapeRows {
						k.shapesDropped++
						continue
					}
					perOp[s.frame]++
					st = &shapeStat{}
					k.shapes[key] = st
				}
				st.count++
				st.total += s.dur
			}
		}
		if f.class == classAnnotation && !f.device && s.parent < 0 && strings.HasPrefix(m.strs[s.name], stepPrefix) {
			k.steps = append(k.steps, int32(i))
		}
	}
	slices.SortFunc(k.steps, func(a, b int32) int {
		return cmp.Or(cmp.Compare(m.slices[a].start, m.slices[b].start), cmp.Compare(a, b))
	})
	// Device time: each kernel, copy or memset to the host operator that
	// launched it (self) and to every enclosing slice of that launch once
	// (total). The launch is the runtime call with the work's correlation
	// id, and its operator the innermost operator around that call; when
	// the trace has no such call, the operator whose External id the work
	// carries (Kineto writes the operator's id on both in recent
	// versions, the correlation id in older ones).
	var seen []int32
	for i := range m.slices {
		s := &m.slices[i]
		if !m.deviceWork(s) {
			continue
		}
		from := int32(-1)
		if l, ok := launches[s.corr]; ok && s.corr != 0 {
			from = m.slices[l].parent
		} else if o, ok := ops[s.ext]; ok && s.ext != 0 {
			from = o
		}
		op := from
		for op >= 0 && m.frames[m.slices[op].frame].class != classOperator {
			op = m.slices[op].parent
		}
		if op < 0 {
			k.unlinked += s.dur
			continue
		}
		k.linked += s.dur
		of := &m.frames[m.slices[op].frame]
		of.devSelf += s.dur
		of.kernels++
		seen = seen[:0]
		for p := from; p >= 0; p = m.slices[p].parent {
			fr := m.slices[p].frame
			if slices.Contains(seen, fr) {
				continue
			}
			seen = append(seen, fr)
			m.frames[fr].devTotal += s.dur
		}
	}
	m.deviceGaps()
	m.memoryOf(b.memory)
}

// deviceWork reports whether a slice is work on a device: a kernel, copy
// or memset, not a gpu_user_annotation range over such work (which would
// count it twice).
func (m *model) deviceWork(s *slice) bool {
	f := &m.frames[s.frame]
	return f.class == classDevice && !strings.EqualFold(m.strs[f.cat], "gpu_user_annotation")
}

// deviceGaps merges each device process's work intervals (kernels, copies,
// memsets on all its streams) and measures the idle time between them.
func (m *model) deviceGaps() {
	type iv struct{ s, e int64 }
	per := map[string][]iv{}
	var pids []string
	for i := range m.slices {
		s := &m.slices[i]
		if !m.deviceWork(s) {
			continue
		}
		pid := m.tracks[s.track].key.pid
		if _, ok := per[pid]; !ok {
			pids = append(pids, pid)
		}
		per[pid] = append(per[pid], iv{s.start, s.end()})
	}
	sort.Strings(pids)
	for _, pid := range pids {
		ivs := per[pid]
		slices.SortFunc(ivs, func(a, b iv) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.e, b.e)) })
		d := deviceStat{pid: pid, first: ivs[0].s, last: ivs[0].e}
		for _, t := range m.tracks {
			if t.key.pid == pid && (t.labels != "" || t.process != "") {
				d.process = cmp.Or(t.labels, t.process)
				break
			}
		}
		cur := ivs[0]
		flush := func() { d.busy += cur.e - cur.s }
		for _, x := range ivs[1:] {
			if x.s <= cur.e {
				cur.e = max(cur.e, x.e)
				continue
			}
			flush()
			d.gapCount++
			d.gaps = append(d.gaps, [2]int64{cur.e, x.s})
			cur = x
		}
		flush()
		d.last = cur.e
		slices.SortFunc(d.gaps, func(a, b [2]int64) int {
			return cmp.Or(cmp.Compare(b[1]-b[0], a[1]-a[0]), cmp.Compare(a[0], b[0]))
		})
		if len(d.gaps) > maxGapRows {
			d.gaps = d.gaps[:maxGapRows]
		}
		m.kin.devices = append(m.kin.devices, d)
	}
}

// memoryOf totals the [memory] events per device and binds each
// allocation to the innermost host operator enclosing it on its thread.
func (m *model) memoryOf(evs []memEvent) {
	byDev := map[string]*memDevice{}
	var devs []string
	for _, e := range evs {
		d := byDev[e.device]
		if d == nil {
			d = &memDevice{device: e.device}
			byDev[e.device] = d
			devs = append(devs, e.device)
		}
		if e.bytes >= 0 {
			d.allocated += e.bytes
			d.allocs++
		} else {
			d.freed -= e.bytes
			d.frees++
		}
		if e.hasTotal && (!d.hasPeak || e.total > d.peak) {
			d.peak, d.hasPeak = e.total, true
		}
		if e.bytes <= 0 {
			continue
		}
		i := m.bind(mark{ts: e.ts, track: e.track, ph: 'i'})
		for i >= 0 && m.frames[m.slices[i].frame].class != classOperator {
			i = m.slices[i].parent
		}
		if i < 0 {
			m.kin.memUnbound++
			continue
		}
		f := &m.frames[m.slices[i].frame]
		f.allocBytes += e.bytes
		f.allocs++
	}
	sort.Strings(devs)
	for _, d := range devs {
		m.kin.memory = append(m.kin.memory, *byDev[d])
	}
}

// kinetoRows writes the derived measurements.
func (m *model) kinetoRows(put func(name, unit, agg, subject string, v int64, dims map[string]string, key ...string) error,
	ids []string, order []int32) error {
	for _, i := range order {
		f := &m.frames[i]
		dims := func(extra ...string) map[string]string {
			d := map[string]string{"category": m.strs[f.cat], "class": f.class, "frame_id": ids[i]}
			for j := 0; j+1 < len(extra); j += 2 {
				d[extra[j]] = extra[j+1]
			}
			return d
		}
		name := m.strs[f.name]
		if f.devTotal > 0 {
			if err := put(NameOpDeviceSelf, UnitNanos, "sum", name, f.devSelf, dims("kernels", strconv.FormatInt(f.kernels, 10)), m.strs[f.cat]); err != nil {
				return err
			}
			if err := put(NameOpDeviceTotal, UnitNanos, "sum", name, f.devTotal, dims(), m.strs[f.cat]); err != nil {
				return err
			}
		}
		if f.allocs > 0 {
			if err := put(NameOpAlloc, "bytes", "sum", name, f.allocBytes, dims("allocations", strconv.FormatInt(f.allocs, 10)), m.strs[f.cat]); err != nil {
				return err
			}
		}
	}
	keys := make([][2]int32, 0, len(m.kin.shapes))
	for k := range m.kin.shapes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int32) int {
		return cmp.Or(cmp.Compare(m.frames[a[0]].name, m.frames[b[0]].name), cmp.Compare(a[0], b[0]), strings.Compare(m.strs[a[1]], m.strs[b[1]]))
	})
	for _, k := range keys {
		st := m.kin.shapes[k]
		f := &m.frames[k[0]]
		dims := map[string]string{"category": m.strs[f.cat], "frame_id": ids[k[0]], "shapes": m.strs[k[1]], "total_ns": strconv.FormatInt(st.total, 10)}
		if err := put(NameOpShapes, "count", "count", m.strs[f.name], st.count, dims, m.strs[f.cat], m.strs[k[1]]); err != nil {
			return err
		}
	}
	for n, i := range m.kin.steps {
		s := &m.slices[i]
		name := m.strs[s.name]
		dims := map[string]string{"step": strings.TrimPrefix(name, stepPrefix), "start_ns": strconv.FormatInt(s.start, 10),
			"track_id": strconv.FormatUint(m.tracks[s.track].id, 10), "index": strconv.Itoa(n)}
		if err := put(NameStep, UnitNanos, "value", name, s.dur, dims, strconv.Itoa(n)); err != nil {
			return err
		}
	}
	for _, d := range m.kin.devices {
		subject := d.process
		if subject == "" {
			subject = "pid " + d.pid
		}
		dims := map[string]string{"pid": clip(d.pid), "first_ns": strconv.FormatInt(d.first, 10), "last_ns": strconv.FormatInt(d.last, 10)}
		if d.process != "" {
			dims["process"] = d.process
		}
		for _, r := range []struct {
			n, unit, agg string
			v            int64
		}{{NameDeviceBusy, UnitNanos, "sum", d.busy}, {NameDeviceIdle, UnitNanos, "sum", d.last - d.first - d.busy}, {NameDeviceGaps, "count", "count", d.gapCount}} {
			if err := put(r.n, r.unit, r.agg, subject, r.v, dims, d.pid); err != nil {
				return err
			}
		}
		for j, g := range d.gaps {
			gd := map[string]string{"pid": clip(d.pid), "start_ns": strconv.FormatInt(g[0], 10), "end_ns": strconv.FormatInt(g[1], 10), "rank": strconv.Itoa(j + 1)}
			if err := put(NameDeviceGap, UnitNanos, "value", subject, g[1]-g[0], gd, d.pid, strconv.Itoa(j)); err != nil {
				return err
			}
		}
	}
	if m.kin.linked+m.kin.unlinked > 0 {
		if err := put(NameDeviceLinked, UnitNanos, "sum", "linked", m.kin.linked, nil); err != nil {
			return err
		}
		if err := put(NameDeviceLinked, UnitNanos, "sum", "unlinked", m.kin.unlinked, nil); err != nil {
			return err
		}
	}
	for _, d := range m.kin.memory {
		if err := put(NameMemAllocated, "bytes", "sum", d.device, d.allocated, map[string]string{"events": strconv.FormatInt(d.allocs, 10)}); err != nil {
			return err
		}
		if err := put(NameMemFreed, "bytes", "sum", d.device, d.freed, map[string]string{"events": strconv.FormatInt(d.frees, 10)}); err != nil {
			return err
		}
		if d.hasPeak {
			if err := put(NameMemPeak, "bytes", "max", d.device, d.peak, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
