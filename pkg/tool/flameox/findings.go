package flameox

// findingsCommands are findings record, show and list.
func findingsCommands() []*Command { return nil }
