package flameox

// setupCommands are setup and mcp install|uninstall.
func setupCommands() []*Command { return nil }
