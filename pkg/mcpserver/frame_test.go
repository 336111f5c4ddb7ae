package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// reply is a decoded error reply of the frame reader.
type reply struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeReply(t *testing.T, b []byte) reply {
	t.Helper()
	var r reply
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &r); err != nil || json.Unmarshal(b, &keys) != nil || r.JSONRPC != "2.0" {
		t.Fatalf("error reply is not JSON-RPC 2.0: %q (%v)", b, err)
	}
	if _, ok := keys["id"]; !ok || len(keys) != 3 || r.Error.Message == "" {
		t.Fatalf("error reply lacks id, error or message: %q", b)
	}
	return r
}

// TestClassify: each line is passed on or answered with the JSON-RPC
// error code and id it deserves.
func TestClassify(t *testing.T) {
	const pass = 0
	for _, tt := range []struct {
		name string
		line string
		code int
		id   any // of the error reply
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, pass, nil},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, pass, nil},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass, nil},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, pass, nil},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, pass, nil},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, pass, nil},
		{"string with NUL escape", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\u0000"}}`, pass, nil},
		{"truncated", `{`, jsonrpc.CodeParseError, nil},
		{"not json", `not json`, jsonrpc.CodeParseError, nil},
		{"NUL byte", "{\"jsonrpc\":\"2.0\",\x00\"id\":1,\"method\":\"ping\"}", jsonrpc.CodeParseError, nil},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, jsonrpc.CodeParseError, nil},
		{"null", `null`, jsonrpc.CodeInvalidRequest, nil},
		{"number", `42`, jsonrpc.CodeInvalidRequest, nil},
		{"empty batch", ` [ ] `, jsonrpc.CodeInvalidRequest, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, nil},
		{"version 1.0", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, 5.0},
		{"no version", `{"id":"x","method":"ping"}`, jsonrpc.CodeInvalidRequest, "x"},
		{"version case", `{"JSONRPC":"2.0","id":5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, 5.0},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"inexact id", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"method not a string", `{"jsonrpc":"2.0","id":2,"method":7}`, jsonrpc.CodeInvalidRequest, 2.0},
		{"scalar params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}`, jsonrpc.CodeInvalidRequest, 2.0},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, jsonrpc.CodeInvalidRequest, nil},
		{"response with both", `{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`, jsonrpc.CodeInvalidRequest, nil},
		{"bad error object", `{"jsonrpc":"2.0","id":3,"error":{"code":"x","message":"x"}}`, jsonrpc.CodeInvalidRequest, nil},
		{"deep nesting", strings.Repeat("[", 100000), jsonrpc.CodeInvalidRequest, nil},
		{"deep params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", MaxFrameDepth) + strings.Repeat("]", MaxFrameDepth) + `}}`, jsonrpc.CodeInvalidRequest, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := classify([]byte(tt.line))
			if (f.msg == nil) == (f.reply == nil) {
				t.Fatalf("frame has msg %v and reply %q: want exactly one", f.msg, f.reply)
			}
			if tt.code == pass {
				if f.msg == nil {
					t.Fatalf("refused a valid message: %s", f.reply)
				}
				return
			}
			if f.reply == nil {
				t.Fatalf("passed on %q as %#v", tt.line, f.msg)
			}
			r := decodeReply(t, f.reply)
			if r.Error.Code != tt.code || r.ID != tt.id {
				t.Fatalf("reply %s: want code %d and id %v", f.reply, tt.code, tt.id)
			}
		})
	}
}

// TestFrameReaderLines: lines are split on newlines (CRLF too), blank
// lines are skipped, a last line may lack its newline, and a line over
// the limit is answered once while the next line is still read.
func TestFrameReaderLines(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	in := "\n  \r\n" + ping + "\r\n" + strings.Repeat("x", 300) + "\n" + ping + "\n" + strings.Repeat(" ", 200) + "\n" + ping
	r := newFrameReaderSize(strings.NewReader(in), 100, 16)
	var got []string
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case f.msg != nil:
			got = append(got, "msg")
		default:
			got = append(got, "error "+decodeReply(t, f.reply).Error.Message)
		}
	}
	want := []string{"msg", "error frame longer than 100 bytes (the server's frame limit)", "msg",
		"error frame longer than 100 bytes (the server's frame limit)", "msg"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("frames:\n got %q\nwant %q", got, want)
	}
}

// FuzzFrameReader: on any input the reader never panics, never holds more
// of a line than its limit, and turns every line (not blank, or over the
// limit) into exactly one frame: a message that was valid JSON-RPC, or
// one error reply.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"{\nnot json\nnull\n[]\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\r\n" + `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\x00\"id\":1}\n\n   \n",
		strings.Repeat("[", 2000),
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 200) + `"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\u202e","result":{}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	const limit = 128
	f.Fuzz(func(t *testing.T, in []byte) {
		var lines [][]byte // the lines that must each give one frame
		for i, l := range bytes.Split(in, []byte("\n")) {
			if i == bytes.Count(in, []byte("\n")) && len(l) == 0 {
				break // after the last newline
			}
			if len(l) > limit || !blank(l) {
				lines = append(lines, l)
			}
		}
		r := newFrameReaderSize(bytes.NewReader(in), limit, 16)
		for n := 0; ; n++ {
			fr, err := r.Next()
			if cap(r.line) > limit {
				t.Fatalf("reader holds %d bytes of a line, limit %d", cap(r.line), limit)
			}
			if err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				if n != len(lines) {
					t.Fatalf("%d frames for %d lines", n, len(lines))
				}
				return
			}
			if n >= len(lines) {
				t.Fatalf("frame %d for %d lines", n+1, len(lines))
			}
			line := lines[n]
			switch {
			case (fr.msg == nil) == (fr.reply == nil):
				t.Fatalf("line %q: frame has msg %v and reply %q", line, fr.msg, fr.reply)
			case fr.reply != nil:
				rep := decodeReply(t, fr.reply)
				if rep.Error.Code != jsonrpc.CodeParseError && rep.Error.Code != jsonrpc.CodeInvalidRequest {
					t.Fatalf("line %q: reply code %d", line, rep.Error.Code)
				}
				if len(line) > limit && (rep.Error.Code != jsonrpc.CodeInvalidRequest || rep.ID != nil) {
					t.Fatalf("oversized line: reply %s", fr.reply)
				}
			default:
				if len(line) > limit || !json.Valid(line) {
					t.Fatalf("passed on %q", line)
				}
				if _, err := jsonrpc.EncodeMessage(fr.msg); err != nil {
					t.Fatalf("line %q: passed on a message the SDK cannot encode: %v", line, err)
				}
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("passed on %q: %v", line, err)
				}
				_, isRequest := fr.msg.(*jsonrpc.Request)
				if _, hasMethod := m["method"]; hasMethod != isRequest {
					t.Fatalf("line %q passed on as %#v", line, fr.msg)
				}
				id := m["id"]
				if n, ok := id.(float64); ok {
					id = int64(n)
				}
				if got := idOf(fr.msg).Raw(); got != id {
					t.Fatalf("line %q passed on with id %#v", line, got)
				}
			}
		}
	})
}

func idOf(msg jsonrpc.Message) jsonrpc.ID {
	if r, ok := msg.(*jsonrpc.Request); ok {
		return r.ID
	}
	return msg.(*jsonrpc.Response).ID
}
