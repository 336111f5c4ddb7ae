package fleet

// SetForceRewrite makes exports rewrite every file with DuckDB instead of
// copying whole ones, until the returned function restores it.
func SetForceRewrite(on bool) (restore func()) {
	old := forceRewrite
	forceRewrite = on
	return func() { forceRewrite = old }
}
