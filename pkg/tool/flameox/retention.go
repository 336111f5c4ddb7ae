package flameox

// retentionCommands are gc, gc restore, gc purge and quarantine
// (pkg/retention).
func retentionCommands() []*Command { return nil }
