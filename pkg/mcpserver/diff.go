package mcpserver

// addDiffTools registers the profile-diff tools.
func (s *server) addDiffTools() {}
