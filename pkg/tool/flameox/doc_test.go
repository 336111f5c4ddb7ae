package flameox

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/interfaces.md and the testscript goldens")

// interfacesDoc renders the command table: every porcelain command, the
// MCP tool with the same capability, or why it is CLI-only.
func interfacesDoc() string {
	var b strings.Builder
	b.WriteString(`# Interfaces: CLI and MCP

Generated from ` + "`pkg/tool/flameox.Commands()`" + ` by ` + "`go test ./pkg/tool/flameox -run TestInterfacesDoc -update`" + `;
the test fails when this page is out of date. Every command's ` + "`--json`" + ` output is the
same Go type as the result of its MCP tool. Plumbing tools (` + "`fox-capture`, `fox-publish`,\n`fox-catalog`, `fox-analyze`" + `) speak the record stream of docs/records.md.

| command | MCP tool | what it does |
|---|---|---|
`)
	cmds := Commands()
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	for _, c := range cmds {
		tool := "`" + c.MCPTool + "`"
		if c.MCPTool == "" {
			tool = "CLI only: " + c.CLIOnly
		}
		name := strings.TrimSpace("flameox " + c.Name + " " + c.Args)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, tool, c.Summary)
	}
	return b.String()
}

func TestInterfacesDoc(t *testing.T) {
	path := "../../../docs/interfaces.md"
	want := interfacesDoc()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("docs/interfaces.md is out of date; run go test ./pkg/tool/flameox -run TestInterfacesDoc -update")
	}
}

func TestEveryCommandHasAnMCPToolOrAReason(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Commands() {
		if (c.MCPTool == "") == (c.CLIOnly == "") {
			t.Errorf("%s: name exactly one of MCPTool or CLIOnly", c.Name)
		}
		if c.MCPTool != "" && seen[c.MCPTool] {
			t.Errorf("MCP tool %s named twice", c.MCPTool)
		}
		seen[c.MCPTool] = true
	}
}
