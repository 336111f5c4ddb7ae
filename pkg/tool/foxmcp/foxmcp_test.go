package foxmcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/mcpserver"
)

func testEnv(dir string, stdin io.Reader, stdout, stderr io.Writer) *cli.Env {
	return &cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv, Environ: os.Environ,
		Dir: dir, Now: time.Now, Name: "fox-mcp"}
}

func TestInspect(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), testEnv(t.TempDir(), nil, &out, io.Discard), []string{"inspect", "--json"}); err != nil {
		t.Fatal(err)
	}
	var in mcpserver.Inspection
	if err := json.Unmarshal(out.Bytes(), &in); err != nil || len(in.Tools) != len(mcpserver.Tools()) || len(in.ResourceTemplates) != 7 {
		t.Fatalf("inspect --json: %v, %d tools\n%.500s", err, len(in.Tools), out.String())
	}
	out.Reset()
	if err := Run(context.Background(), testEnv(t.TempDir(), nil, &out, io.Discard), []string{"inspect"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"execute_capture_plan", "destructive,open-world", "flameox://runs/{run_id}", "plan_token"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect output lacks %q", want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"bogus"}, {"serve", "extra"}, {"serve", "--nope"}} {
		err := Run(context.Background(), testEnv(t.TempDir(), strings.NewReader(""), io.Discard, io.Discard), args)
		if !fault.Is(err, fault.InvalidArguments) {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestServe: --init creates the workspace; stdout carries only JSON-RPC;
// the server ends cleanly when stdin does.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testEnv(t.TempDir(), inR, outW, &stderr), []string{"serve", "--project-root", dir, "--init"})
		outW.Close()
	}()
	go func() {
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"workspace_status","arguments":{}}}`)
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var status map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout carried %q", sc.Text())
		}
		if m["id"] == 2.0 {
			status = m
			inW.Close()
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	res, _ := status["result"].(map[string]any)
	env, _ := res["structuredContent"].(map[string]any)
	if env["ok"] != true {
		t.Fatalf("workspace_status after --init: %v\nstderr: %s", status, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".diagnostics", "workspace.json")); err != nil {
		t.Fatal(err)
	}
}
