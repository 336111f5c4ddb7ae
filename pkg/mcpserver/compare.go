package mcpserver

// addCompareTools registers the comparison tools.
func (s *server) addCompareTools() {}
