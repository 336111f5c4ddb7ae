// Package cli is the seam between a process and flameox's tools: it builds an
// Env from the operating system, runs one tool function, and turns whatever
// error comes back into exactly one message and exit status.
//
// Every binary's main is one call:
//
//	func main() { os.Exit(cli.Main("fox-capture", capturetool.Run)) }
//
// Below main nothing reads os.Args, os.Stdout or the process environment
// directly; tools get them from Env, so tests can run them in-process.
package cli
