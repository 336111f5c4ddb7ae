package foxgc

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
)

// TestRetentionRecords runs fox-gc's retention verbs on a real workspace:
// one record each, of the documented kind, and usage errors for bad input.
func TestRetentionRecords(t *testing.T) {
	src := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(src, []byte("evidence\n"), 0o644)
	ws, _ := capturetest.Published(t, "collector_metadata", src)
	stg := filepath.Join(ws.Root, "staging", "import-00000000deadbeef")
	os.MkdirAll(stg, 0o700)
	os.WriteFile(filepath.Join(stg, "payload"), []byte("left behind"), 0o600)

	run := func(args ...string) (map[string]any, error) {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: ws.ProjectRoot, Now: time.Now,
			Getenv: func(string) string { return "" }}
		err := Run(context.Background(), env, args)
		if err != nil {
			return nil, err
		}
		if bytes.Count(out.Bytes(), []byte("\n")) != 1 {
			t.Fatalf("%v: not one record: %s", args, out.String())
		}
		var rec map[string]any
		if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		return rec, nil
	}
	var trash string
	tests := []struct {
		args    []string
		kind    string
		code    fault.Code
		check   func(t *testing.T, res map[string]any)
		capture bool
	}{
		{args: []string{"gc"}, kind: "gc_plan", check: func(t *testing.T, r map[string]any) {
			if len(r["items"].([]any)) != 0 {
				t.Errorf("the default minimum age listed %v", r["items"])
			}
		}},
		{args: []string{"gc", "--min-age", "0s"}, kind: "gc_plan", check: func(t *testing.T, r map[string]any) {
			if r["total_bytes"].(float64) != float64(len("left behind")) {
				t.Errorf("plan %v", r)
			}
		}},
		{args: []string{"gc", "--apply", "--min-age", "0s"}, kind: "gc_applied", capture: true},
		{args: []string{"gc", "list"}, kind: "gc_trash"},
		{args: []string{"restore", "<trash>"}, kind: "gc_restored"},
		{args: []string{"purge", "--older-than", "0s"}, kind: "gc_purged"},
		{args: []string{"quarantine", "list"}, kind: "quarantine_list"},
		{args: []string{"gc", "--min-age", "soon"}, code: fault.InvalidArguments},
		{args: []string{"gc", "--plan", "sha256:00"}, code: fault.InvalidArguments},
		{args: []string{"restore"}, code: fault.InvalidArguments},
		{args: []string{"restore", "../x"}, code: fault.InvalidArguments},
		{args: []string{"quarantine", "show", "../../etc"}, code: fault.InvalidArguments},
		{args: []string{"quarantine", "drop"}, code: fault.InvalidArguments},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{}, tt.args...)
			for i, a := range args {
				if a == "<trash>" {
					args[i] = trash
				}
			}
			rec, err := run(args...)
			if tt.code != "" {
				if fault.As(err).Code != tt.code {
					t.Fatalf("want %s, got %v", tt.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec["record"] != tt.kind || rec["schema_version"].(float64) != 1 {
				t.Fatalf("record %v", rec)
			}
			res := rec["result"].(map[string]any)
			if tt.capture {
				trash, _ = res["trash_id"].(string)
				if trash == "" {
					t.Fatalf("no trash id: %v", res)
				}
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}
