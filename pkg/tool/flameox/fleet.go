package flameox

// fleetCommands are export corpus.
func fleetCommands() []*Command { return nil }
