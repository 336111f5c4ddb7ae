package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Envelope is the structured content of every tool result. Result is the
// same Go type `flameox … --json` prints; Error is set on failure. A
// capture whose workload failed carries both: the recorded run and why it
// is not a success.
type Envelope[T any] struct {
	SchemaVersion int          `json:"schema_version"`
	OK            bool         `json:"ok"`
	Result        *T           `json:"result"`
	Error         *fault.Error `json:"error"`
}

// handlerFunc is a tool's logic: its result, a one-line summary for the
// text content, and an error (a *fault.Error, or anything, which becomes
// INTERNAL_ERROR).
type handlerFunc[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (*Out, string, error)

// toolInput is what the argument check needs to know about a tool.
type toolInput struct {
	props    []string // sorted property names
	resolved *jsonschema.Resolved
}

// addTool registers a typed tool whose input schema is derived from In and
// edited by edits, and whose output schema is Envelope[Out].
func addTool[In, Out any](s *server, t *mcp.Tool, h handlerFunc[In, Out], edits ...func(*jsonschema.Schema)) {
	sch, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", t.Name, err))
	}
	for _, edit := range edits {
		edit(sch)
	}
	resolved, err := sch.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", t.Name, err))
	}
	props := make([]string, 0, len(sch.Properties))
	for p := range sch.Properties {
		props = append(props, p)
	}
	sort.Strings(props)
	s.inputs[t.Name] = &toolInput{props: props, resolved: resolved}
	t.InputSchema = sch
	if t.OutputSchema == nil {
		t.OutputSchema = outputSchema[Out](t.Name)
	}
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Envelope[Out], error) {
		out, summary, err := h(ctx, req, in)
		return finish(ctx, out, summary, err)
	})
}

// finish builds the envelope and the text content of a tool result.
func finish[Out any](ctx context.Context, out *Out, summary string, err error) (*mcp.CallToolResult, Envelope[Out], error) {
	env := Envelope[Out]{SchemaVersion: 1, OK: err == nil, Result: out}
	if out != nil {
		fillMaps(reflect.ValueOf(out))
	}
	if err != nil {
		env.Error = structured(ctx, err)
		summary = errorText(env.Error, summary)
	}
	if out != nil {
		mcpForm(reflect.ValueOf(out))
	}
	res := &mcp.CallToolResult{IsError: err != nil, Content: text(summary, env)}
	// A result may carry content blocks besides its text: a picture's
	// resource_link and image (render_picture).
	if x, ok := any(out).(interface{ extraContent() []mcp.Content }); ok && out != nil && err == nil {
		res.Content = append(res.Content, x.extraContent()...)
	}
	return res, env, nil
}

// failure is a tool result for an error found before the tool ran.
func failure(fe *fault.Error) *mcp.CallToolResult {
	fillMaps(reflect.ValueOf(fe))
	fe = fe.ForMCP()
	env := Envelope[struct{}]{SchemaVersion: 1, Error: fe}
	return &mcp.CallToolResult{IsError: true, Content: text(errorText(fe, ""), env), StructuredContent: env}
}

// structured turns any error into the contract's error.
func structured(ctx context.Context, err error) *fault.Error {
	fe := fault.As(err)
	if fe.Code == fault.InternalError && (errors.Is(err, context.Canceled) || ctx.Err() != nil) {
		fe = fault.Wrap(fault.ProcessCancelled, err, "cancelled")
	}
	return fe.ForMCP()
}

func errorText(fe *fault.Error, summary string) string {
	t := string(fe.Code) + ": " + fe.Message
	if fe.RunID != "" {
		t += " (run " + fe.RunID + ")"
	}
	if len(fe.Remediation) > 0 {
		t += " Fix: " + fe.Remediation[0]
	}
	if summary != "" {
		t = summary + " — " + t
	}
	return t
}

