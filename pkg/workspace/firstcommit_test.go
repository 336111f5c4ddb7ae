package workspace

import (
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
)

// firstCommit does what publish.FirstCommit does, for Init in this
// package's tests (pkg/publish imports pkg/workspace).
func firstCommit(root string, now time.Time) ([]string, error) {
	c, err := corpus.NewCommit(nil, nil, now)
	if err != nil {
		return nil, err
	}
	if err := corpus.WriteCommit(root, c); err != nil {
		return nil, err
	}
	if err := corpus.SetHead(root, c.CommitID); err != nil {
		return nil, err
	}
	return []string{"corpus/HEAD", "corpus/commits/" + strings.TrimPrefix(c.CommitID, "sha256:") + ".json"}, nil
}
