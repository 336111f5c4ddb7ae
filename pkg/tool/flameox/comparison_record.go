package flameox

// comparisonRecordCommands are analyze record-comparison.
func comparisonRecordCommands() []*Command { return nil }
