package compare

import (
	"context"

	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// ProfileChanges are the top frame changes between two run sets' profiles.
type ProfileChanges struct{}

// profileChanges sets c.ProfileChanges when both sides carry profiles.
func (c *Comparison) profileChanges(ctx context.Context, ws *workspace.Workspace, base, cand *query.SetEvidence) error {
	return nil
}
