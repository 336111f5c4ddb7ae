// Package setup writes flameox's MCP server entry into the configuration
// files of the agent hosts people use (Claude Code, Cursor, Codex, Gemini
// CLI, OpenCode, Antigravity, VS Code), in each host's own format and
// scope, changing nothing else in the file, and keeps a journal so every
// change can be rolled back byte for byte.
package setup
