package workload

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// ParametersUsage is the --parameters flag's help text, shared by flameox
// and fox-capture.
const ParametersUsage = "parameter values: KEY=VALUE, comma-separated or repeated, or a JSON object"

// ParseParameterArgs reads the values of --parameters flags into the map
// Render takes. Each argument is either a JSON object
// (`{"mode":"candidate","count":25}`; numbers stay json.Number) or
// KEY=VALUE pairs separated by commas (`mode=candidate,count=25`; values
// are text, split at the first '=', so a value may contain '=' but not ','
// — use the JSON form for that). An empty argument gives nothing. A key
// given twice, within one argument or across several, is refused, as is
// anything else that is not one of these forms: INVALID_ARGUMENTS naming
// the flag. Whether the names and values are declared is Render's check.
func ParseParameterArgs(args []string) (map[string]any, error) {
	out := map[string]any{}
	add := func(k string, v any) error {
		if _, dup := out[k]; dup {
			return badParameters("--parameters gives %q more than once", clip(k)).With("parameter", clip(k))
		}
		out[k] = v
		return nil
	}
	for _, arg := range args {
		s := strings.TrimSpace(arg)
		switch {
		case s == "":
		case strings.HasPrefix(s, "{"):
			if err := parseParameterObject(s, add); err != nil {
				return nil, err
			}
		default:
			for _, pair := range strings.Split(s, ",") {
				k, v, ok := strings.Cut(pair, "=")
				k = strings.TrimSpace(k)
				if !ok || k == "" {
					return nil, badParameters("--parameters: %q is not KEY=VALUE", clip(pair))
				}
				if err := add(k, v); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// parseParameterObject decodes one JSON object member by member, so that a
// repeated member is refused instead of silently taking the last value.
func parseParameterObject(s string, add func(string, any) error) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	notObject := func() error {
		return badParameters("--parameters %q is not a JSON object of parameter values", clip(s))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return notObject()
	}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return notObject()
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return notObject()
		}
		if err := add(key, v); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return notObject()
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badParameters("--parameters %q has data after the JSON object", clip(s))
	}
	return nil
}

func badParameters(format string, args ...any) *fault.Error {
	return fault.New(fault.InvalidArguments, format, args...).With("flag", "parameters").
		Fix("Pass --parameters KEY=VALUE[,KEY=VALUE] (repeatable) or --parameters '{\"KEY\":VALUE}'; `flameox workload show NAME` lists the parameters.")
}
