package fault

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestAsReadOnly: a write that met a read-only file system is
// CAPABILITY_UNAVAILABLE (exit 3) naming the directory, whatever code the
// call site gave it, never INTERNAL_ERROR's "this is a bug"; other errnos
// and artifact text are left alone.
func TestAsReadOnly(t *testing.T) {
	pathErr := &os.PathError{Op: "mkdir", Path: "/w/.diagnostics/runs/r1", Err: syscall.EROFS}
	tests := []struct {
		name     string
		err      error
		ro       bool
		dir      string
		reported string
	}{
		{"path error", fmt.Errorf("create run directory: %w", pathErr), true, "/w/.diagnostics/runs", ""},
		{"under workspace invalid", Wrap(WorkspaceInvalid, pathErr, "create"), true, "/w/.diagnostics/runs", "WORKSPACE_INVALID"},
		{"duckdb text", Wrap(InternalError, &libError{`IO Error: Cannot open file "/w/.diagnostics/.catalog-1.duckdb": Read-only file system`}, "create"), true, "/w/.diagnostics", ""},
		{"artifact text", Wrap(ArtifactParseFailed, &libError{`bad name "read-only file system"`}, "parse"), false, "", ""},
		{"other errno", fmt.Errorf("x: %w", &os.PathError{Op: "open", Path: "/a", Err: syscall.EACCES}), false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := As(tt.err)
			if got := fe.Code == CapabilityUnavailable; got != tt.ro {
				t.Fatalf("code %s, want read-only %v", fe.Code, tt.ro)
			}
			if !tt.ro {
				return
			}
			if fe.ExitCode() != ExitCapability || !errors.Is(fe, tt.err) || fe.Details["directory"] != tt.dir || fe.Details["reported_as"] != tt.reported {
				t.Fatalf("exit %d details %v", fe.ExitCode(), fe.Details)
			}
			if hint := strings.Join(fe.Remediation, "\n"); !strings.Contains(hint, "writable") || strings.Contains(hint, "bug") {
				t.Fatalf("remediation %q", hint)
			}
			if As(fe) != fe || As(fmt.Errorf("again: %w", fe)) != fe {
				t.Fatal("the error is not kept as it is")
			}
		})
	}
}
