package trace

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kinetoIndependent reads what kineto.go derives, from generic maps: each
// device event's duration to the innermost host operator around the
// runtime call with its correlation id (else the operator whose External
// id it carries; in quadratic time, so only when deviceOwners is set), the operators' Input Dims, the ProfilerStep annotations and
// each device process's busy time (the union of its work intervals).
func kinetoIndependent(t *testing.T, raw []byte, deviceOwners bool) (dev map[opKey]int64, shapes map[[3]string]int64, steps int, busy map[string]int64) {
	t.Helper()
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var evs []any
	switch d := doc.(type) {
	case map[string]any:
		evs = d["traceEvents"].([]any)
	case []any:
		evs = d
	}
	arg := func(ev map[string]any, key string) string {
		a, _ := ev["args"].(map[string]any)
		for k, v := range a {
			if strings.EqualFold(k, key) {
				if n, ok := v.(json.Number); ok {
					return string(n)
				}
			}
		}
		return ""
	}
	track := func(ev map[string]any) string {
		p, _ := json.Marshal(ev["pid"])
		t, _ := json.Marshal(ev["tid"])
		return string(p) + "/" + string(t)
	}
	type op struct {
		key        opKey
		start, end int64
	}
	byExt := map[string]opKey{}
	opsOn := map[string][]op{}
	type launch struct {
		track      string
		start, end int64
	}
	launches := map[string]launch{}
	shapes = map[[3]string]int64{}
	for _, e := range evs {
		ev := e.(map[string]any)
		cat, _ := ev["cat"].(string)
		name, _ := ev["name"].(string)
		if ev["ph"] != "X" {
			continue
		}
		ts, d := ratNs(ev["ts"]), max(ratNs(ev["dur"]), 0)
		switch strings.ToLower(cat) {
		case "cpu_op", "operator":
			k := opKey{name, cat}
			if x := arg(ev, "External id"); x != "" && x != "0" {
				if _, ok := byExt[x]; !ok {
					byExt[x] = k
				}
			}
			opsOn[track(ev)] = append(opsOn[track(ev)], op{k, ts, ts + d})
			if a, ok := ev["args"].(map[string]any); ok && a["Input Dims"] != nil {
				b, _ := json.Marshal(a["Input Dims"])
				shapes[[3]string{name, cat, string(b)}]++
			}
		case "user_annotation":
			if strings.HasPrefix(name, "ProfilerStep#") {
				steps++
			}
		case "cuda_runtime", "cuda_driver", "runtime", "hip_runtime", "hip_driver":
			if c := arg(ev, "correlation"); c != "" && c != "0" {
				if _, ok := launches[c]; !ok {
					launches[c] = launch{track(ev), ts, ts + d}
				}
			}
		}
	}
	// innermost is the operator around a launch on its thread: the latest
	// to start among those that hold it whole.
	innermost := func(l launch) (opKey, bool) {
		best, found := op{}, false
		for _, o := range opsOn[l.track] {
			if o.start <= l.start && l.end <= o.end && (!found || o.start > best.start || (o.start == best.start && o.end < best.end)) {
				best, found = o, true
			}
		}
		return best.key, found
	}
	dev = map[opKey]int64{}
	type iv struct{ s, e int64 }
	per := map[string][]iv{}
	for _, e := range evs {
		ev := e.(map[string]any)
		cat, _ := ev["cat"].(string)
		if ev["ph"] != "X" {
			continue
		}
		switch strings.ToLower(cat) {
		case "kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "concurrent_kernel", "mtia_ccp_events", "gpu_pm_counter":
		default:
			continue
		}
		ts, d := ratNs(ev["ts"]), max(ratNs(ev["dur"]), 0)
		pid, _ := json.Marshal(ev["pid"])
		per[strings.Trim(string(pid), `"`)] = append(per[strings.Trim(string(pid), `"`)], iv{ts, ts + d})
		if !deviceOwners {
			continue
		}
		if l, ok := launches[arg(ev, "correlation")]; ok {
			if k, ok := innermost(l); ok {
				dev[k] += d
			}
		} else if k, ok := byExt[arg(ev, "External id")]; ok {
			dev[k] += d
		}
	}
	busy = map[string]int64{}
	for pid, ivs := range per {
		slices.SortFunc(ivs, func(a, b iv) int { return int(a.s - b.s) })
		cur := ivs[0]
		for _, x := range ivs[1:] {
			if x.s <= cur.e {
				cur.e = max(cur.e, x.e)
				continue
			}
			busy[pid] += cur.e - cur.s
			cur = x
		}
		busy[pid] += cur.e - cur.s
	}
	return dev, shapes, steps, busy
}

