package profile

import (
	"fmt"
	"io"
)

// google/pprof's decoder (profile.ParseUncompressed) allocates as it goes
// and cannot be stopped: each string_table entry becomes a string header,
// each empty location or sample message a struct, each packed location id
// eight bytes, from as little as one or two bytes of input. So the
// decompressed protobuf is read through pprofScan first, which walks the
// wire format field by field as the bytes arrive and counts what the
// decoder will allocate, failing at the first count over its limit; only
// input within every limit reaches the decoder.
//
// The walk is hand-rolled rather than built on protowire because it must
// accept exactly the grammar pprof's decoder accepts, no less: a field the
// walk refused but the decoder read would be allocated uncounted. pprof's
// varints take up to ten bytes with no overflow check, field number 0 is
// skipped rather than refused, and wire types 3 and 4 (groups) are errors;
// protowire's Consume* functions differ on all three. Where the walk finds
// input the decoder would also refuse, it stops with the decoder's
// verdict ("not a valid pprof protobuf").

// Field numbers of profile.proto that the decoder allocates for.
const (
	pbSampleType = 1  // Profile.sample_type (ValueType)
	pbSample     = 2  // Profile.sample
	pbMapping    = 3  // Profile.mapping
	pbLocation   = 4  // Profile.location
	pbFunction   = 5  // Profile.function
	pbString     = 6  // Profile.string_table
	pbPeriodType = 11 // Profile.period_type (a new ValueType each time)
	pbComment    = 13 // Profile.comment (repeated int64)

	pbSampleLocation = 1 // Sample.location_id (repeated uint64)
	pbSampleValue    = 2 // Sample.value (repeated int64)
	pbSampleLabel    = 3 // Sample.label
	pbLocationLine   = 4 // Location.line
)

type pprofScan struct {
	strings, stringBytes, sampleTypes, samples, mappings, locations, functions counter
	labels, frames                                                             counter
	depth                                                                      int64 // limit on one sample's location ids
	lim                                                                        Limits
	// part is how far partialSample got in the sample starting at
	// part.at, so that each new chunk of a long sample is read once.
	part struct {
		at                  int64 // input offset of the sample's payload; -1 for none
		off                 int   // payload bytes in complete fields
		ids, values, labels int64 // counted in those fields
	}
}

func newPprofScan(l Limits) *pprofScan {
	s := &pprofScan{
		lim:         l,
		depth:       l.MaxStackDepth,
		strings:     newCounter(l.MaxStrings, LimitStrings, "pprof string table entries and comments"),
		stringBytes: newCounter(l.MaxStringBytes, LimitStringBytes, "bytes of pprof strings"),
		sampleTypes: newCounter(l.MaxSampleTypes, LimitSampleTypes, "pprof sample and period types"),
		samples:     newCounter(l.MaxSamples, LimitSamples, "pprof samples"),
		mappings:    newCounter(l.MaxMappings, LimitMappings, "pprof mappings"),
		locations:   newCounter(l.MaxLocations, LimitLocations, "pprof locations and location lines"),
		functions:   newCounter(l.MaxFunctions, LimitFunctions, "pprof functions"),
		labels:      newCounter(l.MaxLabels, LimitLabels, "pprof sample labels"),
		frames:      newCounter(l.MaxStackFrames, LimitStackFrames, "location ids and values in all pprof samples"),
	}
	s.part.at = -1
	return s
}

// readPprof reads the decompressed protobuf from r, counting its fields as
// they arrive (so a bomb stops after its first few MB), then decodes it.
func readPprof(r io.Reader, l Limits, hint int64) (*Profile, error) {
	s := newPprofScan(l)
	// + 1: the read that finds the end needs room, or grow would double.
	buf := make([]byte, 0, min(l.MaxDecompressedBytes+1, max(hint+1, 1<<20)))
	pos := 0
	for {
		buf = grow(buf, l.MaxDecompressedBytes)
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		for {
			adv, serr := s.field(buf[pos:], int64(pos), err == io.EOF)
			if serr != nil {
				return nil, serr
			}
			if adv == 0 {
				break
			}
			pos += adv
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return parsePprof(buf)
}

// pbVarint is pprof's decodeVarint: up to ten bytes, no overflow check.
// It returns n = 0 when b ends first and n < 0 for ten continuation bytes.
func pbVarint(b []byte) (uint64, int) {
	var u uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, 0
		}
		u |= uint64(b[i]&0x7f) << uint(7*i)
		if b[i] < 0x80 {
			return u, i + 1
		}
	}
	return 0, -1
}

