package analysis

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// OpPyTorch is the pytorch analysis's operation name.
const (
	OpPyTorch      = "pytorch"
	PyTorchVersion = "1"
)

// Thresholds of the pytorch recipe's observations.
const (
	// warmupRatio: a first step this many times the steady median is
	// called a warm-up step.
	warmupRatio = 1.5
	// smallOpMinCount: a repeated small operation ran at least this often.
	smallOpMinCount = 3
	// maxPyTorchGaps bounds the idle gaps listed per device.
	maxPyTorchGaps = 5
	// maxPyTorchShapes bounds the shapes listed per operator.
	maxPyTorchShapes = 3
)

// PyTorchRequest asks what a torch.profiler trace spent its time on.
type PyTorchRequest struct {
	Input string `json:"input" jsonschema:"trace artifact id (sha256:...), or a run id (its newest trace)"`
	Limit int    `json:"limit,omitempty" jsonschema:"rows per list (default 20, max 1000)"`
	Sort  string `json:"sort,omitempty" jsonschema:"self (default), total, device or count"`
}

// Flags registers --limit and --sort (`flameox analyze pytorch`).
func (r *PyTorchRequest) Flags(fs *pflag.FlagSet) {
	limitFlag(fs, &r.Limit, 20, "rows per list")
	fs.StringVar(&r.Sort, "sort", "self", "operator order: self (self CPU time), total (CPU time with children), device (device time), count")
}

// PyTorchOperator is one operator (cpu_op) of the trace, its slices
// summed.
type PyTorchOperator struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	FrameID  string `json:"frame_id"`
	Count    int64  `json:"count"`
	// SelfCPUNs is the operators' host time less their children's;
	// TotalCPUNs with the children (recursion counted once per slice).
	SelfCPUNs  int64 `json:"self_cpu_ns"`
	TotalCPUNs int64 `json:"total_cpu_ns"`
	MaxNs      int64 `json:"max_ns"`
	MeanNs     int64 `json:"mean_ns"`
	// DeviceSelfNs is the device work (kernels, copies, memsets) the
	// operator launched itself (the runtime calls directly inside it);
	// DeviceTotalNs adds the work of the operators nested in it.
	DeviceSelfNs  int64          `json:"device_self_ns"`
	DeviceTotalNs int64          `json:"device_total_ns"`
	Kernels       int64          `json:"kernels"`
	AllocBytes    int64          `json:"alloc_bytes"`
	Allocations   int64          `json:"allocations"`
	Shapes        []PyTorchShape `json:"shapes,omitempty"`
}

// PyTorchShape is one Input Dims of an operator (record_shapes).
type PyTorchShape struct {
	Shapes  string `json:"shapes"`
	Count   int64  `json:"count"`
	TotalNs int64  `json:"total_ns"`
}

// PyTorchKernel is one kind of device work: a kernel, copy or memset name.
type PyTorchKernel struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	FrameID  string `json:"frame_id"`
	Count    int64  `json:"count"`
	TotalNs  int64  `json:"total_ns"`
	MaxNs    int64  `json:"max_ns"`
}

// PyTorchSync is the time spent synchronizing host and device.
type PyTorchSync struct {
	// HostNs is the host's time in synchronizing runtime calls
	// (cudaDeviceSynchronize, cudaStreamSynchronize, ...): time the host
	// waited on the device.
	HostNs    int64 `json:"host_ns"`
	HostCalls int64 `json:"host_calls"`
	// DeviceNs is the device's cuda_sync slices (stream and event waits).
	DeviceNs int64 `json:"device_ns"`
	// FractionOfSpan is HostNs over the trace's span.
	FractionOfSpan float64       `json:"fraction_of_span"`
	Calls          []PyTorchCall `json:"calls"`
}

// PyTorchCall is a named host or device call and its time.
type PyTorchCall struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Count    int64  `json:"count"`
	TotalNs  int64  `json:"total_ns"`
}

