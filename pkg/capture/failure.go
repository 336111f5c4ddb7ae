package capture

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/run"
)

// Failure says why a capture's workload did not succeed (it failed, timed
// out, was cancelled or its result was rejected): the adapter's reading of
// its output (adapter.FailureReader) or, without one, the capture's own
// class, and the tails of the stored stdout and stderr. Every string is
// escaped (cli.Safe): the output is the workload's, so untrusted.
type Failure struct {
	adapter.Failure
	// Stdout and Stderr are the ends of the stored (redacted) streams;
	// absent when the workload wrote nothing there.
	Stdout *OutputTail `json:"stdout_tail,omitempty"`
	Stderr *OutputTail `json:"stderr_tail,omitempty"`
}

// OutputTail is the end of one stored output stream.
type OutputTail struct {
	// Text is the last bytes (at most capture.output_tail_bytes), cut at
	// a line start when the cut falls inside the stream, then escaped;
	// newlines are kept.
	Text string `json:"text"`
	// Bytes is the stored stream's length; Truncated says Text is not all
	// of it (get_run_output or `flameox runs output` pages the rest).
	Bytes     int64 `json:"bytes"`
	Truncated bool  `json:"truncated"`
	// ArtifactID is the stored stream, when it was registered.
	ArtifactID string `json:"artifact_id,omitempty"`
}

// lineWidth bounds each of a failure's lines (in cells, after escaping).
const lineWidth = 300

// failed reports whether m's workload did not succeed.
func failed(m *run.Manifest) bool {
	return m.ExecutionStatus != run.ExecSucceeded || m.ValidationStatus == run.ValidationFailed
}

// readFailure builds the failure of the finished run m from the staged
// output in stage.
func (s *Service) readFailure(ctx context.Context, p *prepared, m *run.Manifest, stage string) *Failure {
	budget := s.WS.Config.Capture.OutputTailBytes
	in := adapter.FailureInput{Plan: p.apl, Stdout: filepath.Join(stage, "stdout.txt"), Stderr: filepath.Join(stage, "stderr.txt")}
	if pr := m.Process; pr != nil {
		in.ExitCode, in.Signal, in.TimedOut, in.Cancelled = pr.ExitCode, pr.Signal, pr.TimedOut, pr.Cancelled
	}
	if m.ExecutionStatus == run.ExecCancelled {
		in.Cancelled = true
	}
	if m.ExecutionStatus == run.ExecTimedOut {
		in.TimedOut = true
	}
	if m.ValidationStatus == run.ValidationFailed && m.Validation != nil {
		in.Validation = m.Validation.Reason
	}
	var f *adapter.Failure
	if r, ok := p.ad.(adapter.FailureReader); ok {
		f = r.ReadFailure(ctx, in)
	}
	if f == nil {
		f = ownFailure(m, in)
	}
	out := &Failure{Failure: *f}
	out.Summary = cli.Cut(f.Summary, lineWidth)
	out.Remediation = make([]string, len(f.Remediation))
	for i, r := range f.Remediation {
		out.Remediation[i] = cli.Safe(r)
	}
	for i, t := range f.FailedTests {
		out.FailedTests[i] = cli.Cut(t, lineWidth)
	}
	out.Lines = lastLines(f.Lines, budget)
	ids := map[string]string{}
	for _, a := range m.Artifacts {
		if a.Kind == "process_output" {
			ids[a.Role] = a.ArtifactID
		}
	}
	if budget > 0 {
		out.Stdout = tailOf(in.Stdout, budget, ids["stdout"])
		out.Stderr = tailOf(in.Stderr, budget, ids["stderr"])
	}
	return out
}

// ownFailure is the class of a run whose adapter said nothing.
func ownFailure(m *run.Manifest, in adapter.FailureInput) *adapter.Failure {
	f := &adapter.Failure{Class: adapter.FailureProcess, Remediation: []string{}}
	switch {
	case in.TimedOut:
		f.Class = adapter.FailureTimeout
		f.Remediation = append(f.Remediation, "Raise the workload's timeout_seconds in flameox.toml, or make it do less.")
	case in.Cancelled:
		f.Class = adapter.FailureCancelled
	case in.Validation != "":
		f.Class, f.Summary = adapter.FailureValidation, in.Validation
	}
	if f.Summary == "" && m.Error != nil {
		f.Summary = m.Error.Message
	}
	return f
}

// lastLines keeps the last lines whose escaped text fits in budget bytes,
// each cut to lineWidth cells.
func lastLines(lines []string, budget int64) []string {
	var out []string
	var n int64
	for i := len(lines) - 1; i >= 0; i-- {
		l := cli.Cut(lines[i], lineWidth)
		if n+int64(len(l))+1 > budget {
			break
		}
		n += int64(len(l)) + 1
		out = append(out, l)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// tailOf reads the last budget bytes of the file at path, or nil when it
// is missing or empty.
func tailOf(path string, budget int64, id string) *OutputTail {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil
	}
	start := max(fi.Size()-budget, 0)
	b := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return nil
	}
	return &OutputTail{Text: Tail(b, start > 0), Bytes: fi.Size(), Truncated: start > 0, ArtifactID: id}
}

// Tail turns the last bytes of a stream into text safe to show: when cut
// is set (b starts inside the stream) it drops the partial UTF-8 sequence
// and the partial line it starts with (unless b is one line), and it
// escapes every control and format character but the newline (cli.Safe).
func Tail(b []byte, cut bool) string {
	if cut {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return cli.SafeLines(strings.ToValidUTF8(string(b), "\uFFFD"))
}
