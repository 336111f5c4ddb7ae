package flameox

// historyCommands are fleet query and history.
func historyCommands() []*Command { return nil }