// text is the text content: a terminal-safe, bounded one-line summary,
// then the envelope (the structured content) as compact JSON, as the MCP
// specification recommends for tools with an output schema, so that a
// host that forwards only content[] gives the model the whole result
// (names from artifacts stay inside JSON strings, escaped). The JSON is
// bounded as the structured content is: by the tool's page size, with
// its truncated, total and cursor.
func text(summary string, env any) []mcp.Content {
	s := cli.Safe(summary)
	if r := []rune(s); len(r) > 600 {
		s = string(r[:600]) + "…"
	}
	if js, err := safeJSON(env); err == nil {
		s += "\n" + js
	}
	return []mcp.Content{&mcp.TextContent{Text: s}}
}

// walk calls visit on v and, while visit returns true, on everything v
// holds that a result can carry: pointed-to values, exported struct
// fields, slice and array elements (map values are not addressable, and no
// result keeps a Next or a nil map inside one).
func walk(v reflect.Value, visit func(reflect.Value) bool) {
	if !visit(v) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walk(v.Elem(), visit)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				walk(v.Field(i), visit)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i), visit)
		}
	}
}

// mcpForm gives every next-step list (fault.Next) and error in v its MCP
// form: tool calls instead of CLI commands.
func mcpForm(v reflect.Value) {
	walk(v, func(v reflect.Value) bool {
		var p any
		switch {
		case v.Kind() == reflect.Pointer && !v.IsNil():
			p = v.Interface()
		case v.Kind() == reflect.Struct && v.CanAddr():
			p = v.Addr().Interface()
		}
		switch p := p.(type) {
		case *fault.Next:
			p.UseMCP()
			return false
		case *fault.Error:
			p.UseMCP()
			return false
		}
		return true
	})
}

// fillMaps replaces nil maps by empty ones throughout v: a nil map
// marshals as null, which its output schema (type object) rejects, and the
// SDK would turn the whole call into a protocol error.
func fillMaps(v reflect.Value) {
	walk(v, func(v reflect.Value) bool {
		if v.Kind() == reflect.Map && v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		return true
	})
}

// recoverPanics turns a panic into INTERNAL_ERROR instead of ending the
// server process (the SDK has no recover of its own).
// shareReaders lets every call reuse the server's catalog readers while
// HEAD stays put (see query.Readers).
func (s *server) shareReaders(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return next(query.WithReaders(ctx, s.readers), method, req)
	}
}

func (s *server) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.opts.Logger.Error("panic in handler", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				fe := fault.New(fault.InternalError, "internal error: %v", r).
					Fix("This is a bug in flameox; please report it with the call that caused it.")
				if method == "tools/call" {
					res, err = failure(fe), nil
					return
				}
				res, err = nil, fe
			}
		}()
		return next(ctx, method, req)
	}
}

// checkArguments validates tools/call arguments against the tool's input
// schema before the SDK does, so unknown or invalid arguments come back as
// our envelope (INVALID_ARGUMENTS naming the fields), not as bare text.
func (s *server) checkArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		if a := call.Params.Arguments; len(a) == 0 || string(a) == "null" {
			// The SDK applies schema defaults to a nil map (and panics)
			// when arguments are null, so absent arguments become {}.
			call.Params.Arguments = json.RawMessage("{}")
		}
		if in := s.inputs[call.Params.Name]; in != nil {
			if fe := in.check(call.Params.Arguments); fe != nil {
				return failure(fe), nil
			}
		}
		return next(ctx, method, req)
	}
}

func (ti *toolInput) check(raw json.RawMessage) *fault.Error {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return fault.New(fault.InvalidArguments, "arguments must be a JSON object").With("allowed_fields", strings.Join(ti.props, ","))
		}
	}
	var unknown []string
	for k := range args {
		if i := sort.SearchStrings(ti.props, k); i == len(ti.props) || ti.props[i] != k {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fault.New(fault.InvalidArguments, "unknown argument(s): %s", strings.Join(unknown, ", ")).
			With("unknown_fields", strings.Join(unknown, ",")).With("allowed_fields", strings.Join(ti.props, ",")).
			Fix("Remove the unknown fields; tools/list shows each tool's input schema.")
	}
	if err := ti.resolved.Validate(args); err != nil {
		return argumentFault(ti.resolved.Schema(), ti.props, args, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// readOnly are the annotations of a tool that only reads local evidence.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true,
		DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
}

// noInput is the input of a tool without arguments.
type noInput struct{}
