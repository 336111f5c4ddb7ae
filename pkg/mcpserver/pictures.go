package mcpserver

// addPictureTools registers the picture tools (issue 22).
func (s *server) addPictureTools() {}
