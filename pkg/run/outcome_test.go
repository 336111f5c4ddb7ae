package run

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		exec, capture, validation string
		exit                      int
	}{
		{ExecSucceeded, CaptureRegistered, ValidationNotRequested, fault.ExitOK},
		{ExecSucceeded, CaptureRegistered, ValidationPassed, fault.ExitOK},
		{ExecNotApplicable, CaptureRegistered, ValidationNotRequested, fault.ExitOK},
		{ExecFailed, CaptureRegistered, ValidationNotRequested, fault.ExitProcess},
		{ExecFailed, CaptureRegistered, ValidationError, fault.ExitProcess},
		{ExecFailed, CaptureFailed, ValidationCancelled, fault.ExitProcess},
		{ExecSucceeded, CaptureRegistered, ValidationCancelled, fault.ExitCancelled},
		{ExecTimedOut, CaptureRegistered, ValidationError, fault.ExitCancelled},
		{ExecCancelled, CaptureCancelled, ValidationCancelled, fault.ExitCancelled},
		{ExecSucceeded, CaptureCancelled, ValidationNotRequested, fault.ExitCancelled},
		{ExecSucceeded, CaptureFailed, ValidationPassed, fault.ExitProcess},
		{ExecSucceeded, CaptureQuarantined, ValidationPassed, fault.ExitIntegrity},
		{ExecSucceeded, CaptureRegistered, ValidationFailed, fault.ExitNegative},
		{ExecSucceeded, CaptureRegistered, ValidationError, fault.ExitNegative},
		{ExecRunning, CaptureRunning, ValidationPending, fault.ExitNegative},
	}
	for _, tt := range tests {
		m := &Manifest{RunID: "r", ExecutionStatus: tt.exec, CaptureStatus: tt.capture, ValidationStatus: tt.validation}
		exit, why := ExitStatus(m)
		if exit != tt.exit || (exit == 0) != (why == "") {
			t.Errorf("%s/%s/%s: exit %d (%q), want %d", tt.exec, tt.capture, tt.validation, exit, why, tt.exit)
		}
	}
}

// TestExitStatusCollectorFailed: a run failed by its collector says so on
// stderr, not that the workload failed.
func TestExitStatusCollectorFailed(t *testing.T) {
	m := &Manifest{RunID: "r", ExecutionStatus: ExecFailed, CaptureStatus: CaptureRegistered, ValidationStatus: ValidationNotRequested,
		Error: fault.New(fault.ProcessFailed, "the collector py-spy failed with exit status 1; the workload ended with exit status 0")}
	if exit, why := ExitStatus(m); exit != fault.ExitProcess || why != "the collector py-spy failed with exit status 1; see run r" {
		t.Errorf("exit %d, %q", exit, why)
	}
	m.Error = fault.New(fault.ProcessFailed, "the workload failed with exit status 3")
	if _, why := ExitStatus(m); why != "the workload failed; see run r" {
		t.Errorf("%q", why)
	}
}

// TestOutcomeRulesDoc keeps docs/exit-codes.md's run-outcome table in step
// with OutcomeRules, in order.
func TestOutcomeRulesDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, r := range OutcomeRules {
		row := fmt.Sprintf("| %s = %s | %d | %s |", r.Machine.Name, r.State, r.Exit, r.Meaning)
		i := strings.Index(string(doc[at:]), row)
		if i < 0 {
			t.Fatalf("docs/exit-codes.md lacks the row %q (after the previous rule)", row)
		}
		at += i + len(row)
	}
}
