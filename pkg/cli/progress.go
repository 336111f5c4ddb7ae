package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressLine bounds a progress line, so that it never wraps on a
// standard terminal (a wrapped line cannot be redrawn in place).
const progressLine = 79

// barCells is the width of a progress bar, between its brackets.
const barCells = 24

// redraw is how often a running Progress redraws its elapsed time.
const redraw = 250 * time.Millisecond

// Progress is a one-line status on a terminal's stderr for a long step
// (an import, a catalog rebuild): what is happening, a bar when how much
// is left is known, and the time elapsed, redrawn in place and erased by
// Stop. Env.StartProgress returns nil where progress may not be shown
// (Env.ShowProgress), and every method of a nil *Progress does nothing, so
// a caller never tests for a terminal itself.
type Progress struct {
	w     io.Writer
	now   func() time.Time
	began time.Time

	mu          sync.Mutex
	label       string
	done, total int64
	stopped     bool
	stop        chan struct{}
	wg          sync.WaitGroup
}

// StartProgress starts a status line labelled label; total is how many
// units (files, bytes) the step has, 0 when that is unknown (the line then
// shows only the time elapsed).
func (e *Env) StartProgress(label string, total int64) *Progress {
	if !e.ShowProgress() {
		return nil
	}
	now := e.Now
	if now == nil {
		now = time.Now
	}
	p := &Progress{w: e.Stderr, now: now, began: now(), label: label, total: total, stop: make(chan struct{})}
	p.draw()
	p.wg.Add(1)
	go p.tick()
	return p
}

func (p *Progress) tick() {
	defer p.wg.Done()
	t := time.NewTicker(redraw)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw()
		}
	}
}

// Update sets the label (kept when empty) and the units done of total.
func (p *Progress) Update(label string, done, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if label != "" {
		p.label = label
	}
	p.done, p.total = done, total
	p.mu.Unlock()
	p.draw()
}

// Stop erases the line; it may be called more than once.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	close(p.stop)
	p.mu.Unlock()
	p.wg.Wait()
	fmt.Fprint(p.w, "\r\x1b[K")
}

func (p *Progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K"+ProgressText(p.label, p.done, p.total, p.now().Sub(p.began)))
}

// ProgressText is the text of a progress line: the label, cut to fit, a
// bar with the count when total is known, and the time elapsed.
func ProgressText(label string, done, total int64, elapsed time.Duration) string {
	right := " " + elapsedText(elapsed)
	if total > 0 {
		done = min(max(done, 0), total)
		fill := int(int64(barCells) * done / total)
		right = fmt.Sprintf(" [%s%s] %d/%d", strings.Repeat("#", fill), strings.Repeat("-", barCells-fill), done, total) + right
	}
	return Cut(label, progressLine-StringWidth(right)) + right
}

func elapsedText(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}