// PyTorchDevice is one device's activity: from its first work to its
// last, the time it was busy (the union of its streams' work) and idle.
type PyTorchDevice struct {
	Process     string       `json:"process"`
	PID         string       `json:"pid"`
	FirstNs     int64        `json:"first_ns"`
	LastNs      int64        `json:"last_ns"`
	BusyNs      int64        `json:"busy_ns"`
	IdleNs      int64        `json:"idle_ns"`
	Utilization float64      `json:"utilization"`
	GapCount    int64        `json:"gap_count"`
	Gaps        []PyTorchGap `json:"largest_gaps"`
}

// PyTorchGap is an interval with no work on a device.
type PyTorchGap struct {
	StartNs    int64 `json:"start_ns"`
	EndNs      int64 `json:"end_ns"`
	DurationNs int64 `json:"duration_ns"`
}

// PyTorchSteps compares the profiler steps (ProfilerStep#N annotations).
type PyTorchSteps struct {
	Count int `json:"count"`
	// FirstNs is the first step's duration; SteadyMedianNs the median of
	// the others, SteadyMADNs their median absolute deviation.
	FirstNs        int64   `json:"first_ns"`
	SteadyMedianNs int64   `json:"steady_median_ns"`
	SteadyMADNs    int64   `json:"steady_mad_ns"`
	FirstToSteady  float64 `json:"first_to_steady"`
	// WarmUp is set when the first step took at least warmup_ratio times
	// the steady median.
	WarmUp      bool          `json:"warm_up"`
	WarmupRatio float64       `json:"warmup_ratio"`
	Steps       []PyTorchStep `json:"steps"`
}

// PyTorchStep is one profiler step.
type PyTorchStep struct {
	Name       string `json:"name"`
	StartNs    int64  `json:"start_ns"`
	DurationNs int64  `json:"duration_ns"`
}

// PyTorchSmallOp is an operator called often for little time each:
// a candidate for fusing or batching.
type PyTorchSmallOp struct {
	Name    string `json:"name"`
	FrameID string `json:"frame_id"`
	Count   int64  `json:"count"`
	MeanNs  int64  `json:"mean_ns"`
	TotalNs int64  `json:"total_ns"`
}

// PyTorchMemory is one device's allocations ([memory] events of
// profile_memory).
type PyTorchMemory struct {
	Device         string `json:"device"`
	AllocatedBytes int64  `json:"allocated_bytes"`
	FreedBytes     int64  `json:"freed_bytes"`
	PeakBytes      *int64 `json:"peak_bytes,omitempty"`
	Allocations    int64  `json:"allocations"`
}

// PyTorchCoverage says what the trace contained: a false flag is evidence
// the trace cannot give, not evidence of absence.
type PyTorchCoverage struct {
	SelfCPUTime       bool `json:"self_cpu_time"`
	TotalCPUTime      bool `json:"total_cpu_time"`
	DeviceTime        bool `json:"device_time"`
	DeviceLinked      bool `json:"device_time_linked"`
	InputShapes       bool `json:"input_shapes"`
	MemoryAllocations bool `json:"memory_allocations"`
	Synchronization   bool `json:"synchronization"`
	WarmupPhases      bool `json:"warmup_phases"`
	PythonStacks      bool `json:"python_stacks"`
}

// PyTorchResult is the result of `flameox analyze pytorch` and MCP
// analyze_pytorch.
type PyTorchResult struct {
	SchemaVersion    int            `json:"schema_version"`
	Operation        string         `json:"operation"`
	OperationVersion string         `json:"operation_version"`
	CorpusCommitID   string         `json:"corpus_commit_id"`
	Source           Source         `json:"source"`
	Parameters       PyTorchRequest `json:"parameters"`
	SpanNs           int64          `json:"span_ns"`
	// Operators are the host operators in --sort order (Limit of them,
	// OperatorsTotal in all).
	Operators        []PyTorchOperator `json:"operators"`
	OperatorsTotal   int               `json:"operators_total"`
	Kernels          []PyTorchKernel   `json:"kernels"`
	KernelsTotal     int               `json:"kernels_total"`
	DeviceLinkedNs   int64             `json:"device_linked_ns"`
	DeviceUnlinkedNs int64             `json:"device_unlinked_ns"`
	Sync             PyTorchSync       `json:"synchronization"`
	// Compilation lists the torch.compile / TorchScript regions the trace
	// holds (names with Torch-Compiled Region, CompiledFunction, dynamo,
	// inductor, graph_executor); they may nest.
	Compilation      []PyTorchCall     `json:"compilation"`
	Devices          []PyTorchDevice   `json:"devices"`
	Steps            *PyTorchSteps     `json:"steps,omitempty"`
	RepeatedSmallOps []PyTorchSmallOp  `json:"repeated_small_operations"`
	SmallOpCutoffNs  int64             `json:"small_op_cutoff_ns"`
	Memory           []PyTorchMemory   `json:"memory"`
	TopAllocators    []PyTorchOperator `json:"top_allocators"`
	Coverage         PyTorchCoverage   `json:"coverage"`
	// Observations are the result in sentences, for a person or an agent.
	Observations  []string `json:"observations"`
	EvidenceLevel string   `json:"evidence_level"`
	Limitations   []string `json:"limitations"`
	Truncated     bool     `json:"truncated"`
	fault.Next
}

