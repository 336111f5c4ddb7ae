package flameox

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/capture"
)

// failTOML prints 300 lines on stdout (each with a two-byte character and
// an escape byte), a secret-free complaint on stderr, and fails.
const failTOML = `schema_version = 1
[workloads.fail]
argv = ["/bin/sh", "-c", "i=0; while [ $i -lt 300 ]; do printf 'line %03d é \\033[31m\\n' $i; i=$((i+1)); done; echo 'cannot open config: no such file' >&2; exit 3"]
timeout_seconds = 30
`

// TestFailedCaptureTailsAndOutput: a failed capture's result carries the
// class and escaped, bounded tails; its text shows them and how to read
// the rest; runs output pages the stored stream on character boundaries.
func TestFailedCaptureTailsAndOutput(t *testing.T) {
	dir := captureProject(t, failTOML, "fail")
	r := flameox(t, dir, "capture", "run", "process", "--workload", "fail", "--json")
	if r.exit == 0 {
		t.Fatalf("a failing workload's capture exited 0")
	}
	res := runOf(t, r.stdout)
	f := res.Failure
	if f == nil || f.Class != "process_failed" || f.Stderr == nil || f.Stdout == nil {
		t.Fatalf("failure %+v", f)
	}
	if !strings.Contains(f.Stderr.Text, "cannot open config") || f.Stderr.Truncated {
		t.Errorf("stderr tail %+v", f.Stderr)
	}
	if !f.Stdout.Truncated || f.Stdout.Bytes <= 4096 || len(f.Stdout.Text) > 4096*2 ||
		!strings.HasPrefix(f.Stdout.Text, "line ") || !strings.HasSuffix(f.Stdout.Text, "line 299 é \\x1b[31m\n") || strings.Contains(f.Stdout.Text, "\x1b") {
		t.Errorf("stdout tail is not the escaped end of the stream cut at a line: %+v", f.Stdout)
	}
	text := flameox(t, dir, "capture", "run", "process", "--workload", "fail").stdout
	for _, want := range []string{"failure      process_failed: the workload failed with exit status 3", "  | cannot open config: no such file",
		"output       flameox runs output "} {
		if !strings.Contains(text, want) {
			t.Errorf("capture run text lacks %q:\n%s", want, text)
		}
	}

	// Page the whole stdout 1000 bytes at a time: the pages join into the
	// stored stream, and none splits the two-byte é.
	var joined strings.Builder
	off, pages := int64(0), 0
	for {
		out := mustOK(t, flameox(t, dir, "runs", "output", res.Run.RunID, "--offset", strconv.FormatInt(off, 10), "--max-bytes", "1001", "--json")).stdout
		var p capture.OutputPage
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err, out)
		}
		if p.Total != f.Stdout.Bytes || p.Offset != off || p.NextOffset-p.Offset > 1001 || strings.Contains(p.Text, `\ufffd`) {
			t.Fatalf("page %+v", p)
		}
		joined.WriteString(p.Text)
		off, pages = p.NextOffset, pages+1
		if !p.Truncated {
			break
		}
	}
	if pages < 5 || strings.Count(joined.String(), "é") != 300 || !strings.HasPrefix(joined.String(), "line 000 é \\x1b[31m\n") {
		t.Fatalf("%d pages joined into %q", pages, joined.String()[:min(200, joined.Len())])
	}
	errOut := mustOK(t, flameox(t, dir, "runs", "output", res.Run.RunID, "--stream", "stderr"))
	if errOut.stdout != "cannot open config: no such file\n" {
		t.Errorf("runs output --stream stderr: %q", errOut.stdout)
	}
	if r := flameox(t, dir, "runs", "output", res.Run.RunID, "--offset", "999999"); r.exit != 2 {
		t.Errorf("an offset past the end: exit %d %s", r.exit, r.stderr)
	}
}
