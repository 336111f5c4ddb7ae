package cli

// Width is how many terminal cells text output may use per line: the
// terminal's width when stdout is one (TerminalWidth, read once when the
// Env is built), else NameWidth, so that output in a pipe, a file or a
// golden test does not depend on the terminal it was made in.
func (e *Env) Width() int {
	if e != nil && e.StdoutColumns > 0 {
		return e.StdoutColumns
	}
	return NameWidth
}
