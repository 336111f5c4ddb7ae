package capture

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// Output streams a run stores (process_output registrations, by role).
var OutputStreams = []string{"stdout", "stderr", "oracle_stdout", "oracle_stderr"}

// Page sizes of ReadOutput, in bytes of the stored stream.
const (
	DefaultOutputPage = 16 << 10
	MaxOutputPage     = 64 << 10
)

// OutputRequest asks for one page of a run's stored output.
type OutputRequest struct {
	RunID  string `json:"run_id"`
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	// MaxBytes bounds the bytes read (DefaultOutputPage when 0, at most
	// MaxOutputPage).
	MaxBytes int64 `json:"max_bytes"`
}

// OutputPage is one page of a stored output stream: bytes [Offset,
// NextOffset) of Total, as escaped text (cli.Safe, newlines kept). A page
// ends on a character boundary, so reading on from NextOffset never splits
// one.
type OutputPage struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         string `json:"run_id"`
	Stream        string `json:"stream"`
	// ArtifactID is the stored stream; empty when the run wrote nothing
	// on it (then Total is 0).
	ArtifactID  string `json:"artifact_id,omitempty"`
	Sensitivity string `json:"sensitivity,omitempty"`
	Offset      int64  `json:"offset"`
	NextOffset  int64  `json:"next_offset"`
	Total       int64  `json:"total"`
	// Truncated says bytes follow NextOffset.
	Truncated bool   `json:"truncated"`
	Text      string `json:"text"`
	// OutputTruncated says the broker kept only the first
	// execution.max_output_bytes of the workload's streams.
	OutputTruncated bool `json:"output_truncated"`
}

// ReadOutput reads one page of a run's stored stdout, stderr or oracle
// output under the workspace's retention lock (shared). It only reads.
func ReadOutput(ctx context.Context, ws *workspace.Workspace, req OutputRequest) (*OutputPage, error) {
	if req.Stream == "" {
		req.Stream = "stdout"
	}
	if !validStream(req.Stream) {
		return nil, fault.New(fault.InvalidArguments, "stream %q is not one of %s", req.Stream, strings.Join(OutputStreams, ", ")).
			With("allowed", strings.Join(OutputStreams, ","))
	}
	if req.Offset < 0 || req.MaxBytes < 0 {
		return nil, fault.New(fault.InvalidArguments, "offset and max_bytes must not be negative")
	}
	size := req.MaxBytes
	if size == 0 {
		size = DefaultOutputPage
	}
	size = min(size, MaxOutputPage)
	// Readers hold the retention lock shared, so gc cannot remove the
	// payload while it is read.
	release, err := ws.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	defer release()
	var page *OutputPage
	err = func() error {
		m, err := (&run.Store{Root: ws.Root}).Get(strings.TrimSpace(req.RunID))
		if err != nil {
			return err
		}
		page = &OutputPage{SchemaVersion: 1, RunID: m.RunID, Stream: req.Stream, Offset: req.Offset, NextOffset: req.Offset}
		if m.Process != nil {
			page.OutputTruncated = m.Process.OutputTruncated
		}
		var reg *run.Registration
		for i, a := range m.Artifacts {
			if a.Kind == "process_output" && a.Role == req.Stream {
				reg = &m.Artifacts[i]
			}
		}
		if reg == nil {
			if req.Offset > 0 {
				return fault.New(fault.InvalidArguments, "offset %d is past the end of %s (0 bytes)", req.Offset, req.Stream)
			}
			return nil
		}
		page.ArtifactID, page.Sensitivity = reg.ArtifactID, reg.Sensitivity
		return page.read(filepath.Join(ws.Root, filepath.FromSlash(reg.PayloadPath)), size)
	}()
	if err != nil {
		return nil, err
	}
	return page, nil
}

func (p *OutputPage) read(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "open the stored %s of run %s", p.Stream, p.RunID)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "stat the stored %s", p.Stream)
	}
	p.Total = fi.Size()
	if p.Offset > p.Total {
		return fault.New(fault.InvalidArguments, "offset %d is past the end of %s (%d bytes)", p.Offset, p.Stream, p.Total).
			With("total", strconv.FormatInt(p.Total, 10))
	}
	b := make([]byte, min(size, p.Total-p.Offset))
	n, err := f.ReadAt(b, p.Offset)
	if err != nil && err != io.EOF {
		return fault.Wrap(fault.WorkspaceInvalid, err, "read the stored %s", p.Stream)
	}
	b = b[:n]
	if p.Offset+int64(n) < p.Total {
		b = wholeRunes(b)
	}
	p.NextOffset = p.Offset + int64(len(b))
	p.Truncated = p.NextOffset < p.Total
	p.Text = cli.SafeLines(strings.ToValidUTF8(string(b), "\uFFFD"))
	return nil
}

// wholeRunes drops an incomplete UTF-8 sequence at the end of b (the rest
// of it follows in the stream).
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func validStream(s string) bool {
	for _, x := range OutputStreams {
		if x == s {
			return true
		}
	}
	return false
}
