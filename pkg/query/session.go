package query

import (
	"context"
	"strconv"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/workspace"
)

// Row limits shared by every list.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Limit checks a requested row limit and applies the default.
func Limit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultLimit, nil
	case n < 0 || n > MaxLimit:
		return 0, fault.New(fault.QueryBudgetExceeded, "limit %d is outside 1..%d", n, MaxLimit).With("max_limit", "1000")
	}
	return n, nil
}

// Session is one pinned snapshot with its locked-down reader. It holds the
// retention lock shared, so garbage collection cannot remove the files it
// reads, and never takes the write lock.
type Session struct {
	WS      *workspace.Workspace
	R       *catalog.Reader
	release func()
}

// Open pins HEAD and opens a reader on it with every table.
func Open(ctx context.Context, ws *workspace.Workspace) (*Session, error) {
	return OpenTables(ctx, ws)
}

// OpenTables pins HEAD and opens a reader with views over only the named
// tables (all tables when none are named), or reuses one from the
// [Readers] in ctx.
func OpenTables(ctx context.Context, ws *workspace.Workspace, tables ...string) (*Session, error) {
	release, err := ws.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		release()
		return nil, err
	}
	if p := readersFrom(ctx); p != nil {
		r, done, err := p.reader(ctx, snap, tables)
		if err != nil {
			release()
			return nil, err
		}
		return &Session{WS: ws, R: r, release: func() { done(); release() }}, nil
	}
	r, err := catalog.Open(ctx, snap, catalog.Options{MaxRows: MaxLimit, Tables: tables})
	if err != nil {
		release()
		return nil, err
	}
	return &Session{WS: ws, R: r, release: func() { r.Close(); release() }}, nil
}

// Close ends the session's use of its reader (closing it unless a
// [Readers] cache keeps it) and releases the retention lock.
func (s *Session) Close() { s.release() }

// Commit is the pinned commit id.
func (s *Session) Commit() string { return s.R.Commit() }

// with runs fn in a fresh session.
func with[T any](ctx context.Context, ws *workspace.Workspace, fn func(*Session) (T, error)) (T, error) {
	s, err := Open(ctx, ws)
	if err != nil {
		var zero T
		return zero, err
	}
	defer s.Close()
	return fn(s)
}

// resume binds a cursor to a query, its filters (the request without its
// limit and cursor) and the session's commit, and decodes the request's
// token against it: nil key for the first page. Every list query keys its
// pages on two columns.
func (s *Session) resume(q catalog.Query, filters any, order, token string) (cursor.Cursor, []string, error) {
	f, err := cursor.FiltersDigest(filters)
	if err != nil {
		return cursor.Cursor{}, nil, err
	}
	want := cursor.Cursor{Query: q.Name, Version: q.Version, Filters: f, Order: order, CommitID: s.Commit()}
	if token == "" {
		return want, nil, nil
	}
	c, err := cursor.Decode(token, want)
	if err != nil {
		return want, nil, err
	}
	if len(c.Key) != 2 {
		return want, nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
	}
	return want, c.Key, nil
}

// timeKey splits a (microseconds, id) page key into query arguments, both
// nil on the first page.
func timeKey(key []string) (us, id any, err error) {
	if key == nil {
		return nil, nil, nil
	}
	n, err := strconv.ParseInt(key[0], 10, 64)
	if err != nil {
		return nil, nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
	}
	return n, key[1], nil
}
