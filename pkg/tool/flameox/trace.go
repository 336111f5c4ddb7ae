package flameox

// traceCommands are trace window.
func traceCommands() []*Command { return nil }
