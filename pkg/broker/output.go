package broker

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// outputStderrLimit is how much stderr Output keeps for its error details.
const outputStderrLimit = 2 << 10

// Runner runs short helper commands through the broker. Its Output method is
// the interface pkg/identity and capability probes depend on, so tests can
// substitute a fake.
type Runner struct{}

// Default is the Runner flameox uses.
var Default Runner

// Output runs argv with the exact environment env in dir and returns its
// stdout. It fails with PROCESS_FAILED (first 2 KiB of stderr in the
// "stderr" detail) when the command exits non-zero or is killed by a signal,
// with ARTIFACT_TOO_LARGE (and the first limit bytes) when stdout exceeds
// limit (limit <= 0: 16 MiB), so a caller hashing the output never hashes a
// silently cut copy, and with Run's errors otherwise.
func (Runner) Output(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error) {
	res, err := Run(ctx, Spec{Argv: argv, Dir: dir, Env: env, StdoutLimit: limit,
		StderrLimit: outputStderrLimit, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		how := "exited with status " + strconv.Itoa(res.ExitCode)
		if res.Signal != "" {
			how = "was killed by " + res.Signal
		}
		return res.Stdout.Data, fault.New(fault.ProcessFailed, "%s %s", res.Path, how).
			With("path", res.Path).With("exit_code", strconv.Itoa(res.ExitCode)).
			With("signal", res.Signal).With("stderr", string(res.Stderr.Data))
	}
	if res.Stdout.Truncated {
		return res.Stdout.Data, fault.New(fault.ArtifactTooLarge, "%s wrote %d bytes to stdout, more than the %d allowed",
			res.Path, res.Stdout.Total, len(res.Stdout.Data)).With("path", res.Path)
	}
	return res.Stdout.Data, nil
}

// Output is Default.Output.
func Output(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error) {
	return Default.Output(ctx, argv, dir, env, limit, timeout)
}

// capture drains one pipe from the child, keeping at most limit bytes,
// with the secrets of red (if any) replaced before anything is kept.
type capture struct {
	f       *os.File
	w       io.Writer
	limit   int64
	red     *redactor
	scratch []byte
	buf     bytes.Buffer
	total   int64
	kept    int64
	cut     bool
	werr    error
	done    chan struct{}
}

func startCapture(f *os.File, w io.Writer, limit int64, red *redactor) *capture {
	c := &capture{f: f, w: w, limit: limit, red: red, done: make(chan struct{})}
	go c.run()
	return c
}

// run reads until EOF (every writer in the tree has exited) or until the
// pipe is closed under it. It never stops reading early: a child writing
// past its budget must not block on a full pipe.
func (c *capture) run() {
	defer close(c.done)
	defer c.f.Close()
	b := make([]byte, 64<<10)
	for {
		n, err := c.f.Read(b)
		if n > 0 {
			c.keep(b[:n])
		}
		if err != nil {
			break
		}
	}
	if c.red != nil {
		c.emit(c.red.flush(c.scratch[:0]))
	}
}

// keep takes bytes read from the child.
func (c *capture) keep(p []byte) {
	c.total += int64(len(p))
	if c.red != nil {
		if c.kept >= c.limit {
			c.cut = true
			return
		}
		p = c.red.push(p, c.scratch[:0])
		c.scratch = p[:0]
	}
	c.emit(p)
}

// emit keeps p within the budget.
func (c *capture) emit(p []byte) {
	room := c.limit - c.kept
	if int64(len(p)) > room {
		c.cut = true
		p = p[:max(room, 0)]
	}
	if len(p) == 0 {
		return
	}
	c.kept += int64(len(p))
	if c.w == nil {
		c.buf.Write(p)
	} else if c.werr == nil {
		_, c.werr = c.w.Write(p)
	}
}

// stream reports the capture; call it after done is closed.
func (c *capture) stream() Stream {
	s := Stream{Total: c.total, Truncated: c.cut, WriteErr: c.werr}
	if c.red != nil {
		for _, n := range c.red.hits {
			s.Redactions += n
		}
	}
	if c.w == nil {
		s.Data = c.buf.Bytes()
	}
	return s
}

// openStdin returns the file the child gets as stdin, whether Run owns it
// (and closes it after the fork), and a function that stops feeding it. Nil
// means /dev/null; an *os.File is passed as is (the caller keeps it, and like
// os/exec the broker puts it in blocking mode); any other reader is copied
// through a pipe by a goroutine that ends when the reader is exhausted or the
// child's end is closed (a reader that blocks forever keeps that goroutine).
func openStdin(r io.Reader) (child *os.File, owned bool, stop func(), err error) {
	switch r := r.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		return f, true, func() {}, err
	case *os.File:
		return r, false, func() {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, false, nil, err
	}
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, true, func() { pw.Close() }, nil
}
