package trace

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

// pb is one protobuf field: a varint (int) or length-delimited ([]byte).
func pb(num uint64, v any) []byte {
	var b []byte
	switch x := v.(type) {
	case int:
		b = binary.AppendUvarint(binary.AppendUvarint(b, num<<3), uint64(x))
	case []byte:
		b = append(binary.AppendUvarint(binary.AppendUvarint(b, num<<3|2), uint64(len(x))), x...)
	}
	return b
}

// perfettoTrace is a small Trace of two TracePackets (timestamp,
// trusted_packet_sequence_id, a track_event slice begin and end).
var perfettoTrace = bytes.Join([][]byte{
	pb(1, bytes.Join([][]byte{pb(8, 1000), pb(10, 1), pb(11, append(pb(9, 1), pb(23, []byte("aten::mm"))...))}, nil)),
	pb(1, bytes.Join([][]byte{pb(8, 2000), pb(10, 1), pb(11, pb(9, 2))}, nil)),
}, nil)

// TestPerfetto: a Perfetto protobuf trace, plain or gzipped, is
// recognised by content and kept unread with the reason; the Chrome
// reader does not take it and the Perfetto one takes no Chrome trace.
func TestPerfetto(t *testing.T) {
	e := NewPerfettoExtractor()
	for name, data := range map[string][]byte{"plain": perfettoTrace, "gzip": gz(t, perfettoTrace)} {
		in := inputOf(t, writeFile(t, data))
		if !e.Accepts(in) || NewExtractor().Accepts(in) {
			t.Fatalf("%s: perfetto accepts %v, chrome accepts %v", name, e.Accepts(in), NewExtractor().Accepts(in))
		}
		x, err := e.Extract(context.Background(), in, newSink(t))
		if err != nil || len(x.Rows) != 0 || !contains(x.Limitations, "not read") {
			t.Fatalf("%s: %+v %v", name, x, err)
		}
	}
	if e.Accepts(inputOf(t, local(t)[0])) {
		t.Error("a Chrome trace taken for Perfetto")
	}
	if r := e.UnreadReason(); !strings.Contains(r, "Perfetto protobuf") || !strings.Contains(r, "downloads nothing") {
		t.Error(r)
	}
	if v, err := e.Viewer("/x.pftrace", KindTrace); err != nil || v.Tool != "Perfetto UI" {
		t.Fatalf("viewer %+v %v", v, err)
	}
}
