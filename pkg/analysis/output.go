package analysis

import "github.com/flameox/flameox/pkg/workspace"

// OutputPath is the file a picture or export writes for -o out (relative
// to base): its directory must exist, and it must not be inside the
// workspace, where only publication writes. pkg/chart's pictures write
// under the same rule.
func OutputPath(ws *workspace.Workspace, out, base string) (string, error) {
	return outputPath(ws, out, base)
}
