package flameox

// compareCommands are the compare group.
func compareCommands() []*Command { return nil }
