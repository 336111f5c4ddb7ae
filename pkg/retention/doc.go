// Package retention bounds disk use without losing what evidence cites:
// it lists what no retention root reaches (gc's dry run), moves it to
// trash with a manifest, restores it, and purges trash for good.
package retention
