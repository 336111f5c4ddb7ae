package mcpserver

// addInquiryTools registers the investigation, hypothesis and run-set tools.
func (s *server) addInquiryTools() {}
