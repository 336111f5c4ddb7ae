package analysis

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

const alexnetFixture = "../adapter/trace/testdata/hta__alexnet_a100_trace.json.gz"

// kinetoEvents reads the complete events of a gzipped trace into generic
// maps, durations in ns through exact decimals.
type kinetoEvent struct {
	name, cat string
	dur       int64
}

func kinetoEvents(t *testing.T, path string) []kinetoEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(z)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []kinetoEvent
	for _, e := range doc.TraceEvents {
		if e["ph"] != "X" {
			continue
		}
		n, _ := e["dur"].(json.Number)
		r, _ := new(big.Rat).SetString(string(n))
		r.Mul(r, big.NewRat(1000, 1))
		d, _ := r.Float64()
		name, _ := e["name"].(string)
		cat, _ := e["cat"].(string)
		out = append(out, kinetoEvent{name, cat, max(int64(d+0.5), 0)})
	}
	return out
}

// TestPyTorchA100 runs the recipe on a real A100 Kineto trace and checks
// its sums against an independent reading of the JSON.
func TestPyTorchA100(t *testing.T) {
	ws, runs := importProfiles(t, alexnetFixture)
	res, err := PyTorch(context.Background(), ws, PyTorchRequest{Input: runs[0], Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	evs := kinetoEvents(t, alexnetFixture)
	opCount := map[string]int64{}
	var kernels, devSync, hostSync, hostCalls int64
	for _, e := range evs {
		switch e.cat {
		case "cpu_op":
			opCount[e.name]++
		case "kernel", "gpu_memcpy", "gpu_memset":
			kernels += e.dur
		case "cuda_sync":
			devSync += e.dur
		case "cuda_runtime":
			if strings.Contains(strings.ToLower(e.name), "synchronize") {
				hostSync += e.dur
				hostCalls++
			}
		}
	}
	if res.OperatorsTotal != len(opCount) || res.Truncated {
		t.Fatalf("%d operators (truncated %v), independent %d", res.OperatorsTotal, res.Truncated, len(opCount))
	}
	var devSelf, kernelTotal int64
	for i, o := range res.Operators {
		if o.Count != opCount[o.Name] {
			t.Errorf("%s: %d calls, independent %d", o.Name, o.Count, opCount[o.Name])
		}
		if i > 0 && o.SelfCPUNs > res.Operators[i-1].SelfCPUNs {
			t.Errorf("operators not in self order at %d", i)
		}
		if o.DeviceTotalNs < o.DeviceSelfNs || o.TotalCPUNs < o.SelfCPUNs {
			t.Errorf("%s: totals below self: %+v", o.Name, o)
		}
		devSelf += o.DeviceSelfNs
	}
	for _, k := range res.Kernels {
		kernelTotal += k.TotalNs
	}
	if kernelTotal != kernels || res.DeviceLinkedNs+res.DeviceUnlinkedNs != kernels || devSelf != res.DeviceLinkedNs || devSelf == 0 {
		t.Errorf("device: kernels %d linked %d unlinked %d, operators' device self %d; independent %d", kernelTotal, res.DeviceLinkedNs, res.DeviceUnlinkedNs, devSelf, kernels)
	}
	if res.Sync.DeviceNs != devSync || res.Sync.HostNs != hostSync || res.Sync.HostCalls != hostCalls || hostCalls == 0 {
		t.Errorf("sync %+v, independent device %d host %d in %d", res.Sync, devSync, hostSync, hostCalls)
	}
	if len(res.Devices) != 1 {
		t.Fatalf("devices %+v", res.Devices)
	}
	d := res.Devices[0]
	if d.BusyNs <= 0 || d.BusyNs > kernels || d.Utilization <= 0 || d.Utilization > 1 || d.BusyNs+d.IdleNs != d.LastNs-d.FirstNs || len(d.Gaps) == 0 {
		t.Errorf("device %+v", d)
	}
	c := res.Coverage
	if !c.SelfCPUTime || !c.DeviceTime || !c.DeviceLinked || !c.Synchronization || c.InputShapes || c.MemoryAllocations || c.WarmupPhases {
		t.Errorf("coverage %+v", c)
	}
	for _, want := range []string{"record_shapes", "profile_memory", "ProfilerStep"} {
		if !anyHas(res.Limitations, want) {
			t.Errorf("limitations lack %q", want)
		}
	}
	if len(res.Observations) < 2 || len(res.NextSteps) == 0 {
		t.Errorf("observations %v next %v", res.Observations, res.NextSteps)
	}
	// --sort device puts the operators with device time first.
	byDev, err := PyTorch(context.Background(), ws, PyTorchRequest{Input: res.Source.ArtifactID, Limit: 3, Sort: "device"})
	if err != nil {
		t.Fatal(err)
	}
	if len(byDev.Operators) != 3 || !byDev.Truncated || byDev.Operators[0].DeviceTotalNs < byDev.Operators[1].DeviceTotalNs || byDev.Operators[0].DeviceTotalNs == 0 {
		t.Errorf("sort device: %+v", byDev.Operators)
	}
}

// TestPyTorchShapesAndSteps reads the ROCm trace (record_shapes, two
// profiler steps) and the CPU-only one (one step).
func TestPyTorchShapesAndSteps(t *testing.T) {
	ws, runs := importProfiles(t, traceFixture, "../adapter/trace/testdata/hta__cpu_only_rank-34.pt.trace.json.gz")
	rocm, err := PyTorch(context.Background(), ws, PyTorchRequest{Input: runs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !rocm.Coverage.InputShapes || rocm.Steps == nil || rocm.Steps.Count != 2 || !rocm.Coverage.WarmupPhases || !rocm.Coverage.DeviceTime {
		t.Fatalf("rocm: coverage %+v steps %+v", rocm.Coverage, rocm.Steps)
	}
	st := rocm.Steps
	if st.SteadyMedianNs != st.Steps[1].DurationNs || st.WarmUp != (float64(st.FirstNs) >= warmupRatio*float64(st.SteadyMedianNs)) {
		t.Errorf("steps %+v", st)
	}
	shaped := false
	for _, o := range rocm.Operators {
		if len(o.Shapes) > maxPyTorchShapes {
			t.Errorf("%s: %d shapes", o.Name, len(o.Shapes))
		}
		var n int64
		for _, s := range o.Shapes {
			n += s.Count
			shaped = shaped || strings.HasPrefix(s.Shapes, "[")
		}
		if n > o.Count {
			t.Errorf("%s: %d shaped calls of %d", o.Name, n, o.Count)
		}
	}
	if !shaped {
		t.Error("no operator lists its Input Dims")
	}
	cpu, err := PyTorch(context.Background(), ws, PyTorchRequest{Input: runs[1]})
	if err != nil {
		t.Fatal(err)
	}
	if cpu.Coverage.DeviceTime || cpu.Coverage.WarmupPhases || cpu.Steps == nil || cpu.Steps.Count != 1 || len(cpu.Devices) != 0 {
		t.Errorf("cpu only: coverage %+v steps %+v devices %v", cpu.Coverage, cpu.Steps, cpu.Devices)
	}
	if !anyHas(cpu.Limitations, "no device work") {
		t.Errorf("limitations %v", cpu.Limitations)
	}
}

// TestPyTorchRefuses: a Chrome trace that is not PyTorch's, and a bad
// --sort, are clear errors.
func TestPyTorchRefuses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "browser.json")
	doc := `{"traceEvents":[{"ph":"X","cat":"blink","name":"Layout","pid":1,"tid":1,"ts":0,"dur":5},{"ph":"X","cat":"v8","name":"GC","pid":1,"tid":1,"ts":10,"dur":3}]}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, runs := importProfiles(t, p)
	_, err := PyTorch(context.Background(), ws, PyTorchRequest{Input: runs[0]})
	if !fault.Is(err, fault.ComparisonInvalid) || !strings.Contains(err.Error(), "not a PyTorch trace") {
		t.Fatalf("err %v", err)
	}
	_, err = PyTorch(context.Background(), ws, PyTorchRequest{Input: runs[0], Sort: "fastest"})
	if !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("sort: %v", err)
	}
}

func TestRepeatedSmall(t *testing.T) {
	ops := []PyTorchOperator{
		{Name: "aten::add", Count: 100, TotalCPUNs: 1000},  // mean 10
		{Name: "aten::mul", Count: 2, TotalCPUNs: 10},      // mean 5, too few calls
		{Name: "aten::mm", Count: 10, TotalCPUNs: 100000},  // mean 10000
		{Name: "aten::relu", Count: 50, TotalCPUNs: 5000},  // mean 100
		{Name: "aten::view", Count: 300, TotalCPUNs: 2400}, // mean 8
	}
	got, cut := repeatedSmall(ops, 10)
	// means sorted 5, 8, 10, 100, 10000: the 25th percentile (type 7)
	// is 8.
	if cut != 8 {
		t.Fatalf("cutoff %d", cut)
	}
	for _, o := range got {
		if o.Name == "aten::mul" || o.Name == "aten::mm" || o.Name == "aten::relu" {
			t.Errorf("%s listed", o.Name)
		}
	}
	if len(got) == 0 || got[0].Name != "aten::view" {
		t.Errorf("got %+v", got)
	}
}

func anyHas(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
