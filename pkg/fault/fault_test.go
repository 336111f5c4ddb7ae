package fault

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		err  *Error
		exit int
	}{
		{New(WorkspaceInvalid, "x"), ExitIntegrity},
		{New(WorkspaceInvalid, "x").With(DetailKind, KindConfig), ExitUsage},
		{New(WriteLockTimeout, "x"), ExitConcurrency},
		{New(ExecutionRefused, "x"), ExitPolicy},
		{New(ProcessTimeout, "x"), ExitCancelled},
		{New(Code("SOMETHING_NEW"), "x"), ExitNegative},
	}
	for _, tt := range tests {
		if got := tt.err.ExitCode(); got != tt.exit {
			t.Errorf("%s: exit %d, want %d", tt.err.Code, got, tt.exit)
		}
	}
}

func TestAsWrapsUnknownErrors(t *testing.T) {
	base := errors.New("disk on fire")
	fe := As(fmt.Errorf("publishing: %w", base))
	if fe.Code != InternalError || !errors.Is(fe, base) || !strings.Contains(fe.Message, "disk on fire") {
		t.Fatalf("got %+v", fe)
	}
	inner := New(NotFound, "run x").ForRun("x")
	if got := As(fmt.Errorf("ctx: %w", inner)); got != inner {
		t.Fatal("As lost the structured error")
	}
	if !Is(fmt.Errorf("ctx: %w", inner), NotFound) || Is(base, NotFound) {
		t.Fatal("Is")
	}
}

// TestExitCodesDoc keeps docs/exit-codes.md listing every code with its exit.
func TestExitCodesDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Codes() {
		exit := exitCodes[c]
		row := fmt.Sprintf("| %s | %d", c, exit)
		if c == WorkspaceInvalid {
			row = fmt.Sprintf("| %s | 2 / %d", c, exit)
		}
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/exit-codes.md lacks the row %q", row)
		}
	}
}

// libError is a library error that lost its errno, as DuckDB's do.
type libError struct{ msg string }

func (e *libError) Error() string { return e.msg }

// TestAsStorageFull: ENOSPC or EDQUOT anywhere in a chain, or a library's
// text for them, becomes a retryable STORAGE_FULL (exit 3) naming the
// directory to free, whatever code the call site chose.
func TestAsStorageFull(t *testing.T) {
	pathErr := &os.PathError{Op: "write", Path: "/w/.diagnostics/runs/r/.m.json.1.tmp", Err: syscall.ENOSPC}
	tests := []struct {
		name     string
		err      error
		full     bool
		dir      string
		reported string
		runID    string
	}{
		{"path error", fmt.Errorf("write manifest: %w", pathErr), true, "/w/.diagnostics/runs/r", "", ""},
		{"quota under internal", Wrap(InternalError, &os.PathError{Op: "open", Path: "/q/a/b", Err: syscall.EDQUOT}, "stage"), true, "/q/a", "", ""},
		{"link under workspace invalid", Wrap(WorkspaceInvalid, &os.LinkError{Op: "link", Old: "/s/tmp", New: "/o/obj/p", Err: syscall.ENOSPC}, "install").ForRun("r1"),
			true, "/o/obj", "WORKSPACE_INVALID", "r1"},
		{"syscall error has no path", fmt.Errorf("sync: %w", os.NewSyscallError("fsync", syscall.ENOSPC)), true, "", "", ""},
		{"joined", errors.Join(errors.New("other"), pathErr), true, "/w/.diagnostics/runs/r", "", ""},
		{"duckdb text", Wrap(InternalError, fmt.Errorf("exec: %w", &libError{`IO Error: Could not write all bytes to file "/w/.diagnostics/catalog.duckdb.tmp": No space left on device`}), "build the catalog"),
			true, "/w/.diagnostics", "", ""},
		{"quota text", &libError{"IO Error: Disk quota exceeded"}, true, "", "", ""},
		{"a parser quoting an artifact", Wrap(ArtifactParseFailed, &libError{`strconv.ParseInt: parsing "No space left on device": invalid syntax`}, "parse"), false, "", "", ""},
		{"a parser meeting a real ENOSPC", Wrap(ArtifactParseFailed, pathErr, "parse"), true, "/w/.diagnostics/runs/r", "ARTIFACT_PARSE_FAILED", ""},
		{"flameox text is not a library's", New(ProcessFailed, "the workload said: No space left on device"), false, "", "", ""},
		{"other errno", fmt.Errorf("x: %w", &os.PathError{Op: "open", Path: "/a", Err: syscall.EACCES}), false, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := As(tt.err)
			if got := fe.Code == StorageFull; got != tt.full || Is(tt.err, StorageFull) != tt.full {
				t.Fatalf("code %s, want storage full %v", fe.Code, tt.full)
			}
			if !tt.full {
				return
			}
			if !fe.Retryable || fe.ExitCode() != ExitCapability || !errors.Is(fe, tt.err) {
				t.Fatalf("retryable %v exit %d wraps %v", fe.Retryable, fe.ExitCode(), errors.Is(fe, tt.err))
			}
			if fe.Details["directory"] != tt.dir || fe.Details["reported_as"] != tt.reported || fe.RunID != tt.runID {
				t.Fatalf("details %v run %q", fe.Details, fe.RunID)
			}
			hint := strings.Join(fe.Remediation, "\n")
			if tt.dir != "" && !strings.Contains(hint, "Free space in "+tt.dir) || strings.Contains(hint, "bug") {
				t.Fatalf("remediation %q", hint)
			}
			if As(fe) != fe || As(fmt.Errorf("again: %w", fe)) != fe {
				t.Fatal("a STORAGE_FULL error is not kept as it is")
			}
		})
	}
}
