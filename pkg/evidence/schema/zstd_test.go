package schema

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// The page codec registered for zstd round-trips pages at the Writer's
// level and at others, and reports corrupt input as an error.
func TestZstdCodec(t *testing.T) {
	registerZstd()
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*zstdCodec); !ok {
		t.Fatalf("registered zstd codec is %T", c)
	}
	page := bytes.Repeat([]byte("sha256:0123456789abcdef frame "), 40000) // ~1.2 MB
	for _, level := range []int{fastest, 3} {
		enc := c.EncodeLevel(nil, page, level)
		if len(enc) >= len(page)/10 {
			t.Errorf("level %d: %d bytes from %d", level, len(enc), len(page))
		}
		dec, err := compress.Decode(c, nil, enc)
		if err != nil || !bytes.Equal(dec, page) {
			t.Fatalf("level %d: round trip failed: %v", level, err)
		}
	}
	if _, err := compress.Decode(c, nil, []byte("not zstd")); err == nil {
		t.Error("corrupt page decoded")
	}
}
