package flameox

// integrityCommands are validate and repair (pkg/integrity).
func integrityCommands() []*Command { return nil }
