package schema

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdCodec compresses Parquet pages with encoders sized for pages.
//
// Why not arrow-go's own zstd codec: it takes encoders from a sync.Pool
// with zstd's default 8 MiB window, so every encoder holds a 16 MiB
// history buffer and every garbage collection empties the pool, so a
// large profile's import allocated history buffers over and over and kept
// a share of its peak RSS in them (docs/performance.md). A page is at most about
// a megabyte, so a 1 MiB window loses nothing; the encoders here are kept
// in a small free list that garbage collection leaves alone. Decoding, and
// levels other than the fastest, stay with arrow-go's codec.
type zstdCodec struct {
	compress.Codec // arrow-go's, for decoding and other levels
	free           chan *zstd.Encoder
}

// fastest is the zstd level the Writer asks for (zstd.SpeedFastest).
const fastest = 1

var registerZstd = sync.OnceFunc(func() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // no zstd registered: the writer reports it when it needs one
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &zstdCodec{Codec: orig, free: make(chan *zstd.Encoder, 4)})
})

func (c *zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	if level != fastest {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	var enc *zstd.Encoder
	select {
	case enc = <-c.free:
	default:
		var err error
		enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20),
			zstd.WithLowerEncoderMem(true), zstd.WithZeroFrames(true), zstd.WithEncoderConcurrency(1),
			zstd.WithAllLitEntropyCompression(true))
		if err != nil { // fixed, valid options: cannot happen
			return c.Codec.EncodeLevel(dst, src, level)
		}
	}
	out := enc.EncodeAll(src, dst[:0])
	select {
	case c.free <- enc:
	default:
	}
	return out
}

// DecodeWithError keeps arrow-go's error-returning decode (compress.Decode
// looks for it).
func (c *zstdCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if ec, ok := c.Codec.(compress.ErrorCodec); ok {
		return ec.DecodeWithError(dst, src)
	}
	return c.Codec.Decode(dst, src), nil
}
