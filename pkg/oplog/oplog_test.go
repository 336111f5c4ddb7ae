package oplog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func TestRecord(t *testing.T) {
	many := make([]string, 500)
	for i := range many {
		many[i] = "sha256:" + strings.Repeat(strconv.Itoa(i%10), 64)
	}
	tests := []struct {
		name      string
		op        string
		ids       map[string][]string
		err       error
		wantRes   string
		wantCode  string
		wantIDs   int
		wantDrops bool
		secret    string
	}{
		{name: "ok", op: "publish.commit", ids: map[string][]string{"commit_id": {"sha256:" + strings.Repeat("a", 64)}}, wantRes: "ok", wantIDs: 1},
		{name: "error code only", op: "gc.apply", err: fault.New(fault.WriteLockTimeout, "token=hunter2 waited"), wantRes: "error", wantCode: "WRITE_LOCK_TIMEOUT", secret: "hunter2"},
		{name: "plain error", op: "gc.apply", err: errors.New("password=hunter2"), wantRes: "error", wantCode: "INTERNAL_ERROR", secret: "hunter2"},
		{name: "free text is not an id", op: "gc.restore", ids: map[string][]string{"trash_id": {"--token hunter2"}}, wantRes: "ok", wantIDs: 1, secret: "hunter2"},
		{name: "bounded", op: "gc.apply", ids: map[string][]string{"paths": many}, wantRes: "ok", wantDrops: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := Record(root, tt.op, tt.ids, tt.err); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(Path(root))
			if len(raw) > MaxLine || bytes.Count(raw, []byte("\n")) != 1 {
				t.Fatalf("line of %d bytes, %d newlines", len(raw), bytes.Count(raw, []byte("\n")))
			}
			if tt.secret != "" && bytes.Contains(raw, []byte(tt.secret)) {
				t.Fatalf("the log holds %q: %s", tt.secret, raw)
			}
			es, err := Read(root)
			if err != nil || len(es) != 1 {
				t.Fatalf("read: %v %v", es, err)
			}
			e := es[0]
			if e.Result != tt.wantRes || e.ErrorCode != tt.wantCode || e.Operation != tt.op || e.Binary == "" || e.Version == "" || e.PID != os.Getpid() {
				t.Fatalf("entry %+v", e)
			}
			n := 0
			for _, v := range e.IDs {
				n += len(v)
			}
			if tt.wantIDs > 0 && n != tt.wantIDs {
				t.Fatalf("ids %v", e.IDs)
			}
			if tt.wantDrops != (e.Dropped > 0) || (tt.wantDrops && n+e.Dropped != len(many)) {
				t.Fatalf("dropped %d of %d", e.Dropped, n)
			}
		})
	}
}

// TestConcurrentAppends checks that lines from concurrent writers never
// interleave: every line parses.
func TestConcurrentAppends(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				Record(root, "publish.commit", map[string][]string{"generation_id": {strconv.Itoa(i) + "-" + strconv.Itoa(j)}}, nil)
			}
		}()
	}
	wg.Wait()
	es, err := Read(root)
	if err != nil || len(es) != 400 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
}

func TestRefusesSymlink(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, nil, 0o600)
	os.Symlink(target, Path(root))
	if err := Record(root, "gc.apply", nil, nil); err == nil {
		t.Fatal("appended through a symlink")
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Fatal("wrote outside the workspace")
	}
}

func TestBadOperation(t *testing.T) {
	if _, err := Encode(Entry{Operation: "rm -rf /"}); err == nil {
		t.Fatal("accepted free text as an operation")
	}
}

// FuzzEncode: whatever ids a caller passes, a line is one line of at most
// MaxLine bytes, valid JSON, and text that is not an id never reaches it.
func FuzzEncode(f *testing.F) {
	f.Add("commit_id", "sha256:abc", 1)
	f.Add("trash_id", "--token hunter2", 3)
	f.Add("k\n", "a\"b", 400)
	f.Fuzz(func(t *testing.T, key, val string, n int) {
		n = max(0, min(n, 2000))
		vals := make([]string, n)
		for i := range vals {
			vals[i] = val
		}
		line, err := Encode(Entry{Operation: "gc.apply", IDs: map[string][]string{key: vals}, Result: "ok"})
		if err != nil {
			return
		}
		if len(line) > MaxLine || bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("line of %d bytes: %q", len(line), line)
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		for k, vs := range e.IDs {
			if !idPattern().MatchString(k) {
				t.Fatalf("key %q logged", k)
			}
			for _, v := range vs {
				if v != "(not an id)" && (!idPattern().MatchString(v) || strings.Contains(v, "..")) {
					t.Fatalf("value %q logged", v)
				}
			}
		}
	})
}

// TestManyIDs: a publication of many runs logs one bounded line, saying
// how many ids it left out, without encoding the line once per id.
func TestManyIDs(t *testing.T) {
	ids := make([]string, 200000)
	for i := range ids {
		ids[i] = "0b1e3c6e-9a3e-4f2e-8f7c-" + strconv.Itoa(100000000000+i)
	}
	line, err := Encode(Entry{Operation: "publish.commit", IDs: map[string][]string{"run_id": ids, "commit_id": {"sha256:00"}}})
	if err != nil {
		t.Fatal(err)
	}
	var e Entry
	json.Unmarshal(line, &e)
	if len(line) > MaxLine || len(e.IDs["commit_id"]) != 1 || len(e.IDs["run_id"])+e.Dropped != len(ids) || len(e.IDs["run_id"]) < 50 {
		t.Fatalf("%d bytes, %d run ids kept, %d dropped", len(line), len(e.IDs["run_id"]), e.Dropped)
	}
}
