package flameox

// scalingCommands are analyze scaling.
func scalingCommands() []*Command { return nil }
