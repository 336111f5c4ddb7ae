package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the server's stdio transport: newline-delimited
// JSON-RPC through a frameReader (frame.go says why not mcp.IOTransport).
//
// It also holds back the end of input until every call already read has
// been answered. go-sdk v1.8.0 marks its connection as shutting down the
// moment a read fails, cancels the calls in flight and then refuses to
// write their replies (internal/jsonrpc2/conn.go: readIncoming sets
// readErr; write fails once shuttingDown), so a reply raced the end of
// input and often lost:
//
//	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}' |
//	  fox-mcp serve --project-root . | wc -l   # 0 most times, 1 sometimes
type stdioTransport struct {
	in    io.Reader
	out   io.Writer
	limit int // the frame bound in bytes (0: DefaultMaxFrameBytes)
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		out:      t.out,
		frames:   make(chan frameOrErr),
		closed:   make(chan struct{}),
		pending:  map[jsonrpc.ID]bool{},
		dropped:  map[jsonrpc.ID]bool{},
		outgoing: map[jsonrpc.ID]bool{},
		changed:  make(chan struct{}),
	}
	// Reads run in their own goroutine so that Close can end a Read that
	// waits on stdin (which cannot be interrupted; the goroutine then ends
	// with the process, as the SDK's does).
	fr := newFrameReader(t.in, t.limit)
	go func() {
		for {
			f, err := fr.Next()
			select {
			case c.frames <- frameOrErr{f, err}:
			case <-c.closed:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c, nil
}

type frameOrErr struct {
	frame
	err error
}

// stdioConn is the mcp.Connection of a stdioTransport.
type stdioConn struct {
	out     io.Writer
	writeMu sync.Mutex

	frames    chan frameOrErr
	readErr   error // the input's end, once seen
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // calls read and not yet answered
	dropped  map[jsonrpc.ID]bool // pending calls the client cancelled
	outgoing map[jsonrpc.ID]bool // calls to the client not yet answered
	broken   bool                // a write failed: no reply can come
	changed  chan struct{}       // closed and replaced when any changes
}

// Read returns the next valid message. Bad frames are answered here and
// never reach the SDK. At the end of input Read waits until the calls in
// flight are answered, then returns the read error (io.EOF).
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for c.readErr == nil {
		var f frameOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case f = <-c.frames:
		}
		switch {
		case f.err != nil:
			c.readErr = f.err
		case f.reply != nil:
			if err := c.write(f.reply); err != nil {
				return nil, err
			}
		default:
			c.track(f.msg)
			return f.msg, nil
		}
	}
	c.drain(ctx)
	return nil, c.readErr
}

// track records a call the server must answer, or the client's answer to
// a call of the server.
func (c *stdioConn) track(msg jsonrpc.Message) {
	c.update(func() {
		switch m := msg.(type) {
		case *jsonrpc.Request:
			// subscriptions/listen is a stream that lasts until the input
			// ends; its reply only marks the end.
			if m.IsCall() && m.Method != "subscriptions/listen" {
				c.pending[m.ID] = true
			}
			if id, ok := cancelledID(m); ok && c.pending[id] {
				c.dropped[id] = true
			}
		case *jsonrpc.Response:
			delete(c.outgoing, m.ID)
		}
	})
}

// drain waits until no call read is unanswered, or until none can be:
// one of the server's own calls waits on the client (whose answer can no
// longer come), a write failed, or the connection is closed.
func (c *stdioConn) drain(ctx context.Context) {
	for {
		c.mu.Lock()
		done := len(c.pending) == 0 || len(c.outgoing) > 0 || c.broken
		changed := c.changed
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (c *stdioConn) update(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
}

// Write writes msg as one line. The reply to a call the client cancelled
// (notifications/cancelled) is not sent, as the MCP spec asks: go-sdk
// v1.8.0 cancels the handler's context but writes whatever the handler
// returns (internal/jsonrpc2/conn.go: processResult writes with
// notDone{req.ctx}), so a cancelled capture's result reached a client that
// had stopped waiting for it. The cancelled run stays findable
// (list_runs; get_job for a job).
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			return err
		}
		data = unencodable(resp)
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		drop := false
		c.update(func() {
			drop = c.dropped[m.ID]
			if drop {
				delete(c.pending, m.ID)
				delete(c.dropped, m.ID)
			}
		})
		if drop {
			return nil
		}
		defer c.update(func() { delete(c.pending, m.ID) })
	case *jsonrpc.Request:
		if m.IsCall() {
			c.update(func() { c.outgoing[m.ID] = true })
		}
	}
	return c.write(data)
}

// unencodable is the reply sent in place of a response that does not
// encode, so that a bad reply costs its caller an error instead of ending
// the session (a failed write breaks the SDK's connection). go-sdk v1.8.0
// builds one itself: for an unknown resource URI it makes the error data
// with %q, which is not JSON for a control character:
//
//	{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"\u0000"}}
//
// after initialize ended the server with exit 1 ("invalid character 'x'
// in string escape code"). The error keeps its code and message, without
// the data; a result that does not encode becomes -32603.
func unencodable(resp *jsonrpc.Response) []byte {
	code, message := int64(jsonrpc.CodeInternalError), "internal error: the reply could not be encoded"
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) {
		code, message = we.Code, we.Message
	}
	return rejectf(resp.ID.Raw(), int(code), "%s", message).reply
}

// write writes one line, with the characters a terminal or renderer could
// act on escaped (cli.EscapeJSON: bidi and C1 controls; encoding/json
// escapes only C0).
func (c *stdioConn) write(data []byte) error {
	line := append(cli.EscapeJSON(data), '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.out.Write(line); err != nil {
		c.update(func() { c.broken = true })
		return err
	}
	return nil
}

// Close ends a Read in progress. It leaves stdin and stdout open.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) SessionID() string { return "" }

// cancelledID is the request id a notifications/cancelled names.
func cancelledID(m *jsonrpc.Request) (jsonrpc.ID, bool) {
	if m.IsCall() || m.Method != "notifications/cancelled" {
		return jsonrpc.ID{}, false
	}
	var p mcp.CancelledParams
	if json.Unmarshal(m.Params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil && id.IsValid()
}
