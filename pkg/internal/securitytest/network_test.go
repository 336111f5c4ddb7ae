package securitytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// socketWorkload is the name under which this test binary, run as a
// workload, opens a TCP socket and tries to connect (to a port nothing
// listens on): the workload's own network use, which the strace check
// must see and must not blame on flameox.
const socketWorkload = "socket-workload"

func openSocket() int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "socket:", err)
		return 0
	}
	syscall.Connect(fd, &syscall.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}})
	syscall.Close(fd)
	fmt.Println("socket opened")
	return 0
}

func netProbe() int {
	ifs, err := net.Interfaces()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			fmt.Println(i.Name)
		}
	}
	return 0
}

// noNetwork returns the wrapper that runs a command in a new network
// namespace (no interface but a down loopback): `unshare -n` as root,
// `unshare -rn` (a user namespace mapping the caller to root) otherwise.
// It checks that the wrapper works and takes the network away, or calls
// testenv.Unable (a skip locally, a failure under CI=true).
func noNetwork(t *testing.T) []string {
	t.Helper()
	unshare := lookTool(t, "unshare")
	wrap := []string{unshare, "-n", "--"}
	if os.Geteuid() != 0 {
		wrap = []string{unshare, "-rn", "--"}
	}
	if out, err := exec.Command(wrap[0], append(wrap[1:], "true")...).CombinedOutput(); err != nil {
		testenv.Unable(t, "unshare -n", "refused by the kernel", "%v: %s", err, out)
	}
	r := cmdline{tool: "netprobe", dir: t.TempDir(), wrap: wrap}.run(t)
	if r.exit != 0 || strings.TrimSpace(r.stdout) != "" {
		t.Fatalf("%v does not take the network away: exit %d, interfaces up %q %s", wrap, r.exit, r.stdout, r.stderr)
	}
	return wrap
}

const helloTOML = `schema_version = 1
[workloads.hello]
argv = ["/bin/sh", "-c", "echo hello; echo world >&2"]
timeout_seconds = 30
`

// TestGoldenWithoutNetwork runs a golden sequence, every command a user
// types from init to an agent's first MCP exchange, inside a network
// namespace with no network: each must succeed. A command that needed the
// network (a version check, telemetry, a module download) fails here.
func TestGoldenWithoutNetwork(t *testing.T) {
	wrap := noNetwork(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(helloTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(what string, c cmdline) result {
		t.Helper()
		c.dir, c.wrap = dir, wrap
		if c.tool == "" {
			c.tool = "flameox"
		}
		return mustOK(t, what, c.run(t))
	}
	flx := func(args ...string) result {
		t.Helper()
		return run(strings.Join(args[:min(2, len(args))], " "), cmdline{args: args})
	}
	runID := func(stdout string) string { t.Helper(); return runIDOf(t, stdout) }
	flx("init")
	flx("workload", "approve", "hello")
	prof := runID(flx("import", fixture(t, "google-pprof__sample.cpu.pb.gz"), "--json").stdout)
	old := runID(flx("import", "--kind", "benchmark_samples", fixture(t, "golang-perf__crc-old.txt"), "--json").stdout)
	cur := runID(flx("import", "--kind", "benchmark_samples", fixture(t, "golang-perf__crc-new.txt"), "--json").stdout)
	if out := flx("capture", "run", "process", "--workload", "hello").stdout; !strings.Contains(out, "execution succeeded") {
		t.Fatalf("capture: %s", out)
	}
	// The plumbing: fox-capture's records published by fox-publish.
	recs := run("fox-capture import", cmdline{tool: "fox-capture", args: []string{"import", fixture(t, "golang-perf__crc-old.txt")}}).stdout
	if out := run("fox-publish", cmdline{tool: "fox-publish", stdin: recs}).stdout; !strings.Contains(out, `"record":"commit"`) {
		t.Fatalf("fox-publish wrote no commit record: %s", out)
	}
	if out := flx("analyze", "hotspots", prof).stdout; !strings.Contains(out, "main.busyLoop") {
		t.Fatalf("analyze hotspots: %s", out)
	}
	if out := flx("compare", old, cur, "--ignore", "note").stdout; !strings.Contains(out, "geomean") {
		t.Fatalf("compare: %s", out)
	}
	flx("measurements", "summary", old)
	flx("status")
	flx("validate", "--level", "full")
	flx("gc")
	// An agent host's first exchange: initialize, then tools/list.
	session := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"securitytest","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`
	out := run("mcp serve", cmdline{args: []string{"mcp", "serve"}, stdin: session}).stdout
	answered := map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				ServerInfo *struct{ Name string }  `json:"serverInfo"`
				Tools      []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("mcp serve wrote a line that is not JSON-RPC: %q", line)
		}
		answered[msg.ID] = msg.ID == 1 && msg.Result.ServerInfo != nil || msg.ID == 2 && len(msg.Result.Tools) > 0
	}
	if !answered[1] || !answered[2] {
		t.Fatalf("mcp serve did not answer initialize and tools/list:\n%s", out)
	}
}

