package cli

import (
	"fmt"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// ColorMode is the --color setting: auto colours a stream only when it is
// a terminal and neither NO_COLOR (https://no-color.org) nor TERM=dumb
// says otherwise; always and never decide alone, over NO_COLOR too, as a
// command-line flag should.
type ColorMode int

const (
	ColorAuto ColorMode = iota
	ColorAlways
	ColorNever
)

// ParseColor reads a --color value: auto, always or never.
func ParseColor(s string) (ColorMode, error) {
	switch s {
	case "auto", "":
		return ColorAuto, nil
	case "always":
		return ColorAlways, nil
	case "never":
		return ColorNever, nil
	}
	return ColorAuto, fault.New(fault.InvalidArguments, "--color is auto, always or never, not %q", s).
		Fix("--color=never (or NO_COLOR=1) turns colour off; auto colours only a terminal.")
}

// ColorStdout reports whether text written to env.Stdout may carry colour.
func (e *Env) ColorStdout() bool { return e.color(e.StdoutTerminal) }

// ColorStderr reports whether text written to env.Stderr may carry colour.
func (e *Env) ColorStderr() bool { return e.color(e.StderrTerminal) }

func (e *Env) color(terminal bool) bool {
	switch e.Color {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	return terminal && !e.dumb() && e.getenv("NO_COLOR") == ""
}

// dumb reports whether the terminal cannot move the cursor or colour
// (TERM=dumb: Emacs' shell buffers, some CI log viewers).
func (e *Env) dumb() bool { return e.getenv("TERM") == "dumb" }

func (e *Env) getenv(key string) string {
	if e == nil || e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// ShowProgress reports whether a progress line or bar may be drawn: on a
// terminal stderr that can redraw a line, for human output (never with
// --json, whose stderr a program may read), and not under --quiet.
func (e *Env) ShowProgress() bool {
	return e != nil && e.StderrTerminal && !e.Quiet && e.Mode == Human && !e.dumb()
}

// Infof writes one informational line (what is being launched, which
// bytes a page holds) on stderr, unless --quiet. Errors and warnings that
// change what the result means are not information: write them always.
func (e *Env) Infof(format string, args ...any) {
	if e.Quiet {
		return
	}
	fmt.Fprintf(e.Stderr, format, args...)
	if !strings.HasSuffix(format, "\n") {
		fmt.Fprintln(e.Stderr)
	}
}

// Style is an SGR (Select Graphic Rendition) parameter list.
type Style string

const (
	Bold    Style = "1"
	Faint   Style = "2"
	Red     Style = "31"
	Green   Style = "32"
	Yellow  Style = "33"
	BoldRed Style = "1;31"
)

// Paint wraps s in style when on (ColorStdout or ColorStderr of the stream
// s goes to), and returns it unchanged otherwise or when it is empty. Paint
// what has already been made Safe and padded: the escapes take no cells,
// but widths are measured without them.
func Paint(on bool, style Style, s string) string {
	if !on || s == "" || style == "" {
		return s
	}
	return "\x1b[" + string(style) + "m" + s + "\x1b[0m"
}
