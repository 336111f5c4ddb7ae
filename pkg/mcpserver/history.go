package mcpserver

// addHistoryTools registers the fleet query and history tools (issue 23).
func (s *server) addHistoryTools() {}
