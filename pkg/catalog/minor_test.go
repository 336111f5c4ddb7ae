package catalog

import (
	"context"
	"database/sql"
	"testing"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// TestOlderMinorFilesRead publishes a frames file as an older flameox
// wrote it (frames@1.0, no frame_index) beside a current one: the reader
// sees both, the older rows with frame_index null. A newer minor or
// another major is refused.
func TestOlderMinorFilesRead(t *testing.T) {
	f := newFixture(t)
	old := schema.Frames.At(0)
	g1 := f.file("g1", old, 0, [][]any{
		row(old, map[string]any{"frame_id": "sha256:a", "function": "alpha", "symbolization": "full"}),
		row(old, map[string]any{"frame_id": "sha256:b", "function": "beta", "symbolization": "full"}),
	})
	if g1.SchemaMinor != 0 {
		t.Fatalf("fixture wrote minor %d", g1.SchemaMinor)
	}
	f.publish("g1", []corpus.GenerationFile{g1}, nil)
	g2 := f.file("g2", schema.Frames, 0, [][]any{
		row(schema.Frames, map[string]any{"frame_id": "sha256:c", "function": "gamma", "symbolization": "full", "frame_index": int32(7)}),
	})
	f.publish("g2", []corpus.GenerationFile{g2}, nil)

	for _, opts := range []Options{{}, {Tables: []string{"frames"}}} {
		r := openHead(t, f.root, opts)
		got := map[string]any{}
		q := Query{Name: "test.frames", Version: "1", SQL: "SELECT frame_id, frame_index FROM frames"}
		must(t, r.Scan(context.Background(), q, nil, func(rows *sql.Rows) error {
			for rows.Next() {
				var id string
				var idx sql.NullInt32
				if err := rows.Scan(&id, &idx); err != nil {
					return err
				}
				got[id] = nil
				if idx.Valid {
					got[id] = idx.Int32
				}
			}
			return nil
		}))
		if len(got) != 3 || got["sha256:a"] != nil || got["sha256:b"] != nil || got["sha256:c"] != int32(7) {
			t.Fatalf("frames across minors: %v", got)
		}
		r.Close()
	}

	for _, bad := range []struct{ major, minor int }{{1, schema.Frames.Minor + 1}, {2, 0}, {0, 0}} {
		g := f.file("g3", schema.Frames, 0, nil)
		g.SchemaMajor, g.SchemaMinor = bad.major, bad.minor
		f2 := *f
		f2.refs = append([]corpus.GenerationRef(nil), f.refs...)
		f2.publish("g3", []corpus.GenerationFile{g}, nil)
		_, err := OpenHead(context.Background(), f.root, Options{})
		wantCode(t, err, fault.EvidenceSchemaMismatch)
	}
}
