package mcpserver

// addIntegrityTools registers the read-only validation tool
// (pkg/integrity); repair, gc and purge stay CLI-only (SPEC §8).
func (s *server) addIntegrityTools() {}
