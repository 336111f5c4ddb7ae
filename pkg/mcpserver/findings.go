package mcpserver

// addFindingsTools registers the findings tools.
func (s *server) addFindingsTools() {}
