package flameox

// inquiryCommands are the investigations, hypotheses and run-sets groups.
func inquiryCommands() []*Command { return nil }
