package setup

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/version"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// verifyTimeout bounds one host's launch and handshake (Codex gives a
// server ten seconds to start by default; a cold first start may take more).
const verifyTimeout = 60 * time.Second

// verifyEnv are the parent variables a verified server gets besides the
// entry's own env: what any host passes on (the broker drops credentials).
var verifyEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TERM", "TMPDIR", "XDG_*", "CODEX_HOME"}

// Verified is the outcome of starting one host's configured server.
type Verified struct {
	Host  string   `json:"host"`
	Scope Scope    `json:"scope"`
	File  string   `json:"file"`
	Argv  []string `json:"argv"`
	Dir   string   `json:"dir"`
	// EnvNames are the entry's own variables (names only).
	EnvNames      []string `json:"env_names"`
	OK            bool     `json:"ok"`
	Server        string   `json:"server,omitempty"`
	ServerVersion string   `json:"server_version,omitempty"`
	Protocol      string   `json:"protocol,omitempty"`
	Tools         int      `json:"tools"`
	// Stale: the entry starts another binary than this flameox.
	Stale  bool         `json:"stale"`
	Stderr string       `json:"stderr,omitempty"`
	Error  *fault.Error `json:"error,omitempty"`
}

// launch is how a host would start the entry: argv, its own env, cwd.
func launch(h *Host, entry map[string]any) (argv []string, env map[string]string, cwd string) {
	switch c := entry["command"].(type) {
	case string:
		argv = []string{c}
	case []any:
		for _, a := range c {
			if s, ok := a.(string); ok {
				argv = append(argv, s)
			}
		}
	}
	if args, ok := entry["args"].([]any); ok {
		for _, a := range args {
			if s, ok := a.(string); ok {
				argv = append(argv, s)
			}
		}
	}
	env = map[string]string{}
	for _, k := range []string{"env", "environment"} {
		if m, ok := entry[k].(map[string]any); ok {
			for n, v := range m {
				if s, ok := v.(string); ok {
					env[n] = s
				}
			}
		}
	}
	cwd, _ = entry["cwd"].(string)
	return argv, env, cwd
}

// Verify starts each host's configured flameox server the way the host
// would (the entry's argv, env and cwd; the project root otherwise)
// through the broker, and completes an MCP handshake: initialize, then
// tools/list. parent is the environment setup runs in.
func Verify(ctx context.Context, o Options, hosts []*Host, s Scope, parent []string) []Verified {
	var out []Verified
	for _, h := range hosts {
		file, entry, err := h.Entry(o, s)
		v := Verified{Host: h.Name, Scope: s, File: file, EnvNames: []string{}}
		switch {
		case err != nil:
			v.Error = fault.As(err)
		case entry == nil:
			v.Error = fault.New(fault.NotFound, "%s has no %s entry", file, ServerName).With("file", file).
				Fix("Run 'flameox setup --" + h.Name + "' first.")
		default:
			argv, env, cwd := launch(h, entry)
			if x := expander(h.Name, o, lookup(parent)); x != nil {
				for i := range argv {
					argv[i] = x(argv[i])
				}
				for k, val := range env {
					env[k] = x(val)
				}
				cwd = x(cwd)
			}
			if cwd == "" {
				cwd = o.ProjectRoot
			}
			v.Argv, v.Dir = argv, cwd
			for n := range env {
				v.EnvNames = append(v.EnvNames, n)
			}
			sort.Strings(v.EnvNames)
			v.Stale = len(argv) == 0 || argv[0] != o.Executable
			childEnv, _ := broker.ChildEnv(parent, verifyEnv, nil, env)
			v.handshake(ctx, argv, cwd, childEnv)
		}
		out = append(out, v)
	}
	return out
}

func (v *Verified) handshake(ctx context.Context, argv []string, dir string, env []string) {
	if len(argv) == 0 {
		v.Error = fault.New(fault.ExecutionRefused, "the %s entry in %s has no command", ServerName, v.File).With("file", v.File)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	t := &brokerTransport{spec: broker.Spec{Argv: argv, Dir: dir, Env: env, Timeout: verifyTimeout + 5*time.Second}}
	client := mcp.NewClient(&mcp.Implementation{Name: "flameox-setup-verify", Version: version.Version()}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err == nil {
		init := cs.InitializeResult()
		if init != nil && init.ServerInfo != nil {
			v.Server, v.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
		}
		if init != nil {
			v.Protocol = init.ProtocolVersion
		}
		var tools *mcp.ListToolsResult
		tools, err = cs.ListTools(ctx, nil)
		if err == nil {
			v.Tools = len(tools.Tools)
		}
		cs.Close()
	}
	res, runErr := t.wait()
	v.Stderr = tail(t.stderr.String(), 2048)
	switch {
	case err != nil:
		e := fault.Wrap(fault.ProcessFailed, err, "%s did not complete an MCP handshake", argv[0]).With("file", v.File)
		if res != nil && res.Path != "" {
			e.With("path", res.Path).With("exit_code", itoa(res.ExitCode))
		}
		if runErr != nil {
			e = fault.Wrap(fault.ProcessFailed, runErr, "%s did not complete an MCP handshake", argv[0]).With("file", v.File)
		}
		v.Error = e.Fix("Run the command from the entry by hand to see why: " + strings.Join(argv, " "))
	case v.Tools == 0:
		v.Error = fault.New(fault.ProcessFailed, "%s answered the handshake but lists no tools", argv[0]).With("file", v.File)
	default:
		v.OK = true
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// brokerTransport is an MCP stdio transport whose server process the
// broker starts (the SDK's CommandTransport would start it with os/exec,
// outside the broker's process-tree accounting; only pkg/broker starts
// processes). The child's stdin and stdout are pipes to the client.
type brokerTransport struct {
	spec   broker.Spec
	stderr lockedBuffer
	done   chan struct{}
	res    *broker.Result
	err    error
	cancel context.CancelFunc
}

func (t *brokerTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.spec.Stdin, t.spec.Stdout, t.spec.Stderr = inR, outW, &t.stderr
	t.spec.StderrLimit = 64 << 10
	t.done = make(chan struct{})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.cancel = cancel
	go func() {
		defer close(t.done)
		t.res, t.err = broker.Run(runCtx, t.spec)
		outW.Close() // the client reads EOF: the server is gone
		inR.Close()
	}()
	return (&mcp.IOTransport{Reader: outR, Writer: inW}).Connect(ctx)
}

// wait returns the server's result once it has exited: closing its stdin
// ends it; one that lingers is ended by the broker.
func (t *brokerTransport) wait() (*broker.Result, error) {
	if t.done == nil {
		return nil, nil
	}
	select {
	case <-t.done:
	case <-time.After(5 * time.Second):
		t.cancel()
		<-t.done
	}
	t.cancel()
	return t.res, t.err
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
