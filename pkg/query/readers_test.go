package query

import (
	"context"
	"database/sql"
	"testing"
)

// A cached reader is reused while HEAD stays, replaced when it moves, and
// a reader in use when HEAD moves keeps answering its own commit.
func TestReadersFollowHead(t *testing.T) {
	f := newFixture(t)
	f.importAndPublish(t, 2, "benchmark_samples")
	p := NewReaders()
	defer p.Close()
	ctx := WithReaders(context.Background(), p)

	s1, err := Open(ctx, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	s2, err := Open(ctx, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	if s2.R != s1.R {
		t.Fatal("same HEAD, but the reader was not reused")
	}
	old := s2.Commit()

	f.importAndPublish(t, 3, "benchmark_samples") // HEAD moves while s2 is open
	s3, err := Open(ctx, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if s3.R == s2.R || s3.Commit() == old {
		t.Fatal("HEAD moved, but the old reader was reused")
	}
	// s2 still answers its pinned commit until it closes.
	got, err := ListRuns(context.Background(), f.ws, ListRunsRequest{})
	if err != nil || got.Total != 5 {
		t.Fatalf("fresh session: %v %+v", err, got)
	}
	var n int64
	err = s2.R.Scan(context.Background(), qRunsCount, ListRunsRequest{}.filterArgs(), func(rows *sql.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("pinned reader after HEAD moved: %d runs, %v", n, err)
	}
	s2.Close()
	runs, err := ListRuns(ctx, f.ws, ListRunsRequest{})
	if err != nil || runs.Total != 5 || runs.CorpusCommitID != s3.Commit() {
		t.Fatalf("cached session: %v %+v", err, runs)
	}
}
