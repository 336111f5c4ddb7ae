// Package cursor makes and checks the opaque page tokens of list queries:
// a Cursor is the sort key of a page's last row, bound to the query and its
// version, the filters (FiltersDigest), the order and the commit the page
// was read from, so a token only continues the exact listing that produced
// it (STALE_CURSOR otherwise).
//
// It does not touch DuckDB: the catalog reads the rows, and the query and
// analysis layers turn their last keys into tokens with Encode and check
// incoming ones with Decode.
package cursor
