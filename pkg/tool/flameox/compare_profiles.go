package flameox

import (
	"io"

	"github.com/flameox/flameox/pkg/compare"
)

// renderProfileChanges prints a run-set comparison's top profile changes.
func renderProfileChanges(w io.Writer, pc *compare.ProfileChanges) {}

// renderProfileChangesMarkdown is renderProfileChanges for a
// pull-request comment.
func renderProfileChangesMarkdown(w io.Writer, pc *compare.ProfileChanges) {}
