package mcpserver

// addFailuresTools registers analyze_failures.
func (s *server) addFailuresTools() {}
