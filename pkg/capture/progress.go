package capture

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/cli"
)

// maxProgressLine bounds a stdout line handed to the adapter's liner;
// longer lines are skipped (they are still stored whole).
const maxProgressLine = 64 << 10

// lineTee writes the workload's stdout to w and hands each complete line
// to liner, then what liner makes of it to show. Showing happens on its
// own goroutine through a bounded queue that drops lines when full, so a
// stalled terminal never slows the broker draining the workload's pipe.
type lineTee struct {
	w       io.Writer
	liner   func([]byte) string
	buf     []byte
	skip    bool // inside a line longer than maxProgressLine
	lines   chan string
	done    chan struct{}
	closing sync.Once
}

func newLineTee(w io.Writer, liner func([]byte) string, show func(string)) *lineTee {
	t := &lineTee{w: w, liner: liner, lines: make(chan string, 256), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		for l := range t.lines {
			show(l)
		}
	}()
	return t
}

// Write stores p first; the progress lines are a side show.
func (t *lineTee) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if !t.skip {
				t.buf = append(t.buf, rest...)
				if len(t.buf) > maxProgressLine {
					t.buf, t.skip = t.buf[:0], true
				}
			}
			break
		}
		if !t.skip {
			t.buf = append(t.buf, rest[:i]...)
			if len(t.buf) <= maxProgressLine {
				t.line(bytes.TrimSuffix(t.buf, []byte("\r")))
			}
		}
		t.buf, t.skip = t.buf[:0], false
		rest = rest[i+1:]
	}
	return n, err
}

func (t *lineTee) line(b []byte) {
	s := t.liner(b)
	if s == "" {
		return
	}
	select {
	case t.lines <- s:
	default: // the person misses a line; the evidence does not
	}
}

// Close shows what is left of an unterminated last line and waits until
// every queued line was shown.
func (t *lineTee) Close() error {
	t.closing.Do(func() {
		if len(t.buf) > 0 && !t.skip {
			t.line(t.buf)
		}
		close(t.lines)
		<-t.done
	})
	return nil
}

// Printer shows a capture's progress to a person at a terminal: one status
// line — step, phase, message and the time elapsed since the capture
// began — redrawn in place, with the adapter's lines (gotest's benchmark
// results) printed above it as they come. Use Progress as
// Service.Progress and Line as Service.Output; Start redraws the status
// line every interval so a long phase still shows time passing; Close
// stops that and ends the status line. Everything untrusted is escaped
// (cli.Safe).
type Printer struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	began   time.Time
	cur     *Progress
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
}

// NewPrinter prints to w (a terminal); now is the clock (time.Now).
func NewPrinter(w io.Writer, now func() time.Time) *Printer {
	if now == nil {
		now = time.Now
	}
	return &Printer{w: w, now: now, began: now()}
}

// Progress shows a new phase; "completed" ends the status line.
func (p *Printer) Progress(pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.cur = &pr
	p.draw()
	if pr.Phase == "completed" {
		fmt.Fprintln(p.w)
		p.cur = nil
	}
}

// Line prints one of the adapter's lines above the status line.
func (p *Printer) Line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s\n", cli.Safe(s))
	p.draw()
}

// Tick redraws the status line with the current elapsed time.
func (p *Printer) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.draw()
	}
}

// Start redraws the status line every interval until Close.
func (p *Printer) Start(every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil || p.closed {
		return
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.Tick()
			}
		}
	}()
}

// Close stops redrawing and leaves the last status line in place.
func (p *Printer) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.cur != nil {
		fmt.Fprintln(p.w)
		p.cur = nil
	}
	stop, stopped := p.stop, p.stopped
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// draw writes the status line; the caller holds mu.
func (p *Printer) draw() {
	if p.cur == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s: %s (%s)", p.cur.Step, p.cur.Total, p.cur.Phase, cli.Safe(p.cur.Message), Elapsed(p.now().Sub(p.began)))
}

// Elapsed formats a duration for a person: 7s, 1m05s, 2h03m.
func Elapsed(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", max(s, 0))
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
}

// ShowProgress makes s report its progress to a person on w (a terminal):
// a Printer as s.Progress and s.Output, redrawn every second. The
// returned function stops it; call it once the capture has finished.
func (s *Service) ShowProgress(w io.Writer, now func() time.Time) (stop func()) {
	p := NewPrinter(w, now)
	s.Progress, s.Output = p.Progress, p.Line
	p.Start(time.Second)
	return p.Close
}
