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
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
)

// TestValidateAndRepairRecords: fox-gc validate writes one
// integrity_result record and exits 5 when the workspace is damaged;
// repair writes a repair_plan, and --apply with its digest a
// repair_result, after which validation passes.
func TestValidateAndRepairRecords(t *testing.T) {
	ws, _ := capturetest.Published(t, "", "../../integrity/testdata/google-pprof__sample.cpu.pb.gz")
	run := func(args ...string) (map[string]any, int) {
		t.Helper()
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: ws.ProjectRoot, Now: time.Now,
			Getenv: func(string) string { return "" }, Name: "fox-gc"}
		code := cli.Report(env, Run(context.Background(), env, args))
		var rec map[string]any
		if bytes.Count(out.Bytes(), []byte("\n")) != 1 || json.Unmarshal(out.Bytes(), &rec) != nil {
			t.Fatalf("%v: not one record: %s (stderr %s)", args, out.String(), errb.String())
		}
		return rec, code
	}
	result := func(rec map[string]any) map[string]any { r, _ := rec["result"].(map[string]any); return r }

	rec, code := run("validate", "--level", "full")
	if code != 0 || rec["record"] != "integrity_result" || result(rec)["valid"] != true {
		t.Fatalf("intact: exit %d %v", code, rec)
	}
	// Remove a Parquet file of HEAD.
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	f := snap.Generations[0].Files[0]
	if err := os.Remove(filepath.Join(ws.Root, filepath.FromSlash(f.Path))); err != nil {
		t.Fatal(err)
	}
	rec, code = run("validate", "--level", "quick")
	if code != fault.ExitIntegrity || result(rec)["valid"] != false {
		t.Fatalf("damaged: exit %d %v", code, rec)
	}
	rec, code = run("repair")
	plan := result(rec)
	digest, _ := plan["plan_digest"].(string)
	if code != 0 || rec["record"] != "repair_plan" || digest == "" {
		t.Fatalf("repair: exit %d %v", code, rec)
	}
	rec, code = run("repair", "--apply", digest)
	if code != 0 || rec["record"] != "repair_result" {
		t.Fatalf("repair --apply: exit %d %v", code, rec)
	}
	if rec, code = run("validate", "--level", "full"); code != 0 || result(rec)["valid"] != true {
		t.Fatalf("after repair: exit %d %v", code, rec)
	}
	if _, code = run("validate", "--level", "deep"); code != fault.ExitUsage {
		t.Fatalf("--level deep: exit %d", code)
	}
}
