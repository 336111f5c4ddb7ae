// Package lock holds the workspace's three advisory file locks and enforces
// the one global order in which they may be taken: write, then retention,
// then catalog. Taking them in one order everywhere is what makes deadlock
// impossible between publishers, garbage collection and catalog rebuilds.
//
// Waits are bounded: a lock that cannot be had within the timeout fails with
// WRITE_LOCK_TIMEOUT (exit 7), naming the lock, and is safe to retry.
// Read-only work never takes the write lock.
package lock

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/gofrs/flock"
)

// Name is one of the workspace locks, in acquisition order.
type Name int

const (
	Write Name = iota + 1
	Retention
	Catalog
)

func (n Name) String() string {
	switch n {
	case Write:
		return "write"
	case Retention:
		return "retention"
	case Catalog:
		return "catalog"
	}
	return fmt.Sprintf("lock(%d)", int(n))
}

// File returns the lock's file name inside the workspace root.
func (n Name) File() string { return n.String() + ".lock" }

// Names lists the locks in their global order.
func Names() []Name { return []Name{Write, Retention, Catalog} }

// Set takes locks of one workspace for one process and checks the order.
// It is safe for concurrent use; the order is checked per Set, so a process
// should use one Set per logical operation.
type Set struct {
	dir     string
	timeout time.Duration
	mu      sync.Mutex
	held    map[Name]*flock.Flock
}

// NewSet returns a Set for the workspace root dir with a bounded wait.
func NewSet(dir string, timeout time.Duration) *Set {
	return &Set{dir: dir, timeout: timeout, held: map[Name]*flock.Flock{}}
}

// Lock takes n exclusively, or shared when shared is true, waiting at most
// the Set's timeout. The returned function releases it.
func (s *Set) Lock(ctx context.Context, n Name, shared bool) (release func(), err error) {
	s.mu.Lock()
	for h := range s.held {
		if h >= n {
			s.mu.Unlock()
			return nil, fault.New(fault.InternalError, "lock order violated: %s requested while holding %s (order is write, retention, catalog)", n, h)
		}
	}
	s.mu.Unlock()

	fl := flock.New(filepath.Join(s.dir, n.File()))
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var ok bool
	if shared {
		ok, err = fl.TryRLockContext(wctx, 20*time.Millisecond)
	} else {
		ok, err = fl.TryLockContext(wctx, 20*time.Millisecond)
	}
	if err != nil || !ok {
		if ctx.Err() != nil {
			return nil, fault.Wrap(fault.ProcessCancelled, ctx.Err(), "waiting for the %s lock", n)
		}
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			return nil, fault.New(fault.WriteLockTimeout, "the %s lock was not free within %s", n, s.timeout).
				With("lock", n.String()).With("timeout", s.timeout.String()).Retry().
				Fix("Another flameox process is publishing or collecting; retry when it finishes.")
		}
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "take the %s lock", n).With("file", n.File())
	}
	s.mu.Lock()
	s.held[n] = fl
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.held, n)
		s.mu.Unlock()
		fl.Close()
	}, nil
}
