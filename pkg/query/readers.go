package query

import (
	"context"
	"strings"
	"sync"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
)

// Readers keeps catalog readers open between the calls of a long-lived
// process (the MCP server). Starting DuckDB and binding the views costs
// more than a status query, so a reader is reused while HEAD still names
// its commit, and dropped (closed once its last call ends) when HEAD moves.
// Every call still takes the retention lock shared and pins HEAD first:
// garbage collection deletes only what HEAD no longer reaches and needs
// that lock exclusively, so a reused reader never reads a deleted file.
// One-shot CLI processes do not use it.
type Readers struct {
	mu     sync.Mutex
	open   map[string]*shared // workspace root + tables → reader
	closed bool
}

type shared struct {
	r     *catalog.Reader
	refs  int
	stale bool
}

// NewReaders returns an empty cache.
func NewReaders() *Readers { return &Readers{open: map[string]*shared{}} }

type readersKey struct{}

// WithReaders makes the sessions opened with ctx reuse p's readers.
func WithReaders(ctx context.Context, p *Readers) context.Context {
	return context.WithValue(ctx, readersKey{}, p)
}

func readersFrom(ctx context.Context) *Readers {
	p, _ := ctx.Value(readersKey{}).(*Readers)
	return p
}

// reader returns a reader on snap's commit for tables, and the function
// that ends this use of it.
func (p *Readers) reader(ctx context.Context, snap *corpus.Snapshot, tables []string) (*catalog.Reader, func(), error) {
	key := snap.Root + "\x00" + strings.Join(tables, ",")
	p.mu.Lock()
	if s := p.open[key]; s != nil && !p.closed {
		if s.r.Commit() == snap.Commit.CommitID {
			s.refs++
			p.mu.Unlock()
			return s.r, p.done(s), nil
		}
		s.stale = true
		delete(p.open, key)
		if s.refs == 0 {
			s.r.Close()
		}
	}
	p.mu.Unlock()
	r, err := catalog.Open(ctx, snap, catalog.Options{MaxRows: MaxLimit, Tables: tables})
	if err != nil {
		return nil, nil, err
	}
	s := &shared{r: r, refs: 1}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.open[key] != nil {
		s.stale = true // another call cached one first, or the cache is closed
	} else {
		p.open[key] = s
	}
	return r, p.done(s), nil
}

func (p *Readers) done(s *shared) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if s.refs--; s.refs == 0 && s.stale {
				s.r.Close()
			}
		})
	}
}

// Close closes every idle reader; readers still in use close when their
// calls end.
func (p *Readers) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for key, s := range p.open {
		s.stale = true
		delete(p.open, key)
		if s.refs == 0 {
			s.r.Close()
		}
	}
}
