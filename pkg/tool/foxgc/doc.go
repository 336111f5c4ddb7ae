// Package foxgc is fox-gc, the plumbing of integrity and retention:
// validate and repair (validate.go, pkg/integrity), gc, restore, purge and
// quarantine (gc.go, pkg/retention). Each verb writes one record on
// stdout.
package foxgc
