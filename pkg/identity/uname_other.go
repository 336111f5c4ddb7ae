//go:build !linux

package identity

// kernelRelease is only implemented on Linux; elsewhere "kernel" is recorded
// as missing rather than guessed.
func kernelRelease() string { return "" }
