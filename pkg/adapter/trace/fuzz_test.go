package trace

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzRead: arbitrary bytes (plain or gzip) never panic and, within small
// limits, are refused as malformed (*parseError) or over a limit
// (*limitError), or give a model whose slices are sorted per track, start
// at or after the origin, nest inside their parent, and whose per-frame
// counts add up to the slices. The Parquet writing is left out
// (TestFixtures and TestHostile check it), so the fuzzer spends its time
// in the reader.
func FuzzRead(f *testing.F) {
	f.Add(gz(f, []byte(`[{"ph":"X","name":"a","ts":1,"dur":1}]`)))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.5,"dur":2},{"ph":"B","name":"b","pid":1,"tid":1,"ts":2},{"ph":"E","pid":1,"tid":1,"ts":3},{"ph":"s","id":1,"cat":"ac2g","pid":1,"tid":1,"ts":2},{"ph":"f","id":1,"bp":"e","cat":"ac2g","pid":0,"tid":7,"ts":4}]}`))
	f.Add([]byte(`[{"ph":"C","name":"c","ts":1,"args":{"v":1}},{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}},{"ph":"b","id":"0x1","cat":"x","ts":1},{"ph":"e","id":"0x1","cat":"x","ts":2},`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":9,"args":{"External id":3,"Input Dims":[[2,2],[2,2]]}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"External id":3,"correlation":7}},{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":4,"dur":3,"args":{"External id":3,"correlation":7}},{"ph":"i","cat":"cpu_instant_event","name":"[memory]","s":"t","pid":1,"tid":1,"ts":2,"args":{"Bytes":64,"Total Allocated":64,"Device Type":1,"Device Id":0}},{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":20}]}`))
	lim := config.Limits{MaxEvents: 1 << 12, MaxStringBytes: 1 << 16, MaxDecompressedBytes: 256 << 10, MaxStackDepth: 64, MaxStackFrames: 1 << 14}
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, data, lim) })
}

func checkRead(t *testing.T, data []byte, lim config.Limits) {
	{
		b, err := read(bytes.NewReader(data), lim)
		var m *model
		if err == nil {
			m, err = b.finish()
		}
		if err != nil {
			var pe *parseError
			var le *limitError
			if !errors.As(err, &pe) && !errors.As(err, &le) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		var n int64
		for i := range m.frames {
			n += m.frames[i].count
			if m.frames[i].self > m.frames[i].total || m.frames[i].incl > m.frames[i].total {
				t.Fatalf("frame %d: self %d incl %d total %d", i, m.frames[i].self, m.frames[i].incl, m.frames[i].total)
			}
		}
		if n != int64(len(m.slices)) {
			t.Fatalf("frames count %d slices, there are %d", n, len(m.slices))
		}
		for i, s := range m.slices {
			if s.start < 0 || s.dur < 0 {
				t.Fatalf("slice %d: %+v", i, s)
			}
			if i > 0 && m.slices[i-1].track == s.track && m.slices[i-1].start > s.start {
				t.Fatalf("slice %d out of order", i)
			}
			if s.parent >= 0 {
				p := m.slices[s.parent]
				if p.track != s.track || p.start > s.start || p.end() < s.end() {
					t.Fatalf("slice %d %+v not inside its parent %+v", i, s, p)
				}
			}
		}
		// Derived device time: what is linked is some operator's self
		// device time, and no slice's total is below its self.
		var devSelf int64
		for i := range m.frames {
			f := &m.frames[i]
			devSelf += f.devSelf
			if f.devSelf < 0 || f.allocBytes < 0 || (f.class == classOperator && f.devTotal < f.devSelf) {
				t.Fatalf("frame %d: device self %d total %d alloc %d", i, f.devSelf, f.devTotal, f.allocBytes)
			}
		}
		if devSelf != m.kin.linked || m.kin.unlinked < 0 {
			t.Fatalf("device self %d, linked %d, unlinked %d", devSelf, m.kin.linked, m.kin.unlinked)
		}
		for _, d := range m.kin.devices {
			if d.busy < 0 || d.busy > d.last-d.first || len(d.gaps) > maxGapRows {
				t.Fatalf("device %+v", d)
			}
		}
		if m.tracks == nil && len(m.slices) > 0 {
			t.Fatal("slices without tracks")
		}
	}
}
