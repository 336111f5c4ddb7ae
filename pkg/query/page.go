package query

// Page is the envelope every paged result carries, CLI and MCP alike: how
// many rows match, how many came back, whether more remain and the cursor
// that fetches them. Embedded, its fields stay at the top level of the JSON
// and of the MCP output schema.
type Page struct {
	Total     int64  `json:"total"`
	Returned  int    `json:"returned"`
	Truncated bool   `json:"truncated"`
	Cursor    string `json:"cursor,omitempty"`
}
