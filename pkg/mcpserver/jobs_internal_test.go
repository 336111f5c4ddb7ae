package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// runJob starts a job whose work returns err and waits until it ends.
func runJob(t *testing.T, st *jobStore, err error) string {
	t.Helper()
	j, rerr := st.reserve(JobCapture)
	if rerr != nil {
		t.Fatal(rerr)
	}
	st.start(j, func(context.Context, *job) (func(*Job), error) { return nil, err })
	<-j.done
	return j.view.JobID
}

// TestJobStoreBounds: finished jobs are forgotten after the retention
// and beyond the newest MaxFinishedJobs; running ones are limited; a
// forgotten job is NOT_FOUND with a remedy that names list_runs.
func TestJobStoreBounds(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st := newJobStore(Options{Now: clock.now, MaxRunningJobs: 1, MaxFinishedJobs: 2, JobRetention: time.Hour})
	defer st.close()
	var ids []string
	for i := range 3 {
		ids = append(ids, runJob(t, st, nil))
		clock.add(time.Duration(i+1) * time.Minute)
	}
	if _, _, err := st.get(ids[0]); !fault.Is(err, fault.NotFound) || !strings.Contains(fault.As(err).Remediation[0], "list_runs") {
		t.Fatalf("the oldest of three finished jobs (limit 2): %v", err)
	}
	for _, id := range ids[1:] {
		if _, v, err := st.get(id); err != nil || v.Status != JobSucceeded || !v.Terminal {
			t.Fatalf("job %s: %+v %v", id, v, err)
		}
	}
	clock.add(2 * time.Hour)
	if _, _, err := st.get(ids[2]); !fault.Is(err, fault.NotFound) {
		t.Fatalf("a job finished beyond the retention: %v", err)
	}

	block := make(chan struct{})
	j, err := st.reserve(JobCapture)
	if err != nil {
		t.Fatal(err)
	}
	st.start(j, func(ctx context.Context, _ *job) (func(*Job), error) {
		select {
		case <-block:
			return nil, nil
		case <-ctx.Done():
			return func(v *Job) { v.RunID = "r1" }, fault.New(fault.ProcessCancelled, "cancelled")
		}
	})
	if _, err := st.reserve(JobCapture); !fault.Is(err, fault.ExecutionRefused) || !fault.As(err).Retryable {
		t.Fatalf("a second running job (limit 1): %v", err)
	}
	st.cancelJob(j)
	v := st.wait(context.Background(), j, time.Minute)
	if v.Status != JobCancelled || v.RunID != "r1" || v.Error == nil || v.Error.RunID != "r1" {
		t.Fatalf("cancelled job: %+v", v)
	}
	if id := runJob(t, st, errors.New("boom")); true {
		if _, v, _ := st.get(id); v.Status != JobFailed || v.Error == nil {
			t.Fatalf("failed job: %+v", v)
		}
	}
}
