package mcpserver

// addScalingTools registers analyze_scaling.
func (s *server) addScalingTools() {}
