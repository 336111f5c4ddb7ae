package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

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

// FuzzScanMatchesDecoder: the scanner (scan.go) and encoding/json's
// Decoder (decodestd_test.go) read every input alike: both refuse it, or
// both give the same model. Messages may differ; what is refused may not.
func FuzzScanMatchesDecoder(f *testing.F) {
	for _, seed := range []string{
		`[{"ph":"X","name":"a","ts":1,"dur":1}]`,
		`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.5,"dur":2},{"PH":"B","Name":"b","pid":"p","tid":1,"ts":"2"},{"ph":"E","pid":1,"tid":1,"ts":3,"ph":"E"}],"displayTimeUnit":"ns","deviceProperties":[{"name":"A100"}],"x":[1,{"y":null}]}`,
		`[{"ph":"C","name":"c","ts":1,"args":{"v":1}},{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}},null,{"ph":"b","id":"0x1","cat":"x","ts":1},{"ph":"e","id":"0x1","cat":"x","ts":2},`,
		"[{\"ph\":\"X\",\"name\":\"bad\xff\\u00e9\\ud83d\\ude00\",\"ts\":1e2,\"dur\":-0.5}]",
		`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":0,"dur":9,"args":{"External id":3,"Input Dims":[[2,2],[2,2]]}},{"ph":"i","name":"[memory]","ts":2,"args":{"Bytes":"64","Device Type":1}}]}`,
		`[1]`, `{"traceEvents":{}}`, `[{"ph":5}]`, `[{"ts":"soon"}]`, `[{"ts":01}]`, `[{"a":tru}]`, `{"traceEvents":[]} x`, `{"traceEvents":[],"traceEvents":[]}`,
	} {
		f.Add([]byte(seed))
	}
	lim := config.Limits{MaxEvents: 1 << 12, MaxStringBytes: 1 << 16, MaxDecompressedBytes: 256 << 10, MaxStackDepth: 64, MaxStackFrames: 1 << 14}
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, errS := readUsing(bytes.NewReader(data), lim, scanAll)
		bd, errD := readUsing(bytes.NewReader(data), lim, decodeAllStd)
		if (errS == nil) != (errD == nil) {
			t.Fatalf("scanner: %v; decoder: %v", errS, errD)
		}
		// A byte at a time: every value is measured again after a refill.
		b1, err1 := readUsing(iotest.OneByteReader(bytes.NewReader(data)), lim, scanAll)
		if (err1 == nil) != (errS == nil) || (err1 != nil && err1.Error() != errS.Error()) {
			t.Fatalf("byte at a time: %v; at once: %v", err1, errS)
		}
		if errS != nil {
			var ls, ld *limitError
			if errors.As(errS, &ls) != errors.As(errD, &ld) {
				t.Fatalf("scanner: %v; decoder: %v", errS, errD)
			}
			return
		}
		ms, errS := bs.finish()
		md, errD := bd.finish()
		if (errS == nil) != (errD == nil) {
			t.Fatalf("finish: scanner %v; decoder %v", errS, errD)
		}
		if errS == nil && !reflect.DeepEqual(ms, md) {
			t.Fatalf("models differ:\nscanner %+v\ndecoder %+v", ms, md)
		}
		if m1, err := b1.finish(); errS == nil && (err != nil || !reflect.DeepEqual(ms, m1)) {
			t.Fatalf("byte at a time: %v\n%+v\n%+v", err, m1, ms)
		}
	})
}

// FuzzArgsMatchUnmarshal: readOpArgs's hand reading of args gives what
// json.Unmarshal into the struct it replaced gives: the same External
// id, correlation and Input Dims, and the same refusals.
func FuzzArgsMatchUnmarshal(f *testing.F) {
	for _, seed := range []string{`{"External id":3,"correlation":"7","Input Dims":[[1,2]]}`, `{"external ID":1,"External id":null}`,
		`{"correlation":{}}`, `5`, `null`, `{"Input Dims":"x","Ext\u0065rnal id":2}`, `{"External id":"1e3"}`, `{"a":[{"External id":"x"}]}`} {
		f.Add([]byte(seed))
	}
	type opArgs struct {
		ExtID json.Number     `json:"External id"`
		Corr  json.Number     `json:"correlation"`
		Dims  json.RawMessage `json:"Input Dims"`
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var a opArgs
		wantOK := json.Unmarshal(raw, &a) == nil
		var ext, corr string
		var dims []byte
		ok := eachArg(raw, func(key string, val []byte) bool {
			good := true
			switch {
			case val[0] == 'n' && !strings.EqualFold(key, "Input Dims"):
			case strings.EqualFold(key, "External id"):
				ext, good = argNumber(val)
			case strings.EqualFold(key, "correlation"):
				corr, good = argNumber(val)
			case strings.EqualFold(key, "Input Dims"):
				dims = val
			}
			return good
		})
		if ok != wantOK {
			t.Fatalf("%s: ok %v, Unmarshal ok %v", raw, ok, wantOK)
		}
		if !ok {
			return
		}
		if ext != string(a.ExtID) || corr != string(a.Corr) || !bytes.Equal(bytes.TrimSpace(dims), bytes.TrimSpace(a.Dims)) {
			t.Fatalf("%s: %q %q %s; Unmarshal %q %q %s", raw, ext, corr, dims, a.ExtID, a.Corr, a.Dims)
		}
	})
}
