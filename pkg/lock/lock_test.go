package lock

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/gofrs/flock"
)

func TestOrderEnforced(t *testing.T) {
	s := NewSet(t.TempDir(), time.Second)
	ctx := context.Background()
	rc, err := s.Lock(ctx, Catalog, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(ctx, Write, false); !fault.Is(err, fault.InternalError) {
		t.Fatalf("write after catalog: %v", err)
	}
	if _, err := s.Lock(ctx, Catalog, false); err == nil {
		t.Fatal("catalog taken twice")
	}
	rc()
	rw, err := s.Lock(ctx, Write, false)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := s.Lock(ctx, Retention, true)
	if err != nil {
		t.Fatal(err)
	}
	rc, err = s.Lock(ctx, Catalog, false)
	if err != nil {
		t.Fatal(err)
	}
	rc()
	rr()
	rw()
}

// TestTimeoutAcrossProcesses holds write.lock in a child process and checks
// that a bounded wait ends in WRITE_LOCK_TIMEOUT (exit 7), while a shared
// retention lock is still free.
func TestTimeoutAcrossProcesses(t *testing.T) {
	if os.Getenv("LOCK_HOLDER") != "" {
		fl := flock.New(os.Getenv("LOCK_HOLDER"))
		if ok, err := fl.TryLock(); !ok || err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(10 * time.Second)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTimeoutAcrossProcesses$")
	cmd.Env = append(os.Environ(), "LOCK_HOLDER="+filepath.Join(dir, Write.File()))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("holder did not start: %q %v", buf, err)
	}
	s := NewSet(dir, 300*time.Millisecond)
	start := time.Now()
	_, err := s.Lock(context.Background(), Write, false)
	fe := fault.As(err)
	if fe.Code != fault.WriteLockTimeout || fe.ExitCode() != 7 || !fe.Retryable || fe.Details["lock"] != "write" {
		t.Fatalf("got %+v", fe)
	}
	// It waited at least its budget before giving up; how much longer a
	// loaded machine took is not this test's business.
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("gave up after %v, before its 300 ms budget", d)
	}
	rel, err := s.Lock(context.Background(), Retention, true)
	if err != nil {
		t.Fatalf("retention lock should be free: %v", err)
	}
	rel()
	// Killing the holder frees the lock at once.
	cmd.Process.Kill()
	cmd.Wait()
	rel, err = NewSet(dir, 2*time.Second).Lock(context.Background(), Write, false)
	if err != nil {
		t.Fatalf("after holder died: %v", err)
	}
	rel()
}