// PyTorchOutput is `flameox analyze pytorch`'s and MCP analyze_pytorch's
// result: the analysis, and its recording when asked.
type PyTorchOutput struct {
	*PyTorchResult
	Recorded *Recorded `json:"recorded,omitempty"`
}

func (r *PyTorchResult) provenance() (string, string, string, any, Source, any, []string) {
	return r.Operation, r.OperationVersion, r.CorpusCommitID, r.Parameters, r.Source,
		map[string]any{"operators_total": r.OperatorsTotal, "kernels_total": r.KernelsTotal, "flags": r.Coverage, "truncated": r.Truncated}, r.Limitations
}

// qPyTorchRows reads the trace measurements the recipe needs, of one
// generation of one trace.
var qPyTorchRows = catalog.Query{Name: "analysis.pytorch_rows", Version: "1", SQL: `
SELECT name, coalesce(subject, ''), coalesce(value_int, 0), coalesce(dimensions['frame_id'], ''), coalesce(dimensions['category'], ''),
       coalesce(dimensions['class'], ''), coalesce(dimensions['device'], '') = 'true', coalesce(dimensions['shapes'], ''),
       coalesce(TRY_CAST(dimensions['total_ns'] AS BIGINT), 0), coalesce(TRY_CAST(dimensions['kernels'] AS BIGINT), 0),
       coalesce(TRY_CAST(dimensions['allocations'] AS BIGINT), 0), coalesce(TRY_CAST(dimensions['events'] AS BIGINT), 0),
       coalesce(dimensions['pid'], ''), coalesce(TRY_CAST(dimensions['first_ns'] AS BIGINT), 0), coalesce(TRY_CAST(dimensions['last_ns'] AS BIGINT), 0),
       coalesce(TRY_CAST(dimensions['start_ns'] AS BIGINT), 0), coalesce(TRY_CAST(dimensions['end_ns'] AS BIGINT), 0),
       coalesce(TRY_CAST(dimensions['index'] AS BIGINT), 0), coalesce(dimensions['process'], '')
FROM measurements
WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND scope = 'trace'
  AND (name LIKE 'trace.op.%' OR name LIKE 'trace.device.%' OR name LIKE 'trace.memory.%' OR name = 'trace.step'
       OR name = 'trace.category.total')`}

type ptRow struct {
	name, subject                    string
	v                                int64
	frame, cat, class                string
	device                           bool
	shapes                           string
	totalNs, kernels, allocs, events int64
	pid                              string
	first, last, start, end, index   int64
	process                          string
}

