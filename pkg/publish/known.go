package publish

import (
	"os"
	"path/filepath"

	"github.com/flameox/flameox/pkg/digest"
)

// Environments and source states are content-addressed and change rarely
// between runs, yet every run names one: writing them again in every
// generation cost a capture two more Parquet files. A publication writes
// each such row once per corpus instead. Once HEAD names a generation that
// holds the row, an empty marker corpus/published/<table>/<id> records it,
// and later publications leave the row out.
//
// Rows never leave the corpus (compaction copies every row of the
// generations it replaces), so a marker stays true. A marker that is
// missing (a crash between HEAD and the marker, or a deleted cache) only
// costs a duplicate row, which the *_current views collapse. Anything that
// ever drops rows from the corpus must drop their markers first.

func (p *Publisher) markerPath(table, id string) (string, bool) {
	hex, err := digest.Hex(id)
	if err != nil {
		return "", false // not a content id: always written
	}
	return filepath.Join(p.WS.Root, "corpus", "published", table, hex), true
}

// published reports whether a row of table with this id is already in the
// corpus.
func (p *Publisher) published(table, id string) bool {
	path, ok := p.markerPath(table, id)
	if !ok {
		return false
	}
	_, err := os.Lstat(path)
	return err == nil
}

// markPublished records ids (table → ids) that HEAD now holds. Failures
// are ignored: a missing marker only means the row is written again.
func (p *Publisher) markPublished(ids map[string][]string) {
	for table, list := range ids {
		for _, id := range list {
			path, ok := p.markerPath(table, id)
			if !ok {
				continue
			}
			if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
				if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
					f.Close()
				}
			}
		}
	}
}
