package flameox

// diffCommands are the profile-diff commands (analyze diff).
func diffCommands() []*Command { return nil }