// PyTorch reads what a torch.profiler trace (or any Kineto trace) spent
// its time on: operators, device work, synchronization, idle gaps on the
// device, warm-up against steady state, repeated small operations and
// memory, from the rows the trace extractor wrote.
func PyTorch(ctx context.Context, ws *workspace.Workspace, req PyTorchRequest) (*PyTorchResult, error) {
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	switch req.Sort {
	case "":
		req.Sort = "self"
	case "self", "total", "device", "count":
	default:
		return nil, fault.New(fault.InvalidArguments, "--sort %q is not one of self, total, device, count", req.Sort).With("field", "sort")
	}
	s, err := query.OpenTables(ctx, ws, "artifacts", "measurements")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	src, span, _, lim, err := traceSource(ctx, s, req.Input)
	if err != nil {
		return nil, err
	}
	var rows []ptRow
	err = s.R.Scan(ctx, qPyTorchRows, []any{src.RunID, src.ArtifactID, src.GenerationID}, func(rs *sql.Rows) error {
		for rs.Next() {
			var r ptRow
			if err := rs.Scan(&r.name, &r.subject, &r.v, &r.frame, &r.cat, &r.class, &r.device, &r.shapes, &r.totalNs, &r.kernels,
				&r.allocs, &r.events, &r.pid, &r.first, &r.last, &r.start, &r.end, &r.index, &r.process); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, err
	}
	res := &PyTorchResult{SchemaVersion: 1, Operation: OpPyTorch, OperationVersion: PyTorchVersion, CorpusCommitID: s.Commit(),
		Source: *src, Parameters: req, SpanNs: span, EvidenceLevel: "observed", Next: fault.Next{NextSteps: []string{}},
		Operators: []PyTorchOperator{}, Kernels: []PyTorchKernel{}, Compilation: []PyTorchCall{}, Devices: []PyTorchDevice{},
		RepeatedSmallOps: []PyTorchSmallOp{}, Memory: []PyTorchMemory{}, TopAllocators: []PyTorchOperator{}, Observations: []string{},
		Sync: PyTorchSync{Calls: []PyTorchCall{}}}
	res.Limitations = append(lim,
		"Operator times are the host's wall time in each slice (waiting included); self time excludes the slices nested in it on the same thread.",
		"Device work is linked to the host operator around the runtime call that launched it (its correlation id; else the External id Kineto writes on both); nesting and links say what ran inside or for what, not what caused a cost.",
		"The trace covers the profiler's window only (its schedule's active steps); warm-up before the window is not in it.")
	if !torchTrace(src.Producer, rows) {
		return nil, fault.New(fault.ComparisonInvalid, "%s is not a PyTorch trace: it has no operator (cpu_op) slices and its producer (%q) does not name torch", src.ArtifactID, src.Producer).
			With("field", "input").
			FixSteps("Import a torch.profiler export (export_chrome_trace or tensorboard_trace_handler), or capture one (%s); use trace window for other Chrome traces.",
				fault.Step{Command: "flameox trace window " + src.ArtifactID, Tool: "get_trace_window", Arguments: map[string]any{"input": src.ArtifactID}})
	}
	pytorchBuild(res, rows, limit)
	if len(res.Devices) > 0 && len(res.Devices[0].Gaps) > 0 {
		g := res.Devices[0].Gaps[0]
		res.Then(fault.Step{Command: fmt.Sprintf("flameox trace window %s --start %d --end %d", src.ArtifactID, g.StartNs, g.EndNs),
			Tool: "get_trace_window", Arguments: map[string]any{"input": src.ArtifactID, "start_ns": g.StartNs, "end_ns": g.EndNs}})
	}
	res.Then(fault.Step{Command: "flameox open " + src.ArtifactID, Tool: "get_native_viewer_plan", Arguments: map[string]any{"artifact_id": src.ArtifactID}})
	return res, nil
}

// torchTrace is the recipe's provenance check: the producer names torch,
// or the trace has operator-class slices (cpu_op, Kineto's).
func torchTrace(producer string, rows []ptRow) bool {
	if strings.Contains(strings.ToLower(producer), "torch") {
		return true
	}
	for _, r := range rows {
		if r.name == "trace.op.count" && r.class == "operator" {
			return true
		}
	}
	return false
}

// compiledName reports torch.compile and TorchScript regions.
func compiledName(n string) bool {
	l := strings.ToLower(n)
	for _, k := range []string{"torch-compiled region", "compiledfunction", "dynamo", "inductor", "graph_executor", "compiled_autograd"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

// syncName reports host calls that wait for the device.
func syncName(n string) bool {
	return strings.Contains(strings.ToLower(n), "synchronize")
}

func pytorchBuild(res *PyTorchResult, rows []ptRow, limit int) {
	type frameAgg struct {
		op     PyTorchOperator
		class  string
		device bool
		shapes []PyTorchShape
	}
	frames := map[string]*frameAgg{}
	get := func(r ptRow) *frameAgg {
		f := frames[r.frame]
		if f == nil {
			f = &frameAgg{op: PyTorchOperator{Name: r.subject, Category: r.cat, FrameID: r.frame}, class: r.class, device: r.device}
			frames[r.frame] = f
		}
		if r.class != "" {
			f.class, f.device = r.class, f.device || r.device
		}
		return f
	}
	devs := map[string]*PyTorchDevice{}
	var devOrder []string
	dev := func(r ptRow) *PyTorchDevice {
		d := devs[r.pid]
		if d == nil {
			d = &PyTorchDevice{PID: r.pid, Process: r.subject, Gaps: []PyTorchGap{}}
			devs[r.pid] = d
			devOrder = append(devOrder, r.pid)
		}
		return d
	}
	mem := map[string]*PyTorchMemory{}
	var memOrder []string
	memOf := func(d string) *PyTorchMemory {
		m := mem[d]
		if m == nil {
			m = &PyTorchMemory{Device: d}
			mem[d] = m
			memOrder = append(memOrder, d)
		}
		return m
	}
	var steps []PyTorchStep
	var stepIdx []int64
	python := false
	for _, r := range rows {
		switch r.name {
		case "trace.op.count":
			get(r).op.Count = r.v
		case "trace.op.total":
			get(r).op.TotalCPUNs = r.v
		case "trace.op.self":
			get(r).op.SelfCPUNs = r.v
		case "trace.op.max":
			get(r).op.MaxNs = r.v
		case "trace.op.device_self":
			f := get(r)
			f.op.DeviceSelfNs, f.op.Kernels = r.v, r.kernels
		case "trace.op.device_total":
			get(r).op.DeviceTotalNs = r.v
		case "trace.op.alloc_bytes":
			f := get(r)
			f.op.AllocBytes, f.op.Allocations = r.v, r.allocs
		case "trace.op.shapes":
			f := get(r)
			f.shapes = append(f.shapes, PyTorchShape{Shapes: r.shapes, Count: r.v, TotalNs: r.totalNs})
			res.Coverage.InputShapes = true
		case "trace.step":
			steps = append(steps, PyTorchStep{Name: r.subject, StartNs: r.start, DurationNs: r.v})
			stepIdx = append(stepIdx, r.index)
		case "trace.device.busy":
			d := dev(r)
			d.BusyNs, d.FirstNs, d.LastNs = r.v, r.first, r.last
			if r.process != "" {
				d.Process = r.process
			}
		case "trace.device.idle":
			dev(r).IdleNs = r.v
		case "trace.device.gaps":
			dev(r).GapCount = r.v
		case "trace.device.gap":
			d := dev(r)
			d.Gaps = append(d.Gaps, PyTorchGap{StartNs: r.start, EndNs: r.end, DurationNs: r.v})
		case "trace.device.linked":
			if r.subject == "linked" {
				res.DeviceLinkedNs = r.v
			} else {
				res.DeviceUnlinkedNs = r.v
			}
		case "trace.memory.allocated":
			m := memOf(r.subject)
			m.AllocatedBytes, m.Allocations = r.v, r.events
			res.Coverage.MemoryAllocations = true
		case "trace.memory.freed":
			memOf(r.subject).FreedBytes = r.v
		case "trace.memory.peak":
			v := r.v
			memOf(r.subject).PeakBytes = &v
		case "trace.category.total":
			if r.class == "python" {
				python = true
			}
		}
	}
	var ops, smallPool []PyTorchOperator
	var sync []PyTorchCall
	runtime := false
	for _, f := range frames {
		switch {
		case f.class == "operator" && !f.device:
			slices.SortFunc(f.shapes, func(a, b PyTorchShape) int {
				return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(b.TotalNs, a.TotalNs), strings.Compare(a.Shapes, b.Shapes))
			})
			f.op.Shapes = f.shapes[:min(len(f.shapes), maxPyTorchShapes)]
			if f.op.Count > 0 {
				f.op.MeanNs = f.op.TotalCPUNs / f.op.Count
			}
			ops = append(ops, f.op)
		case f.class == "device":
			if !strings.EqualFold(f.op.Category, "gpu_user_annotation") {
				res.Kernels = append(res.Kernels, PyTorchKernel{Name: f.op.Name, Category: f.op.Category, FrameID: f.op.FrameID, Count: f.op.Count, TotalNs: f.op.TotalCPUNs, MaxNs: f.op.MaxNs})
			}
		case f.class == "runtime":
			runtime = true
			if syncName(f.op.Name) {
				res.Sync.HostNs += f.op.TotalCPUNs
				res.Sync.HostCalls += f.op.Count
				sync = append(sync, PyTorchCall{Name: f.op.Name, Category: f.op.Category, Count: f.op.Count, TotalNs: f.op.TotalCPUNs})
			}
		case f.class == "sync":
			res.Sync.DeviceNs += f.op.TotalCPUNs
			sync = append(sync, PyTorchCall{Name: f.op.Name, Category: f.op.Category, Count: f.op.Count, TotalNs: f.op.TotalCPUNs})
		}
		if (f.class == "operator" || f.class == "annotation") && compiledName(f.op.Name) {
			res.Compilation = append(res.Compilation, PyTorchCall{Name: f.op.Name, Category: f.op.Category, Count: f.op.Count, TotalNs: f.op.TotalCPUNs})
		}
	}
	key := func(o PyTorchOperator) int64 {
		switch res.Parameters.Sort {
		case "total":
			return o.TotalCPUNs
		case "device":
			return o.DeviceTotalNs
		case "count":
			return o.Count
		}
		return o.SelfCPUNs
	}
	slices.SortFunc(ops, func(a, b PyTorchOperator) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(b.TotalCPUNs, a.TotalCPUNs), strings.Compare(a.Name, b.Name), strings.Compare(a.FrameID, b.FrameID))
	})
	res.OperatorsTotal = len(ops)
	res.Operators = append(res.Operators, ops[:min(len(ops), limit)]...)
	slices.SortFunc(res.Kernels, func(a, b PyTorchKernel) int {
		return cmp.Or(cmp.Compare(b.TotalNs, a.TotalNs), strings.Compare(a.Name, b.Name), strings.Compare(a.FrameID, b.FrameID))
	})
	res.KernelsTotal = len(res.Kernels)
	res.Kernels = res.Kernels[:min(len(res.Kernels), limit)]
	res.Truncated = res.OperatorsTotal > len(res.Operators) || res.KernelsTotal > len(res.Kernels)
	slices.SortFunc(sync, func(a, b PyTorchCall) int {
		return cmp.Or(cmp.Compare(b.TotalNs, a.TotalNs), strings.Compare(a.Name, b.Name))
	})
	res.Sync.Calls = append(res.Sync.Calls, sync[:min(len(sync), limit)]...)
	if res.SpanNs > 0 {
		res.Sync.FractionOfSpan = float64(res.Sync.HostNs) / float64(res.SpanNs)
	}
	slices.SortFunc(res.Compilation, func(a, b PyTorchCall) int {
		return cmp.Or(cmp.Compare(b.TotalNs, a.TotalNs), strings.Compare(a.Name, b.Name))
	})
	res.Compilation = res.Compilation[:min(len(res.Compilation), limit)]
	for _, pid := range devOrder {
		d := devs[pid]
		if span := d.LastNs - d.FirstNs; span > 0 {
			d.Utilization = float64(d.BusyNs) / float64(span)
		}
		slices.SortFunc(d.Gaps, func(a, b PyTorchGap) int {
			return cmp.Or(cmp.Compare(b.DurationNs, a.DurationNs), cmp.Compare(a.StartNs, b.StartNs))
		})
		d.Gaps = d.Gaps[:min(len(d.Gaps), maxPyTorchGaps)]
		res.Devices = append(res.Devices, *d)
	}
	slices.SortFunc(res.Devices, func(a, b PyTorchDevice) int {
		return cmp.Or(cmp.Compare(b.BusyNs, a.BusyNs), strings.Compare(a.PID, b.PID))
	})
	for _, d := range memOrder {
		res.Memory = append(res.Memory, *mem[d])
	}
	slices.SortFunc(res.Memory, func(a, b PyTorchMemory) int { return strings.Compare(a.Device, b.Device) })
	for _, o := range ops {
		if o.Allocations > 0 {
			smallPool = append(smallPool, o)
		}
	}
	slices.SortFunc(smallPool, func(a, b PyTorchOperator) int {
		return cmp.Or(cmp.Compare(b.AllocBytes, a.AllocBytes), strings.Compare(a.Name, b.Name))
	})
	res.TopAllocators = append(res.TopAllocators, smallPool[:min(len(smallPool), limit)]...)
	res.RepeatedSmallOps, res.SmallOpCutoffNs = repeatedSmall(ops, limit)
	// Steps in their order in the trace.
	order := make([]int, len(steps))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(stepIdx[a], stepIdx[b]) })
	if len(steps) > 0 {
		st := &PyTorchSteps{Count: len(steps), WarmupRatio: warmupRatio, Steps: []PyTorchStep{}}
		for _, i := range order {
			st.Steps = append(st.Steps, steps[i])
		}
		st.FirstNs = st.Steps[0].DurationNs
		if len(st.Steps) >= 2 {
			rest := make([]float64, 0, len(st.Steps)-1)
			for _, s := range st.Steps[1:] {
				rest = append(rest, float64(s.DurationNs))
			}
			med, mad := medianMAD(rest)
			st.SteadyMedianNs, st.SteadyMADNs = int64(math.Round(med)), int64(math.Round(mad))
			if med > 0 {
				st.FirstToSteady = float64(st.FirstNs) / med
				st.WarmUp = st.FirstToSteady >= warmupRatio
			}
		}
		st.Steps = st.Steps[:min(len(st.Steps), limit)]
		res.Steps = st
		res.Truncated = res.Truncated || st.Count > len(st.Steps)
	}
	c := &res.Coverage
	c.SelfCPUTime, c.TotalCPUTime = len(ops) > 0, len(ops) > 0
	c.DeviceTime = res.KernelsTotal > 0
	c.DeviceLinked = res.DeviceLinkedNs > 0
	c.Synchronization = runtime || res.Sync.DeviceNs > 0
	c.WarmupPhases = res.Steps != nil && res.Steps.Count >= 2
	c.PythonStacks = python
	res.Observations = pytorchObservations(res)
	if !c.DeviceTime {
		res.Limitations = append(res.Limitations, "The trace has no device work (CPU activities only, or no accelerator): device time, idle gaps and device synchronization are not in it.")
	}
	if !c.InputShapes {
		res.Limitations = append(res.Limitations, "The trace has no Input Dims: it was recorded without record_shapes=True.")
	}
	if !c.MemoryAllocations {
		res.Limitations = append(res.Limitations, "The trace has no [memory] events: it was recorded without profile_memory=True.")
	}
	if !c.WarmupPhases {
		res.Limitations = append(res.Limitations, "The trace has fewer than two ProfilerStep# annotations (prof.step() not called in the window): warm-up and steady state cannot be told apart.")
	}
}

