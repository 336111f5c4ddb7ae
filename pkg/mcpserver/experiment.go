package mcpserver

// addExperimentTools registers the experiment tools.
func (s *server) addExperimentTools() {}
