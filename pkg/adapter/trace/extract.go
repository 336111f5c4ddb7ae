package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity.
const (
	ExtractorName    = "trace"
	ExtractorVersion = "2"
)

// KindTrace is the artifact kind of Chrome traces.
const KindTrace = "execution_trace"

// sniffBytes bounds what Accepts reads (after gunzip) to decide.
const sniffBytes = 1 << 20

// Extractor turns a Chrome trace JSON file (torch.profiler's export
// included) into evidence rows.
type Extractor struct{}

// NewExtractor returns the trace extractor.
func NewExtractor() *Extractor { return &Extractor{} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Strict: a file Accepts recognises and Extract refuses is a broken trace
// (adapter.Strict).
func (*Extractor) Strict() bool { return true }

// ArtifactKind is the kind an import of a trace is registered as when the
// user names none (adapter.Kinded).
func (*Extractor) ArtifactKind() string { return KindTrace }

// Accepts decides by content: a JSON object with a traceEvents array among
// its keys, or an array whose first element is an object with a "ph" key,
// read from the first MiB of the file (gunzipped when it is gzip).
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	f, err := os.Open(in.Path)
	if err != nil {
		return sniff(in.Head)
	}
	defer f.Close()
	head, ok := sniffHead(f, func(prefix []byte) bool {
		t := bytes.TrimLeft(prefix, " \t\r\n\ufeff")
		// Not JSON; 0xEF may begin a byte order mark the prefix cuts.
		return len(t) > 0 && t[0] != '{' && t[0] != '[' && t[0] != 0xef
	})
	return ok && sniff(head)
}

// sniffHead returns up to sniffBytes of f's content, gunzipped when it is
// gzip, and whether it could be read. It decodes the first few KiB alone
// first and stops there when rejects says those bytes already rule the
// format out: most files imported are something else, and a gzipped
// profile's first MiB need not be inflated to see that.
func sniffHead(f io.Reader, rejects func(prefix []byte) bool) ([]byte, bool) {
	r, _, err := open(f)
	if err != nil {
		return nil, false
	}
	br := bufio.NewReaderSize(io.LimitReader(r, sniffBytes), 4<<10)
	if prefix, _ := br.Peek(4 << 10); rejects(prefix) {
		return nil, false
	}
	head, _ := io.ReadAll(br)
	return head, true
}

// sniff walks head's tokens to the traceEvents key or the first event's
// "ph"; a head that ends first is not accepted.
func sniff(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 || (head[0] != '{' && head[0] != '[') {
		return false
	}
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(head)))
	t, err := dec.Token()
	if err != nil {
		return false
	}
	if t == json.Delim('[') {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return false
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false
			}
			if k == "ph" {
				return true
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false
			}
		}
		return false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == "traceEvents" {
			t, err := dec.Token()
			return err == nil && t == json.Delim('[')
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// Extract reads the whole trace, builds the model, and only then writes
// its rows: a file refused for any reason leaves no table behind.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	m, err := load(in)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.write(ctx, in, sink)
}

// load opens, reads and builds in's payload, turning what goes wrong into
// ARTIFACT_TOO_LARGE or ARTIFACT_PARSE_FAILED with the remedy.
func load(in adapter.ExtractInput) (*model, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "open the trace")
	}
	defer f.Close()
	b, err := read(f, in.Limits)
	var m *model
	if err == nil {
		m, err = b.finish()
	}
	var le *limitError
	var pe *parseError
	switch {
	case errors.As(err, &le):
		return nil, tooLarge(in, le)
	case errors.As(err, &pe):
		return nil, fault.New(fault.ArtifactParseFailed, "trace %s: %s", in.ArtifactID, pe.Error()).
			With("artifact_id", in.ArtifactID).With("at", pe.at).
			Fix("Import the Chrome trace JSON (or .json.gz) the profiler wrote, unchanged: torch.profiler's export_chrome_trace or on_trace_ready=tensorboard_trace_handler, or a trace Perfetto or chrome://tracing opens.")
	case err != nil:
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "read the trace %s", in.ArtifactID)
	}
	return m, nil
}

// tooLarge is ARTIFACT_TOO_LARGE naming the limit.
func tooLarge(in adapter.ExtractInput, le *limitError) *fault.Error {
	key := "limits." + le.key
	return fault.New(fault.ArtifactTooLarge, "trace %s: %s", in.ArtifactID, le.Error()).
		With("artifact_id", in.ArtifactID).With("limit_key", key).With("limit", strconv.FormatInt(le.max, 10)).
		With("observed", strconv.FormatInt(le.observed, 10)).With("observed_is_lower_bound", "true").With("counted", le.what).
		Fix(fmt.Sprintf("If the trace is genuine, raise %s in .diagnostics/config.toml above %d (the count reached when reading stopped; the file may hold more), then import it again (`flameox import`). The limit bounds the memory reading may use.", key, le.observed))
}

// Viewer names the trace viewers: Perfetto UI in a browser (the file is
// opened there and read by the page itself; flameox uploads nothing) and
// chrome://tracing.
func (*Extractor) Viewer(path, kind string) (*adapter.Viewer, error) {
	return &adapter.Viewer{Tool: "Perfetto UI", Argv: []string{"xdg-open", "https://ui.perfetto.dev/"},
		Note: "Perfetto UI: open https://ui.perfetto.dev and choose \"Open trace file\" with " + path +
			" (the page reads the file in the browser; flameox uploads nothing), or open chrome://tracing in Chrome and Load it. Both read .json and .json.gz."}, nil
}

var _ adapter.Extractor = (*Extractor)(nil)