// pbField reads one field's key and value from b: its number, wire type,
// payload (wire type 2) and size. size is 0 when b ends inside the field.
func pbField(b []byte) (field uint64, typ int, payload []byte, size int, err error) {
	key, n := pbVarint(b)
	if n <= 0 {
		if n < 0 {
			return 0, 0, nil, 0, fmt.Errorf("bad varint")
		}
		return 0, 0, nil, 0, nil
	}
	field, typ = key>>3, int(key&7)
	rest := b[n:]
	switch typ {
	case 0:
		_, m := pbVarint(rest)
		if m < 0 {
			return 0, 0, nil, 0, fmt.Errorf("bad varint")
		}
		if m == 0 {
			return field, typ, nil, 0, nil
		}
		return field, typ, nil, n + m, nil
	case 1, 5:
		w := 8
		if typ == 5 {
			w = 4
		}
		if len(rest) < w {
			return field, typ, nil, 0, nil
		}
		return field, typ, nil, n + w, nil
	case 2:
		l, m := pbVarint(rest)
		if m < 0 {
			return 0, 0, nil, 0, fmt.Errorf("bad varint")
		}
		if m == 0 || uint64(len(rest)-m) < l {
			return field, typ, nil, 0, nil
		}
		return field, typ, rest[m : m+int(l)], n + m + int(l), nil
	}
	return 0, 0, nil, 0, fmt.Errorf("unknown wire type: %d", typ)
}

// field counts the top-level field at the start of b (at offset off of the
// input) and returns its size, or 0 when b holds only part of it (at EOF,
// when eof is set, a part is a truncated input).
func (s *pprofScan) field(b []byte, off int64, eof bool) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	field, typ, payload, size, err := pbField(b)
	if err != nil {
		return 0, s.invalid(off, err.Error())
	}
	if size == 0 {
		// Check what is known of a field before all of it arrives: a
		// string's length, and the part of a sample read so far (a
		// single sample may hold a GiB of location ids).
		if typ == 2 && (field == pbString || field == pbSample) {
			if _, k := pbVarint(b); k > 0 {
				if l, n := pbVarint(b[k:]); n > 0 {
					if field == pbString {
						err = s.limitStringBytes(int64(l))
					} else {
						err = s.partialSample(b[k+n:], off+int64(k+n))
					}
					if err != nil {
						return 0, err
					}
				}
			}
		}
		if eof {
			return 0, s.invalid(off, "truncated field")
		}
		return 0, nil
	}
	switch field {
	case pbSampleType, pbPeriodType:
		err = s.sampleTypes.add(FormatPprof, 1)
	case pbSample:
		if err = s.samples.add(FormatPprof, 1); err == nil && typ == 2 {
			err = s.sample(payload, off)
		}
	case pbMapping:
		err = s.mappings.add(FormatPprof, 1)
	case pbLocation:
		if err = s.locations.add(FormatPprof, 1); err == nil && typ == 2 {
			err = s.location(payload, off)
		}
	case pbFunction:
		err = s.functions.add(FormatPprof, 1)
	case pbString:
		if err = s.strings.add(FormatPprof, 1); err == nil {
			err = s.limitStringBytes(int64(len(payload)))
		}
	case pbComment:
		err = s.strings.add(FormatPprof, repeated(typ, payload))
	}
	if err != nil {
		return 0, err
	}
	return size, nil
}

func (s *pprofScan) limitStringBytes(n int64) error {
	if s.stringBytes.n+n > s.stringBytes.max {
		return tooMany(FormatPprof, LimitStringBytes, s.stringBytes.max, s.stringBytes.n+n, s.stringBytes.what)
	}
	return nil
}

