package mcpserver

// addComparisonRecordTools registers record_comparison.
func (s *server) addComparisonRecordTools() {}
