package fault

import (
	"errors"
	"fmt"
	"os"
	"strings"
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