// repeated is how many entries a repeated scalar field adds: one when
// unpacked, and when packed at most the number of bytes that end a varint
// (the decoder reserves room for that many before decoding them).
func repeated(typ int, payload []byte) int64 {
	if typ != 2 {
		return 1
	}
	n := int64(0)
	for _, c := range payload {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// sample counts a Sample's location ids (its stack), values and labels.
func (s *pprofScan) sample(b []byte, off int64) error {
	var ids, values int64
	for len(b) > 0 {
		field, typ, payload, size, err := pbField(b)
		if err != nil {
			return s.invalid(off, err.Error())
		}
		if size == 0 {
			return s.invalid(off, "truncated sample")
		}
		switch field {
		case pbSampleLocation:
			k := repeated(typ, payload)
			ids += k
			if ids > s.depth {
				return tooMany(FormatPprof, LimitStackDepth, s.depth, ids, "location ids in one pprof sample")
			}
			if err := s.frames.add(FormatPprof, k); err != nil {
				return err
			}
		case pbSampleValue:
			k := repeated(typ, payload)
			values += k
			if values > s.lim.MaxSampleTypes {
				return tooMany(FormatPprof, LimitSampleTypes, s.lim.MaxSampleTypes, values, "values in one pprof sample")
			}
			if err := s.frames.add(FormatPprof, k); err != nil {
				return err
			}
		case pbSampleLabel:
			if err := s.labels.add(FormatPprof, 1); err != nil {
				return err
			}
		}
		b = b[size:]
	}
	return nil
}

// partialSample checks the start of a sample (its payload so far, b, at
// input offset at) that has not fully arrived: its complete fields, and
// the location ids or values of a packed field cut by the end of b.
// Complete fields are read once (part keeps the place between chunks);
// nothing is counted into the totals, as the whole sample is once it has
// arrived.
func (s *pprofScan) partialSample(b []byte, at int64) error {
	p := &s.part
	if p.at != at {
		p.at, p.off, p.ids, p.values, p.labels = at, 0, 0, 0, 0
	}
	check := func(ids, values, labels int64) error {
		switch {
		case ids > s.depth:
			return tooMany(FormatPprof, LimitStackDepth, s.depth, ids, "location ids in one pprof sample")
		case values > s.lim.MaxSampleTypes:
			return tooMany(FormatPprof, LimitSampleTypes, s.lim.MaxSampleTypes, values, "values in one pprof sample")
		case s.frames.n+ids+values > s.frames.max:
			return tooMany(FormatPprof, LimitStackFrames, s.frames.max, s.frames.n+ids+values, s.frames.what)
		case s.labels.n+labels > s.labels.max:
			return tooMany(FormatPprof, LimitLabels, s.labels.max, s.labels.n+labels, s.labels.what)
		}
		return nil
	}
	for p.off < len(b) {
		field, typ, payload, size, err := pbField(b[p.off:])
		if err != nil {
			return nil // the decoder's verdict comes when the sample is complete
		}
		if size == 0 {
			// The field's key and length, then as much as has arrived.
			var cut []byte
			if _, k := pbVarint(b[p.off:]); k > 0 && typ == 2 {
				if _, n := pbVarint(b[p.off+k:]); n > 0 {
					cut = b[p.off+k+n:]
				}
			}
			ids, values := p.ids, p.values
			switch field {
			case pbSampleLocation:
				ids += repeated(typ, cut)
			case pbSampleValue:
				values += repeated(typ, cut)
			}
			return check(ids, values, p.labels)
		}
		switch field {
		case pbSampleLocation:
			p.ids += repeated(typ, payload)
		case pbSampleValue:
			p.values += repeated(typ, payload)
		case pbSampleLabel:
			p.labels++
		}
		if err := check(p.ids, p.values, p.labels); err != nil {
			return err
		}
		p.off += size
	}
	return nil
}

// location counts a Location's lines (inlined frames).
func (s *pprofScan) location(b []byte, off int64) error {
	for len(b) > 0 {
		field, _, _, size, err := pbField(b)
		if err != nil {
			return s.invalid(off, err.Error())
		}
		if size == 0 {
			return s.invalid(off, "truncated location")
		}
		if field == pbLocationLine {
			if err := s.locations.add(FormatPprof, 1); err != nil {
				return err
			}
		}
		b = b[size:]
	}
	return nil
}

func (s *pprofScan) invalid(off int64, why string) error {
	return &ParseError{Format: FormatPprof, Offset: off, Reason: "not a valid pprof protobuf: " + why}
}
