package mcpserver

// addTraceTools registers get_trace_window.
func (s *server) addTraceTools() {}
