package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

func newRun(t *testing.T) (*Store, Manifest) {
	s := &Store{Root: t.TempDir()}
	os.MkdirAll(filepath.Join(s.Root, "runs"), 0o700)
	now := time.Now().UTC()
	m := Manifest{RunID: NewID(), RunType: TypeExecution, CreatedAt: now, UpdatedAt: now,
		ExecutionStatus: ExecPlanned, CaptureStatus: CapturePending, ValidationStatus: ValidationPending}
	if err := s.Create(m); err != nil {
		t.Fatal(err)
	}
	return s, m
}

func next(m Manifest, exec, capture, validation string) Manifest {
	n := m.Clone()
	n.Revision++
	n.ExecutionStatus, n.CaptureStatus, n.ValidationStatus = exec, capture, validation
	return n
}

func TestLifecycle(t *testing.T) {
	s, m := newRun(t)
	steps := [][3]string{
		{ExecRunning, CaptureRunning, ValidationPending},
		{ExecSucceeded, CaptureRunning, ValidationRunning},
		{ExecSucceeded, CaptureRegistered, ValidationPassed},
		{ExecSucceeded, CaptureQuarantined, ValidationPassed},
	}
	for _, st := range steps {
		n := next(m, st[0], st[1], st[2])
		if err := s.Append(&m, n); err != nil {
			t.Fatalf("%v: %v", st, err)
		}
		m = n
	}
	got, err := s.Get(m.RunID)
	if err != nil || got.Revision != 4 || got.CaptureStatus != CaptureQuarantined {
		t.Fatalf("projection %+v %v", got, err)
	}
	for i := 0; i <= 4; i++ {
		r, err := s.Revision(m.RunID, i)
		if err != nil || r.Revision != i {
			t.Fatalf("revision %d: %v", i, err)
		}
	}
	log, _ := os.ReadFile(filepath.Join(s.Dir(m.RunID), "log.jsonl"))
	if strings.Count(string(log), "\n") != 5 {
		t.Fatalf("log has %d lines", strings.Count(string(log), "\n"))
	}
}

func TestIllegalTransitions(t *testing.T) {
	tests := []struct {
		name string
		path [][3]string
	}{
		{"planned to succeeded", [][3]string{{ExecSucceeded, CapturePending, ValidationPending}}},
		{"terminal execution moves", [][3]string{{ExecFailed, CaptureFailed, ValidationCancelled}, {ExecRunning, CaptureFailed, ValidationCancelled}}},
		{"registered back to running", [][3]string{{ExecRunning, CaptureRegistered, ValidationPending}, {ExecRunning, CaptureRunning, ValidationPending}}},
		{"validation skips running", [][3]string{{ExecRunning, CaptureRunning, ValidationPassed}}},
		{"unknown state", [][3]string{{"exploded", CapturePending, ValidationPending}}},
		{"not_applicable cannot appear later", [][3]string{{ExecNotApplicable, CapturePending, ValidationPending}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newRun(t)
			var err error
			for _, st := range tt.path {
				n := next(m, st[0], st[1], st[2])
				if err = s.Append(&m, n); err != nil {
					break
				}
				m = n
			}
			if err == nil || !strings.Contains(err.Error(), "transition") && !strings.Contains(err.Error(), "unknown state") {
				t.Fatalf("illegal path accepted: %v", err)
			}
			if fault.As(err).RunID == "" && !strings.Contains(err.Error(), "unknown state") {
				t.Fatal("error lacks the run id")
			}
		})
	}
}

func TestRevisionCAS(t *testing.T) {
	s, m := newRun(t)
	a := next(m, ExecRunning, CaptureRunning, ValidationPending)
	if err := s.Append(&m, a); err != nil {
		t.Fatal(err)
	}
	// A second writer that also read revision 0 loses.
	b := next(m, ExecCancelled, CaptureCancelled, ValidationCancelled)
	if err := s.Append(&m, b); !fault.Is(err, fault.RevisionConflict) {
		t.Fatalf("stale append: %v", err)
	}
	// Skipping a revision is refused.
	c := next(a, ExecRunning, CaptureRunning, ValidationPending)
	c.Revision++
	if err := s.Append(&a, c); err == nil {
		t.Fatal("revision gap accepted")
	}
	if err := s.Create(m); !fault.Is(err, fault.RevisionConflict) {
		t.Fatalf("recreate: %v", err)
	}
	if _, err := s.Get("../../etc"); !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("path traversal id: %v", err)
	}
}

func TestImportMustBeNotApplicable(t *testing.T) {
	s := &Store{Root: t.TempDir()}
	os.MkdirAll(filepath.Join(s.Root, "runs"), 0o700)
	m := Manifest{RunID: NewID(), RunType: TypeImport, ExecutionStatus: ExecPlanned, CaptureStatus: CapturePending, ValidationStatus: ValidationNotRequested}
	if err := s.Create(m); err == nil {
		t.Fatal("import run with planned execution accepted")
	}
}
