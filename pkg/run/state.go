package run

import "github.com/flameox/flameox/pkg/fault"

// The three independent state machines of a run (SPEC §3). Each revision of
// a run may move each machine along one of the edges below, or leave it.

// Execution states: did the workload run?
const (
	ExecNotApplicable = "not_applicable" // imports: nothing was executed
	ExecPlanned       = "planned"
	ExecRunning       = "running"
	ExecSucceeded     = "succeeded"
	ExecFailed        = "failed"
	ExecTimedOut      = "timed_out"
	ExecCancelled     = "cancelled"
)

// Capture states: are the artifacts staged and registered?
const (
	CapturePending     = "pending"
	CaptureRunning     = "running"
	CaptureRegistered  = "registered"
	CaptureFailed      = "failed"
	CaptureQuarantined = "quarantined"
	CaptureCancelled   = "cancelled"
)

// Validation states: did the oracle accept the result?
const (
	ValidationNotRequested = "not_requested"
	ValidationPending      = "pending"
	ValidationRunning      = "running"
	ValidationPassed       = "passed"
	ValidationFailed       = "failed"
	ValidationError        = "error"
	ValidationCancelled    = "cancelled"
)

// Machine is one state machine: its states and legal edges.
type Machine struct {
	Name     string
	Initial  []string
	edges    map[string][]string
	terminal map[string]bool
}

func machine(name string, initial []string, edges map[string][]string) *Machine {
	m := &Machine{Name: name, Initial: initial, edges: edges, terminal: map[string]bool{}}
	for s, next := range edges {
		if len(next) == 0 {
			m.terminal[s] = true
		}
	}
	return m
}

var (
	Execution = machine("execution_status", []string{ExecNotApplicable, ExecPlanned}, map[string][]string{
		ExecNotApplicable: nil,
		ExecPlanned:       {ExecRunning, ExecFailed, ExecCancelled},
		ExecRunning:       {ExecSucceeded, ExecFailed, ExecTimedOut, ExecCancelled},
		ExecSucceeded:     nil, ExecFailed: nil, ExecTimedOut: nil, ExecCancelled: nil,
	})
	Capture = machine("capture_status", []string{CapturePending}, map[string][]string{
		CapturePending:     {CaptureRunning, CaptureRegistered, CaptureFailed, CaptureCancelled},
		CaptureRunning:     {CaptureRegistered, CaptureFailed, CaptureCancelled, CaptureQuarantined},
		CaptureRegistered:  {CaptureQuarantined},
		CaptureFailed:      {CaptureQuarantined},
		CaptureCancelled:   {CaptureQuarantined},
		CaptureQuarantined: nil,
	})
	Validation = machine("validation_status", []string{ValidationNotRequested, ValidationPending}, map[string][]string{
		ValidationNotRequested: nil,
		ValidationPending:      {ValidationRunning, ValidationError, ValidationCancelled},
		ValidationRunning:      {ValidationPassed, ValidationFailed, ValidationError, ValidationCancelled},
		ValidationPassed:       nil, ValidationFailed: nil, ValidationError: nil, ValidationCancelled: nil,
	})
)

// States lists a machine's states.
func (m *Machine) States() []string {
	out := make([]string, 0, len(m.edges))
	for s := range m.edges {
		out = append(out, s)
	}
	return out
}

// Terminal reports whether s has no outgoing edges.
func (m *Machine) Terminal(s string) bool { return m.terminal[s] }

// Check returns an error unless from → to is legal (staying put is legal).
func (m *Machine) Check(from, to string) error {
	if _, ok := m.edges[to]; !ok {
		return fault.New(fault.InternalError, "%s: unknown state %q", m.Name, to)
	}
	if from == to {
		return nil
	}
	for _, n := range m.edges[from] {
		if n == to {
			return nil
		}
	}
	return fault.New(fault.InternalError, "%s: illegal transition %s → %s", m.Name, from, to).With("from", from).With("to", to)
}

// CheckInitial returns an error unless s may begin a run.
func (m *Machine) CheckInitial(s string) error {
	for _, i := range m.Initial {
		if i == s {
			return nil
		}
	}
	return fault.New(fault.InternalError, "%s: a run cannot start in state %q", m.Name, s)
}
