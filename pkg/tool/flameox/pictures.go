package flameox

// pictureCommands are render comparison, render scaling and report.
func pictureCommands() []*Command { return nil }