// TestCaptureMakesNoSocketCall traces a capture with `strace -f -e
// trace=network,process` and attributes every network system call to the
// program its process was running (see attribute): flameox's own
// processes (this test binary acting as flameox) make none. The workload
// is this binary under the name socket-workload, which opens a socket
// and connects: the trace must show its calls, attributed to it, which
// proves that the trace follows children and that attribution is by
// program, not by luck.
func TestCaptureMakesNoSocketCall(t *testing.T) {
	strace := lookTool(t, "strace")
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	workload := filepath.Join(bin, socketWorkload)
	if err := os.Symlink(self, workload); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("schema_version = 1\n[workloads.sock]\nargv = [%q]\ntimeout_seconds = 60\n", workload)
	dir := project(t, toml, "sock")
	trace := filepath.Join(t.TempDir(), "strace.txt")
	r := cmdline{tool: "flameox", dir: dir, args: []string{"capture", "run", "process", "--workload", "sock"},
		wrap: []string{strace, "-f", "-qq", "-e", "trace=network,process", "-e", "signal=none", "-o", trace, "--"}}.run(t)
	mustOK(t, "capture under strace", r)
	if !strings.Contains(r.stdout, "execution succeeded") {
		t.Fatalf("capture: %s", r.stdout)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, err := attribute(f)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Base(self)
	if len(calls[own]) > 0 {
		t.Errorf("flameox's own processes made network calls:\n%s", strings.Join(calls[own], "\n"))
	}
	if len(calls[socketWorkload]) == 0 {
		t.Errorf("the trace shows no network call by the workload, which makes one: the check sees nothing (%d programs: %v)", len(calls), calls)
	}
	for prog, c := range calls {
		if prog != own && prog != socketWorkload {
			t.Errorf("network calls by %s, which nothing here should run:\n%s", prog, strings.Join(c, "\n"))
		}
	}
}

// traceNetwork runs c under `strace -f -e trace=network,process` and
// returns its network calls by program (attribute).
func traceNetwork(t *testing.T, strace string, c cmdline) (result, map[string][]string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.txt")
	c.wrap = []string{strace, "-f", "-qq", "-e", "trace=network,process", "-e", "signal=none", "-o", log, "--"}
	r := c.run(t)
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, err := attribute(f)
	if err != nil {
		t.Fatal(err)
	}
	return r, calls
}

// TestCommandsMakeNoSocketCall traces the commands of the golden sequence
// that run no workload — import, the plumbing pipeline's two ends, an
// analysis, a comparison, catalog rebuild, validate, and an MCP session —
// and finds no network system call by any process at all.
func TestCommandsMakeNoSocketCall(t *testing.T) {
	strace := lookTool(t, "strace")
	dir := project(t, "")
	prof := runIDOf(t, mustOK(t, "import", fx(t, dir, "--json", "import", fixture(t, "google-pprof__sample.cpu.pb.gz"))).stdout)
	old := runIDOf(t, mustOK(t, "import", fx(t, dir, "--json", "import", "--kind", "benchmark_samples", fixture(t, "golang-perf__crc-old.txt"))).stdout)
	session := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"securitytest","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"analyze_hotspots","arguments":{"input":"` + prof + `"}}}
`
	records := ""
	for _, c := range []cmdline{
		{tool: "flameox", args: []string{"import", "--kind", "benchmark_samples", fixture(t, "golang-perf__crc-new.txt")}},
		{tool: "fox-capture", args: []string{"import", fixture(t, "golang-perf__crc-old.txt")}},
		{tool: "fox-publish"}, // reads what fox-capture wrote
		{tool: "flameox", args: []string{"analyze", "hotspots", prof}},
		{tool: "flameox", args: []string{"measurements", "summary", old}},
		{tool: "flameox", args: []string{"catalog", "rebuild"}},
		{tool: "flameox", args: []string{"validate", "--level", "full"}},
		{tool: "flameox", args: []string{"mcp", "serve"}, stdin: session},
	} {
		c.dir = dir
		if c.tool == "fox-publish" {
			c.stdin = records
		}
		r, calls := traceNetwork(t, strace, c)
		what := strings.TrimSpace(c.tool + " " + strings.Join(c.args[:min(2, len(c.args))], " "))
		mustOK(t, what, r)
		if c.tool == "fox-capture" {
			records = r.stdout
		}
		for prog, cs := range calls {
			t.Errorf("%s: network calls by %s:\n%s", what, prog, strings.Join(cs, "\n"))
		}
	}
}

// networkCalls are strace's %network class (socket and everything done
// with one).
var networkCalls = map[string]bool{
	"socket": true, "socketpair": true, "connect": true, "bind": true, "listen": true,
	"accept": true, "accept4": true, "getsockname": true, "getpeername": true,
	"sendto": true, "recvfrom": true, "sendmsg": true, "recvmsg": true, "sendmmsg": true, "recvmmsg": true,
	"setsockopt": true, "getsockopt": true, "shutdown": true,
}

// straceReturn is the return value at the end of a call's line (strace
// pads it to a column).
var straceReturn = regexp.MustCompile(`\)\s+=\s+(\S+)`)

var straceLine = regexp.MustCompile(`^(\d+) +(?:<\.\.\. ([a-z0-9_]+) resumed>|([a-z0-9_]+)\()(.*)$`)

// attribute reads an `strace -f -e trace=network,process` log and returns
// the network calls made, keyed by the program (the base name of the
// file last executed) each process was running when it made them. A
// process's program is that of its latest successful execve before the
// call; before any execve (a fork, or a thread, not yet replaced) it is
// its parent's at the moment clone returned the child's pid. A process
// the log never says anything about is "?", which counts as flameox's.
//
// This is how the workload's children are told from flameox's own
// processes: by the program, through the process tree, never by a pid
// guessed in advance.
func attribute(f io.Reader) (map[string][]string, error) {
	type exec struct {
		at   int
		prog string
	}
	execs := map[int][]exec{}
	parent := map[int]int{}
	cloned := map[int]int{} // child pid -> index of the line where clone returned it
	type call struct {
		at, pid int
		line    string
	}
	var calls []call
	pending := map[int]string{} // pid -> the first argument of an unfinished execve
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; sc.Scan(); i++ {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		name, rest, resumed := m[3], m[4], m[2] != ""
		if resumed {
			name = m[2]
		}
		unfinished := strings.HasSuffix(rest, "<unfinished ...>")
		ret := ""
		if r := straceReturn.FindAllStringSubmatch(rest, -1); len(r) > 0 && !unfinished {
			ret = r[len(r)-1][1]
		}
		switch {
		case networkCalls[name]:
			if !resumed {
				calls = append(calls, call{i, pid, sc.Text()})
			}
		case name == "execve" || name == "execveat":
			if !resumed {
				path, _, _ := strings.Cut(strings.TrimPrefix(rest, `"`), `"`)
				pending[pid] = path
			}
			if ret == "0" {
				execs[pid] = append(execs[pid], exec{i, filepath.Base(pending[pid])})
			}
		case name == "clone" || name == "clone3" || name == "fork" || name == "vfork":
			if child, err := strconv.Atoi(ret); err == nil && child > 0 {
				parent[child], cloned[child] = pid, i
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var program func(pid, at, depth int) string
	program = func(pid, at, depth int) string {
		prog := ""
		for _, e := range execs[pid] {
			if e.at < at {
				prog = e.prog
			}
		}
		if prog != "" {
			return prog
		}
		if p, ok := parent[pid]; ok && depth < 1000 {
			return program(p, cloned[pid], depth+1)
		}
		return "?"
	}
	out := map[string][]string{}
	for _, c := range calls {
		prog := program(c.pid, c.at, 0)
		out[prog] = append(out[prog], c.line)
	}
	return out, nil
}
