package run

import (
	"fmt"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// OutcomeRule maps one state of one machine to the exit status of the
// process that recorded the run (SPEC §2), and says what it means.
type OutcomeRule struct {
	Machine *Machine
	State   string
	Exit    int
	Meaning string
}

// OutcomeRules is the one mapping of a recorded run's outcome to an exit
// status, used by every tool that captures (`flameox capture run`,
// `fox-capture run`) and documented in docs/exit-codes.md. The first rule
// that matches wins; the rules follow the machines in the order a run goes
// through them (execution, capture, validation), so the first step that
// did not succeed decides: a failed workload outranks the validation it
// made impossible. A run no rule matches (execution succeeded or not
// applicable, capture registered, validation passed or not requested)
// exits 0.
var OutcomeRules = []OutcomeRule{
	{Execution, ExecTimedOut, fault.ExitCancelled, "the workload timed out"},
	{Execution, ExecCancelled, fault.ExitCancelled, "the workload was cancelled"},
	{Execution, ExecFailed, fault.ExitProcess, "the workload failed"},
	{Capture, CaptureCancelled, fault.ExitCancelled, "the capture was cancelled"},
	{Capture, CaptureFailed, fault.ExitProcess, "the capture failed: its artifacts were not all stored"},
	{Capture, CaptureQuarantined, fault.ExitIntegrity, "the run is quarantined"},
	{Validation, ValidationCancelled, fault.ExitCancelled, "the validation was cancelled"},
	{Validation, ValidationFailed, fault.ExitNegative, "the validation failed: the oracle or the adapter's check rejected the result"},
	{Validation, ValidationError, fault.ExitNegative, "the validation could not be completed"},
}

// CollectorFailedPrefix begins the error of a run whose collector failed
// (capture's outcome: "the collector py-spy failed with exit status 1;
// the workload ended with …").
const CollectorFailedPrefix = "the collector "

// ExitStatus returns the exit status for the recorded run m and, unless it
// is 0, why (for the tool's one line on stderr). A run that is not
// terminal yet is a negative result (1).
func ExitStatus(m *Manifest) (int, string) {
	state := map[*Machine]string{Execution: m.ExecutionStatus, Capture: m.CaptureStatus, Validation: m.ValidationStatus}
	for _, r := range OutcomeRules {
		if state[r.Machine] == r.State {
			why := r.Meaning
			// A validation's own reason says what was rejected and why.
			if r.Machine == Validation && m.Validation != nil && m.Validation.Reason != "" {
				head, _, _ := strings.Cut(why, ":")
				why = head + ": " + m.Validation.Reason
			}
			// A collector that failed below a workload that did not is
			// not the workload's failure: its error says so first.
			if r.Machine == Execution && r.State == ExecFailed && m.Error != nil && strings.HasPrefix(m.Error.Message, CollectorFailedPrefix) {
				why, _, _ = strings.Cut(m.Error.Message, ";")
			}
			return r.Exit, why + "; see run " + m.RunID
		}
	}
	if !m.Terminal() {
		return fault.ExitNegative, fmt.Sprintf("run %s has not finished (execution %s, capture %s, validation %s)",
			m.RunID, m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus)
	}
	return fault.ExitOK, ""
}
