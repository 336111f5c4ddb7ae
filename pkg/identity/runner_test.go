//go:build unix

package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// execRunner is the test stand-in for the broker's runner: os/exec, no
// shell, exactly the given environment, its own process group killed on
// timeout, stdout bounded.
type execRunner struct{}

func (execRunner) Output(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty argv")
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{}, env...) // non-nil: never inherit the parent's
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &capWriter{limit: limit}
	cmd.Stdout = out
	stderr := &headWriter{}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, stderr.buf.Bytes())
	}
	if out.over {
		return nil, fmt.Errorf("%s: output over %d bytes", argv[0], limit)
	}
	return out.buf.Bytes(), nil
}

// capWriter keeps at most limit bytes and then fails the write.
type capWriter struct {
	limit int64
	buf   bytes.Buffer
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if int64(w.buf.Len()+len(p)) > w.limit {
		w.over = true
		return 0, errors.New("output limit exceeded")
	}
	return w.buf.Write(p)
}

// headWriter keeps the first 4 KiB written and drops the rest.
type headWriter struct{ buf bytes.Buffer }

func (w *headWriter) Write(p []byte) (int, error) {
	if room := 4096 - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// call is one recorded Runner invocation.
type call struct {
	argv []string
	dir  string
	env  []string
}

// recordingRunner records every call and delegates to next (nil = fail).
type recordingRunner struct {
	mu    sync.Mutex
	calls []call
	next  Runner
}

func (r *recordingRunner) Output(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, call{slices.Clone(argv), dir, slices.Clone(env)})
	r.mu.Unlock()
	if r.next == nil {
		return nil, errors.New("runner refuses")
	}
	return r.next.Output(ctx, argv, dir, env, limit, timeout)
}

// sensitiveEnv plants home, user, host and secret values in the parent
// environment and returns the values that must never reach a record.
func sensitiveEnv(t *testing.T) []string {
	t.Helper()
	vals := map[string]string{
		"HOME":            "/home/flameox-secret-home",
		"USER":            "flameox-secret-user",
		"LOGNAME":         "flameox-secret-logname",
		"HOSTNAME":        "flameox-secret-host",
		"API_TOKEN":       "secret-e1f2a3b4c5d6",
		"GIT_DIR":         "/home/flameox-secret-home/other/.git",
		"XDG_CONFIG_HOME": "/home/flameox-secret-home/.config",
	}
	var out []string
	for k, v := range vals {
		t.Setenv(k, v)
		out = append(out, v)
	}
	if h, err := os.Hostname(); err == nil && len(h) >= 6 {
		out = append(out, h)
	}
	return out
}

// assertNoLeak fails if any value appears in the record's JSON or in the
// environment of any recorded child process.
func assertNoLeak(t *testing.T, record any, r *recordingRunner, secrets []string) {
	t.Helper()
	b, err := json.Marshal(record)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(b), s) {
			t.Errorf("record contains %q: %s", s, b)
		}
		for _, c := range r.calls {
			if strings.Contains(strings.Join(c.env, "\n"), s) {
				t.Errorf("child %v got %q in its environment", c.argv, s)
			}
		}
	}
}

// gitCmd runs git for test setup, with a fixed identity and dates.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com",
		"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
		"GIT_COMMITTER_DATE=2026-01-01T00:00:00Z", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// writeFile writes a project file, creating parent directories.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
