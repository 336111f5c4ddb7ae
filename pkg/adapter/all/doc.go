// Package all builds the registry of every built-in adapter with plain
// function calls (no init() registration), in a fixed order.
package all
