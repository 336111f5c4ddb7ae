// Package securitytest holds the security suite (issue 21): tests that run
// the real commands, as a user does, in hostile conditions — no network,
// traversing ids and symlinks, a read-only workspace, a full disk, terminal
// escapes and prompt-injection text in artifacts — and assert that each
// fails with a clear structured error or shows the text escaped, and that
// nothing outside the workspace is read or written. The test binary acts as
// each tool (TestMain), so every command is a real child process.
// docs/safety.md ("Security suite") describes what each test proves.
package securitytest