// repeatedSmall lists the operators that ran at least smallOpMinCount
// times for at most the 25th percentile of the operators' mean times
// each, most frequent first; cutoff is that percentile.
func repeatedSmall(ops []PyTorchOperator, limit int) ([]PyTorchSmallOp, int64) {
	var means []float64
	for _, o := range ops {
		if o.Count > 0 {
			means = append(means, float64(o.TotalCPUNs)/float64(o.Count))
		}
	}
	out := []PyTorchSmallOp{}
	if len(means) == 0 {
		return out, 0
	}
	slices.Sort(means)
	cut := quantile7(means, 0.25)
	for _, o := range ops {
		if o.Count >= smallOpMinCount && float64(o.TotalCPUNs)/float64(o.Count) <= cut {
			out = append(out, PyTorchSmallOp{Name: o.Name, FrameID: o.FrameID, Count: o.Count, MeanNs: o.TotalCPUNs / o.Count, TotalNs: o.TotalCPUNs})
		}
	}
	slices.SortFunc(out, func(a, b PyTorchSmallOp) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(b.TotalNs, a.TotalNs), strings.Compare(a.Name, b.Name))
	})
	return out[:min(len(out), limit)], int64(math.Round(cut))
}

// quantile7 is the q-quantile of sorted xs, linear between the order
// statistics (Hyndman and Fan's type 7, numpy's and pandas' default,
// which users of torch.profiler's tables compute by). gonum's
// stat.Quantile offers the empirical CDF and type 4 only.
func quantile7(xs []float64, q float64) float64 {
	h := q * float64(len(xs)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// pytorchObservations says the result in sentences.
func pytorchObservations(r *PyTorchResult) []string {
	var out []string
	if len(r.Operators) > 0 {
		o := r.Operators[0]
		out = append(out, fmt.Sprintf("%s leads by %s: %s self CPU in %d call(s), %s with children.", o.Name, sortLabel(r.Parameters.Sort),
			HumanDuration(o.SelfCPUNs), o.Count, HumanDuration(o.TotalCPUNs)))
	}
	for i, d := range r.Devices {
		if i == 2 {
			break
		}
		s := fmt.Sprintf("Device %s was busy %.1f%% of its active span (%s of %s)", cmp.Or(d.Process, d.PID), 100*d.Utilization,
			HumanDuration(d.BusyNs), HumanDuration(d.LastNs-d.FirstNs))
		if len(d.Gaps) > 0 {
			s += fmt.Sprintf("; its longest idle gap is %s at %s", HumanDuration(d.Gaps[0].DurationNs), HumanDuration(d.Gaps[0].StartNs))
		}
		out = append(out, s+".")
	}
	if r.Sync.HostCalls > 0 {
		out = append(out, fmt.Sprintf("The host waited on the device in %d synchronizing call(s) for %s (%.1f%% of the trace).", r.Sync.HostCalls,
			HumanDuration(r.Sync.HostNs), 100*r.Sync.FractionOfSpan))
	}
	if st := r.Steps; st != nil && st.Count >= 2 {
		if st.WarmUp {
			out = append(out, fmt.Sprintf("The first step took %.1f× the steady median (%s against %s): a warm-up step; compare steady steps only.",
				st.FirstToSteady, HumanDuration(st.FirstNs), HumanDuration(st.SteadyMedianNs)))
		} else {
			out = append(out, fmt.Sprintf("%d steps, the first %.2f× the steady median (%s): no warm-up step by the %.1f× rule.",
				st.Count, st.FirstToSteady, HumanDuration(st.SteadyMedianNs), warmupRatio))
		}
	}
	if len(r.RepeatedSmallOps) > 0 {
		o := r.RepeatedSmallOps[0]
		out = append(out, fmt.Sprintf("%d operator(s) ran often for little each (at most %s mean); the most frequent, %s, %d times for %s in all.",
			len(r.RepeatedSmallOps), HumanDuration(r.SmallOpCutoffNs), o.Name, o.Count, HumanDuration(o.TotalNs)))
	}
	if r.DeviceUnlinkedNs > 0 && r.DeviceLinkedNs+r.DeviceUnlinkedNs > 0 {
		out = append(out, fmt.Sprintf("%.0f%% of the device time carries no host operator's External id.",
			100*float64(r.DeviceUnlinkedNs)/float64(r.DeviceLinkedNs+r.DeviceUnlinkedNs)))
	}
	for _, m := range r.Memory {
		s := fmt.Sprintf("%s: %s allocated in %d allocation(s)", m.Device, HumanBytes(m.AllocatedBytes), m.Allocations)
		if m.PeakBytes != nil {
			s += ", peak " + HumanBytes(*m.PeakBytes)
		}
		out = append(out, s+".")
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func sortLabel(s string) string {
	switch s {
	case "total":
		return "CPU time with children"
	case "device":
		return "device time"
	case "count":
		return "calls"
	}
	return "self CPU time"
}

// HumanBytes prints a byte count in pprof's units.
func HumanBytes(n int64) string { return scaledLabel(n, "bytes", "auto") }