// TestKinetoDerived checks the operator device time, shapes, steps and
// device busy time of every fixture against the independent reading.
func TestKinetoDerived(t *testing.T) {
	for _, p := range append(local(t), shared(t, largest)) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			_, tables := extract(t, inputOf(t, p))
			small := !strings.Contains(p, largest)
			dev, shapes, steps, busy := kinetoIndependent(t, plain(t, p), small)
			ms := tables["measurements"]
			got := measurementsBy(ms, NameOpDeviceSelf)
			if !small {
				got = map[opKey]int64{}
			}
			for k, v := range dev {
				if got[k] != v {
					t.Errorf("%q: device_self %d, independent %d", k.name, got[k], v)
				}
			}
			for k, v := range got {
				if dev[k] != v {
					t.Errorf("%q: device_self %d, independent %d", k.name, v, dev[k])
				}
			}
			var selfSum, work int64
			for _, v := range measurementsBy(ms, NameOpDeviceSelf) {
				selfSum += v
			}
			for _, r := range ms {
				if r["name"] == NameOpTotal && dimsOf(r)["class"] == classDevice && dimsOf(r)["category"] != "gpu_user_annotation" {
					v, _ := r["value_int"].(int64)
					work += v
				}
			}
			linked := measurementsBy(ms, NameDeviceLinked)
			if selfSum != linked[opKey{"linked", ""}] || work != linked[opKey{"linked", ""}]+linked[opKey{"unlinked", ""}] {
				t.Errorf("device self sum %d, linked %v, device work %d", selfSum, linked, work)
			}
			gotShapes := map[[3]string]int64{}
			nsteps := 0
			gotBusy := map[string]int64{}
			for _, r := range ms {
				d := dimsOf(r)
				v, _ := r["value_int"].(int64)
				switch r["name"] {
				case NameOpShapes:
					gotShapes[[3]string{r["subject"].(string), d["category"], d["shapes"]}] = v
				case NameStep:
					nsteps++
				case NameDeviceBusy:
					gotBusy[d["pid"]] = v
				}
			}
			if len(shapes) != len(gotShapes) {
				t.Errorf("%d distinct (operator, Input Dims), independent %d", len(gotShapes), len(shapes))
			}
			for k, v := range shapes {
				if gotShapes[k] != v {
					t.Errorf("%q %s: %d slices, independent %d", k[0], k[2], gotShapes[k], v)
				}
			}
			if nsteps != steps {
				t.Errorf("%d trace.step rows, independent %d", nsteps, steps)
			}
			if len(busy) != len(gotBusy) {
				t.Errorf("device busy for %v, independent %v", gotBusy, busy)
			}
			for pid, v := range busy {
				if gotBusy[pid] != v {
					t.Errorf("pid %s: busy %d, independent %d", pid, gotBusy[pid], v)
				}
			}
		})
	}
}

