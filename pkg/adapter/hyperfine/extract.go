package hyperfine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity.
const (
	ExtractorName    = "hyperfine"
	ExtractorVersion = "1"
)

// KindBenchmark is the artifact kind of hyperfine files.
const KindBenchmark = "benchmark_samples"

// sniffBytes bounds what Accepts reads to decide.
const sniffBytes = 1 << 20

// Extractor turns a `hyperfine --export-json` file into measurements.
type Extractor struct{}

// NewExtractor returns the hyperfine extractor.
func NewExtractor() *Extractor { return &Extractor{} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Accepts decides by content: a JSON object whose "results" array starts
// with an object holding a string "command" and an array "times", read
// from the first MiB of the file.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	head := in.Head
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] != '{' && t[0] != 0xef {
		return false // not a JSON object (0xEF may begin a byte order mark the head cuts): no read
	}
	if f, err := os.Open(in.Path); err == nil {
		b, err := io.ReadAll(io.LimitReader(f, sniffBytes))
		f.Close()
		if err == nil && len(b) >= len(head) {
			head = b
		}
	}
	return sniff(head)
}

// Strict says Accepts recognises the format by its own signature, so a
// file it accepts and then refuses is a broken hyperfine file: publication
// fails with the error instead of skipping the extractor (adapter.Strict).
func (*Extractor) Strict() bool { return true }

// ArtifactKind names the kind an import of a hyperfine file is
// registered as when the user names none (adapter.Kinded).
func (*Extractor) ArtifactKind() string { return KindBenchmark }

// sniff walks the tokens of head up to the first result's "command" and
// "times"; a head that ends before both are seen is not accepted.
func sniff(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	d := &decoder{dec: json.NewDecoder(bytes.NewReader(head)), lim: withDefaults(config.Limits{})}
	d.dec.UseNumber()
	if d.open('{', "", 1) != nil {
		return false
	}
	for d.dec.More() {
		key, err := d.key("", map[string]bool{})
		if err != nil {
			return false
		}
		if key != "results" {
			if d.skip("", 2) != nil {
				return false
			}
			continue
		}
		if d.open('[', "", 2) != nil || d.open('{', "", 3) != nil {
			return false
		}
		var command, times bool
		for d.dec.More() {
			key, err := d.key("", map[string]bool{})
			if err != nil {
				return false
			}
			t, err := d.token("")
			if err != nil {
				return false
			}
			switch key {
			case "command":
				_, command = t.(string)
			case "times":
				times = t == json.Delim('[')
			}
			if command && times {
				return true
			}
			if isOpen(t) && d.skipRest(3) != nil {
				return false
			}
		}
		return false
	}
	return false
}

func isOpen(t json.Token) bool { return t == json.Delim('{') || t == json.Delim('[') }

// skipRest drops the rest of an array or object whose opening token has
// been read.
func (d *decoder) skipRest(depth int64) error {
	for d.dec.More() {
		if err := d.skip("", depth+1); err != nil {
			return err
		}
	}
	_, err := d.token("")
	return err
}

// Extract reads the whole file, checks it, and only then writes its rows:
// a file refused for any reason leaves no table behind.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	x, err := read(in)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &rows{Measurements: adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}}
	if err := w.export(ctx, x); err != nil {
		return nil, err
	}
	return &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion,
		Rows: map[string]int64{"measurements": w.N}, Limitations: limitations(x)}, nil
}

// read opens and decodes in's payload, turning what goes wrong into
// ARTIFACT_TOO_LARGE or ARTIFACT_PARSE_FAILED with the remedy.
func read(in adapter.ExtractInput) (*export, error) {
	lim := withDefaults(in.Limits)
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "open the hyperfine file")
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > lim.MaxDecompressedBytes {
		return nil, tooLarge(in, &limitError{key: limitBytes, max: lim.MaxDecompressedBytes, observed: st.Size(), what: "bytes of JSON"})
	}
	// The file is read through a bound in case it grows while being read.
	r := io.LimitReader(f, lim.MaxDecompressedBytes+1)
	x, err := decode(r, lim)
	var le *limitError
	var pe *parseError
	switch {
	case errors.As(err, &le):
		return nil, tooLarge(in, le)
	case errors.As(err, &pe):
		return nil, fault.New(fault.ArtifactParseFailed, "hyperfine file %s: %s", in.ArtifactID, pe.Error()).
			With("artifact_id", in.ArtifactID).With("at", pe.at).With("offset", strconv.FormatInt(pe.offset, 10)).
			Fix("Import the file `hyperfine --export-json FILE` wrote, unchanged.")
	case err != nil:
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "read the hyperfine file %s", in.ArtifactID)
	}
	return x, nil
}

// tooLarge is ARTIFACT_TOO_LARGE naming the limit, as the profile
// extractor's does.
func tooLarge(in adapter.ExtractInput, le *limitError) *fault.Error {
	key := "limits." + le.key
	return fault.New(fault.ArtifactTooLarge, "hyperfine file %s: %s", in.ArtifactID, le.Error()).
		With("artifact_id", in.ArtifactID).With("limit_key", key).With("limit", strconv.FormatInt(le.max, 10)).
		With("observed", strconv.FormatInt(le.observed, 10)).With("observed_is_lower_bound", "true").With("counted", le.what).
		Fix(fmt.Sprintf("If the file is genuine, raise %s in .diagnostics/config.toml above %d (the count reached when decoding stopped; the file may hold more), then import it again (`flameox import`). The limit bounds the memory decoding may use.", key, le.observed))
}

var _ adapter.Extractor = (*Extractor)(nil)
