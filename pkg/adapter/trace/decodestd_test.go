package trace

// The reader flameox used before scan.go: encoding/json's Decoder, token
// by token, one event at a time into the reused rawEvent. It stays as
// the oracle FuzzScanMatchesDecoder compares the scanner with.

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

func decodeAllStd(r io.Reader, b *builder) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		b.h.format = "array"
		return eventsStd(dec, b, true)
	case json.Delim('{'):
		b.h.format = "object"
	default:
		return &parseError{msg: "not a Chrome trace: the JSON is neither an object with traceEvents nor an array of events"}
	}
	seen := map[string]bool{}
	var hasEvents bool
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		if seen[key] {
			return &parseError{at: key, msg: "the key appears twice"}
		}
		seen[key] = true
		switch key {
		case "traceEvents":
			t, err := dec.Token()
			if err != nil {
				return err
			}
			if t != json.Delim('[') {
				return &parseError{at: key, msg: "traceEvents is not an array"}
			}
			if err := eventsStd(dec, b, false); err != nil {
				return err
			}
			hasEvents = true
		default:
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if err := b.headerValue(key, v); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if !hasEvents {
		return &parseError{msg: "not a Chrome trace: the object has no traceEvents array"}
	}
	return trailingStd(dec)
}

// trailing refuses anything but white space after the document.
func trailingStd(dec *json.Decoder) error {
	_, err := dec.Token()
	var se *json.SyntaxError
	switch {
	case err == io.EOF:
		return nil
	case err == nil || errors.As(err, &se):
		return &parseError{msg: "data after the end of the trace"}
	}
	return err // the reader's: a truncated or corrupt gzip stream
}

// events reads the elements of an event array whose [ has been read.
// The array format may omit its closing ] (the format's own rule, for
// traces written by a process that died); an object-format array may not.
func eventsStd(dec *json.Decoder, b *builder, array bool) error {
	var ev rawEvent
	for i := 0; ; i++ {
		if !dec.More() {
			if _, err := dec.Token(); err != nil {
				if array && errors.Is(err, io.EOF) {
					b.h.unclosed = true
					return nil
				}
				return err
			}
			if array {
				return trailingStd(dec)
			}
			return nil
		}
		ev.reset()
		if err := dec.Decode(&ev); err != nil {
			if array && errors.Is(err, io.EOF) && i > 0 {
				b.h.unclosed = true
				return nil
			}
			at := "traceEvents[" + strconv.Itoa(i) + "]"
			var te *json.UnmarshalTypeError
			var se *json.SyntaxError
			switch {
			case errors.As(err, &te):
				return &parseError{at: at, msg: "field " + te.Field + " is a JSON " + te.Value + ", not a " + te.Type.String()}
			case errors.As(err, &se):
				return &parseError{at: at, msg: "malformed JSON: " + se.Error()}
			case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
				return err
			}
			var fe interface{ Unwrap() error }
			if !errors.As(err, &fe) {
				return &parseError{at: at, msg: strings.TrimPrefix(err.Error(), "json: ")}
			}
			return err
		}
		if int64(i) >= b.lim.MaxEvents {
			return &limitError{key: limitEvents, max: b.lim.MaxEvents, observed: int64(i) + 1, what: "events"}
		}
		if err := b.add(&ev, i); err != nil {
			return err
		}
	}
}
