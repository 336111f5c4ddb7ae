package flameox

// fleetCommands are export corpus, fleet query and history.
func fleetCommands() []*Command { return nil }
