package publish

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
)

// profileKinds must be extractable: a registration of these kinds that no
// extractor accepts, or that fails to extract, fails the publication
// (ARTIFACT_PARSE_FAILED) and nothing is published.
var profileKinds = map[string]bool{"sample_profile": true, "memory_profile": true}

// extract runs every extractor that accepts a registered artifact (decided
// by content) into the stage. Extraction reads the immutable stored
// payload, never the file the collector wrote.
func (p *Publisher) extract(ctx context.Context, m *run.Manifest, reg run.Registration, st *Stage) ([]corpus.Extraction, error) {
	if len(p.Extractors) == 0 {
		return nil, nil
	}
	path := filepath.Join(p.WS.Root, filepath.FromSlash(reg.PayloadPath))
	head, err := readHead(path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "read stored artifact %s", reg.ArtifactID).ForRun(m.RunID)
	}
	in := adapter.ExtractInput{RunID: m.RunID, ArtifactID: reg.ArtifactID, Kind: reg.Kind, Producer: reg.Producer, Path: path, Head: head,
		Limits: p.WS.Config.Limits}
	if m.Process != nil && m.Process.StartedAt != nil {
		in.Started = *m.Process.StartedAt
	}
	var out []corpus.Extraction
	for _, e := range p.Extractors {
		if !e.Accepts(in) {
			continue
		}
		x, err := e.Extract(ctx, in, st)
		if err != nil {
			fe := fault.As(err)
			if profileKinds[reg.Kind] || adapter.IsStrict(e) {
				return nil, fe.ForRun(m.RunID).With("artifact_id", reg.ArtifactID).With("extractor", e.Name())
			}
			continue // an optional extraction (e.g. benchmarks in stdout) that does not apply
		}
		out = append(out, corpus.Extraction{RunID: m.RunID, ArtifactID: reg.ArtifactID, Extractor: x.Extractor,
			Version: x.Version, Rows: x.Rows, Limitations: nonNilStrings(x.Limitations)})
	}
	if len(out) == 0 && profileKinds[reg.Kind] && m.RunType == run.TypeExecution {
		// A collector's native file flameox does not read itself (perf.data);
		// its evidence comes from a derived artifact (perf script text).
		return []corpus.Extraction{{RunID: m.RunID, ArtifactID: reg.ArtifactID, Extractor: "none", Version: "",
			Rows: map[string]int64{}, Limitations: []string{reg.DisplayName + " is kept as a native artifact and not extracted; its viewer reads it."}}}, nil
	}
	if len(out) == 0 && profileKinds[reg.Kind] {
		return nil, fault.New(fault.ArtifactParseFailed, "%s (%s) is registered as %s but is not a profile format flameox reads", reg.DisplayName, reg.ArtifactID, reg.Kind).
			ForRun(m.RunID).With("artifact_id", reg.ArtifactID).
			Fix("flameox reads pprof protobuf (gzipped or not) and the legacy formats `go tool pprof` reads, `perf script` text, speedscope JSON and collapsed stacks.")
	}
	return out, nil
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
