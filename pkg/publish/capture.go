package publish

import (
	"context"

	"github.com/flameox/flameox/pkg/capture"
)

// For adapts p to capture.PublishFunc, the shape the capture service's
// PublishQuarantining takes, so that the CLI and the MCP server publish a
// capture's or an import's runs the same way: one bad artifact quarantines
// its run, which is then published without evidence, and never keeps the
// run out of `runs list`.
func For(p *Publisher) capture.PublishFunc {
	return func(ctx context.Context, refs []capture.RunRevision) (string, error) {
		rs := make([]RunRef, len(refs))
		for i, r := range refs {
			rs[i] = RunRef{RunID: r.RunID, Revision: r.Revision}
		}
		res, err := p.PublishRuns(ctx, rs)
		if err != nil {
			return "", err
		}
		return res.CommitID, nil
	}
}
