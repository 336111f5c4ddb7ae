package capture

// What the command lines share about captures: the import flags and the
// exit status of a recorded run.

import (
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/run"
	"github.com/spf13/pflag"
)

// Flags registers the flags of an import (`fox-capture import` and
// `flameox import`) on fs; the path and the requester are the caller's.
func (r *ImportRequest) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Kind, "kind", "", "artifact kind (sample_profile, benchmark_samples, ...; default collector_metadata)")
	fs.StringVar(&r.Sensitivity, "sensitivity", "", "normal, internal or sensitive (default: capture.default_sensitivity)")
	fs.StringVar(&r.MediaType, "media-type", "", "media type (default: guessed from content)")
	fs.StringVar(&r.Producer, "producer", "", "tool that produced the file")
	fs.StringVar(&r.ProducerVersion, "producer-version", "", "version of that tool")
}

// RunExit ends a capture whose run was recorded (and written) with the
// exit status of its outcome, the same for every tool (run.OutcomeRules,
// docs/exit-codes.md); nil when the run succeeded.
func RunExit(m *run.Manifest) error {
	if code, why := run.ExitStatus(m); code != 0 {
		return &cli.NegativeResult{Code: code, Message: why}
	}
	return nil
}