// TestKinetoMemory checks profile_memory's [memory] events: totals per
// device, the peak, and each allocation bound to the innermost operator
// around it on its thread.
func TestKinetoMemory(t *testing.T) {
	doc := `{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":1,"Input Dims":[[4, 8],[16,8]]}},
{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":10,"dur":5,"args":{"External id":2,"Input Dims":[]}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":12,"args":{"Total Reserved":0,"Total Allocated":512,"Bytes":512,"Addr":1,"Device Type":0,"Device Id":-1}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":50,"args":{"Total Allocated":768,"Bytes":256,"Device Type":1,"Device Id":0}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":90,"args":{"Total Allocated":256,"Bytes":-512,"Device Type":0,"Device Id":-1}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":200,"args":{"Total Allocated":1024,"Bytes":768,"Device Type":0,"Device Id":-1}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":210,"args":{"Bytes":"many"}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":30,"dur":40,"args":{"External id":1}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":8,"ts":60,"dur":20,"args":{"External id":1}},
{"ph":"X","cat":"kernel","name":"fill","pid":0,"tid":7,"ts":150,"dur":10,"args":{"External id":99}},
{"ph":"X","cat":"gpu_user_annotation","name":"range","pid":0,"tid":9,"ts":0,"dur":300}
]}`
	x, tables := extract(t, inputOf(t, writeFile(t, []byte(doc))))
	got := map[string]int64{}
	for _, r := range tables["measurements"] {
		v, _ := r["value_int"].(int64)
		s, _ := r["subject"].(string)
		got[r["name"].(string)+"/"+s] = v
	}
	for k, want := range map[string]int64{
		NameMemAllocated + "/cpu": 1280, NameMemFreed + "/cpu": 512, NameMemPeak + "/cpu": 1024,
		NameMemAllocated + "/cuda:0": 256, NameMemPeak + "/cuda:0": 768,
		NameOpAlloc + "/aten::empty": 512, NameOpAlloc + "/aten::linear": 256,
		NameOpDeviceSelf + "/aten::linear": 60000, NameOpDeviceTotal + "/aten::linear": 60000,
		NameDeviceLinked + "/linked": 60000, NameDeviceLinked + "/unlinked": 10000,
		// gemm 30–70 and 60–80 overlap: busy 30–80 and 150–160; the
		// annotation range is not work.
		NameDeviceBusy + "/pid 0": 60000, NameDeviceIdle + "/pid 0": 70000, NameDeviceGaps + "/pid 0": 1,
		NameDeviceGap + "/pid 0": 70000,
	} {
		if got[k] != want {
			t.Errorf("%s = %d, want %d", k, got[k], want)
		}
	}
	if _, ok := got[NameOpAlloc+"/aten::linear"]; !ok {
		t.Error("no allocation bound to aten::linear")
	}
	shapes := map[string]bool{}
	for _, r := range tables["measurements"] {
		if r["name"] == NameOpShapes {
			shapes[r["subject"].(string)+" "+dimsOf(r)["shapes"]] = true
		}
	}
	if !shapes["aten::linear [[4,8],[16,8]]"] || !shapes["aten::empty []"] {
		t.Errorf("shapes %v", shapes)
	}
	for _, want := range []string{"1 operator, device or [memory] events have args", "10000 ns of device work", "outside any host operator"} {
		if !contains(x.Limitations, want) {
			t.Errorf("limitations lack %q: %v", want, x.Limitations)
		}
	}
}

// TestKinetoDerivedNotEmpty keeps TestKinetoDerived from passing on
// nothing: the A100 fixture links kernels to operators and records
// shapes nowhere, the ROCm one both.
func TestKinetoDerivedNotEmpty(t *testing.T) {
	for name, want := range map[string][2]bool{"hta__alexnet_a100_trace.json.gz": {true, false}, "hta__mi250_rocm6.2_kineto.json.gz": {true, true}} {
		dev, shapes, _, busy := kinetoIndependent(t, plain(t, filepath.Join("testdata", name)), true)
		if (len(dev) > 0) != want[0] || (len(shapes) > 0) != want[1] || len(busy) == 0 {
			t.Errorf("%s: %d operators with device time, %d shapes, %d devices", name, len(dev), len(shapes), len(busy))
		}
	}
}
