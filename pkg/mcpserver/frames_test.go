package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	initRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// wireSession starts a server process, writes lines to its stdin (from
// another goroutine: a line may be larger than a pipe holds), closes stdin
// once a reply carries the id closeAfter (or after the last line when
// closeAfter is nil), and returns every stdout line after the server has
// exited 0.
func wireSession(t *testing.T, dir string, lines []string, closeAfter any) []string {
	t.Helper()
	cmd := serverCmd(dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(stdin)
		for _, l := range lines {
			w.WriteString(l)
			w.WriteByte('\n')
		}
		err := w.Flush()
		if closeAfter == nil {
			stdin.Close()
		}
		written <- err
	}()
	var out []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			out = append(out, sc.Text())
			var m struct {
				ID any `json:"id"`
			}
			if closeAfter != nil && json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == closeAfter {
				<-written
				stdin.Close()
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("server did not end; its output:\n%s", strings.Join(out, "\n"))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v; its output:\n%s", err, strings.Join(out, "\n"))
	}
	return out
}

// wireMessage is one JSON-RPC message as the server wrote it.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code int `json:"code"`
	} `json:"error"`
	raw string
}

func decodeWire(t *testing.T, lines []string) []wireMessage {
	t.Helper()
	msgs := make([]wireMessage, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &msgs[i]); err != nil || msgs[i].JSONRPC != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC 2.0: %q", l)
		}
		msgs[i].raw = l
	}
	return msgs
}

// TestMalformedFrames: every malformed line gets one JSON-RPC error reply
// (-32700 or -32600, with the id it deserves), and the server goes on to
// answer the next request on the same session. Before the frame reader,
// each of these ended the server with exit 1 and no reply (the null id:
// no reply at all).
func TestMalformedFrames(t *testing.T) {
	dir := project(t)
	for _, tt := range []struct {
		name  string
		frame string
		code  int
		id    string // of the error reply, as JSON
	}{
		{"truncated object", `{`, -32700, "null"},
		{"not json", `not json`, -32700, "null"},
		{"null", `null`, -32600, "null"},
		{"empty array", `[]`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`, -32600, "null"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"NUL byte", "{\"jsonrpc\":\"2.0\",\"id\":7,\x00\"method\":\"ping\"}", -32700, "null"},
		{"100000-deep nesting", strings.Repeat("[", 100000), -32600, "null"},
		{"100 MB line", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("a", 100<<20) + `"}}`, -32600, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		// Valid, but the SDK's reply to it did not encode (-32002: the
		// session speaks 2025-06-18, see TestResourceNotFoundCode).
		{"resource URI with a NUL", `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"\u0000"}}`, -32002, "5"},
		{"bidi in an echoed id", `{"jsonrpc":"1.0","id":"a` + "\u202e\u009b" + `b","method":"ping"}`, -32600, `"a\u202e\u009bb"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lines := []string{initRequest, initialized, tt.frame, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}
			msgs := decodeWire(t, wireSession(t, dir, lines, 2.0))
			var errs []wireMessage
			answered := map[string]bool{}
			for _, m := range msgs {
				if strings.ContainsAny(m.raw, "\u202e\u009b") {
					t.Errorf("raw bidi or C1 character on the wire: %q", m.raw)
				}
				switch {
				case m.Error != nil:
					errs = append(errs, m)
				case m.Result != nil:
					answered[string(m.ID)] = true
				}
			}
			if len(errs) != 1 || errs[0].Error.Code != tt.code || string(errs[0].ID) != tt.id {
				t.Fatalf("want one error reply with code %d and id %s, got:\n%s", tt.code, tt.id, strings.Join(raws(msgs), "\n"))
			}
			if !answered["1"] || !answered["2"] || len(msgs) != 3 {
				t.Fatalf("want initialize, the error and tools/list answered, got:\n%s", strings.Join(raws(msgs), "\n"))
			}
		})
	}
}

func raws(msgs []wireMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.raw
		if len(out[i]) > 300 {
			out[i] = out[i][:300] + "…"
		}
	}
	return out
}

// TestRequestsBeforeEOFAnswered: stdin ends right after the requests; each
// one read is answered before the server exits, every time. (Before, the
// SDK stopped writing replies at end of input, and initialize followed by
// EOF was answered about one time in three.)
func TestRequestsBeforeEOFAnswered(t *testing.T) {
	dir := project(t)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_runs","arguments":{}}}`
	for _, tt := range []struct {
		name   string
		lines  []string
		ids    []string
		trials int
	}{
		{"initialize", []string{initRequest}, []string{"1"}, 30},
		{"initialize, list and call", []string{initRequest, initialized, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, call}, []string{"1", "2", "3"}, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for trial := range tt.trials {
				msgs := decodeWire(t, wireSession(t, dir, tt.lines, nil))
				var got []string
				for _, m := range msgs {
					if m.Result == nil {
						t.Fatalf("trial %d: not a result: %s", trial, m.raw)
					}
					got = append(got, string(m.ID))
				}
				if slices.Sort(got); !slices.Equal(got, tt.ids) {
					t.Fatalf("trial %d: answered ids %v, want %v", trial, got, tt.ids)
				}
			}
		})
	}
}
