package mcpserver

// addFleetTools registers the fleet tools (issue 23).
func (s *server) addFleetTools() {}
