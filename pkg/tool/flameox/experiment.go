package flameox

// experimentCommands are the experiment group.
func experimentCommands() []*Command { return nil }
