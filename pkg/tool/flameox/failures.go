package flameox

// failuresCommands are analyze failures.
func failuresCommands() []*Command { return nil }
