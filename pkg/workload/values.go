package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Parameter types.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeFloat   = "float"
	TypeBoolean = "boolean"
)

// Parameter is one declared parameter: its ordered choices as canonical
// text (what templates render) and as typed values. The first is the
// default.
type Parameter struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Choices []string `json:"choices"`
	Default string   `json:"default"`

	values []any // typed choices, in the order of Choices
}

// Value returns choice i as a typed value: string, int64, float64 or bool.
func (p *Parameter) Value(i int) any { return p.values[i] }

// buildParameter validates one `parameters` entry: an array of scalars of
// one type (integers mixed with floats become floats), unique by their
// canonical text.
func buildParameter(path, key, name string, raw any) (*Parameter, error) {
	arr, ok := raw.([]any)
	if !ok {
		return nil, invalid(path, key, "must be an array of 1..%d scalar choices, not %s", MaxChoices, typeName(raw))
	}
	if len(arr) == 0 || len(arr) > MaxChoices {
		return nil, invalid(path, key, "must declare 1..%d choices, not %d", MaxChoices, len(arr))
	}
	typ := ""
	for i, v := range arr {
		t := scalarType(v)
		switch {
		case t == "":
			return nil, invalid(path, fmt.Sprintf("%s[%d]", key, i), "must be a string, integer, float or boolean, not %s", typeName(v))
		case typ == "" || typ == t:
			typ = t
		case (typ == TypeInteger && t == TypeFloat) || (typ == TypeFloat && t == TypeInteger):
			typ = TypeFloat
		default:
			return nil, invalid(path, fmt.Sprintf("%s[%d]", key, i), "is a %s but earlier choices are %ss; choices of one parameter share one type", t, typ)
		}
	}
	p := &Parameter{Name: name, Type: typ, Choices: make([]string, 0, len(arr)), values: make([]any, 0, len(arr))}
	seen := map[string]int{}
	for i, v := range arr {
		ik := fmt.Sprintf("%s[%d]", key, i)
		if n, isInt := v.(int64); isInt && typ == TypeFloat {
			if math.Abs(float64(n)) > 1<<53 {
				return nil, invalid(path, ik, "%d cannot be represented exactly as a float; write all choices as integers", n)
			}
			v = float64(n)
		}
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, invalid(path, ik, "must be a finite number")
			}
		case string:
			if err := checkText(path, ik, x, MaxChoiceBytes); err != nil {
				return nil, err
			}
		}
		text := canonical(v)
		if j, dup := seen[text]; dup {
			return nil, invalid(path, ik, "repeats choice %q of %s[%d]", clip(text), key, j)
		}
		seen[text] = i
		p.Choices = append(p.Choices, text)
		p.values = append(p.values, v)
	}
	p.Default = p.Choices[0]
	return p, nil
}

// index returns the position of the declared choice v denotes, or -1.
func (p *Parameter) index(v any) int {
	text, ok := p.textOf(v)
	if !ok {
		return -1
	}
	for i, c := range p.Choices {
		if c == text {
			return i
		}
	}
	return -1
}

// textOf renders a caller-supplied value (string, bool, int, int64, float64
// or json.Number, as JSON decoding produces them) as canonical text of this
// parameter's type: JSON 65536 matches the TOML integer 65536, 0.5 matches
// 5e-1. A string is compared with the choices' text as it is, and a number
// or boolean given for a string parameter by its own canonical text. The
// match is unambiguous because choices are unique by text; whatever matched,
// the declared choice is what renders.
func (p *Parameter) textOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), p.Type == TypeBoolean || p.Type == TypeString
	case int:
		return p.textOf(int64(x))
	case int64:
		if p.Type == TypeFloat {
			return p.textOf(float64(x))
		}
		return strconv.FormatInt(x, 10), p.Type == TypeInteger || p.Type == TypeString
	case float64:
		integral := x == math.Trunc(x) && math.Abs(x) <= 1<<53
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
		case p.Type == TypeFloat:
			return canonical(x), true
		case integral && (p.Type == TypeInteger || p.Type == TypeString):
			return strconv.FormatInt(int64(x), 10), true
		case p.Type == TypeString:
			return canonical(x), true
		}
	case json.Number:
		if p.Type == TypeString {
			return x.String(), true
		}
		if n, err := x.Int64(); err == nil && p.Type == TypeInteger {
			return strconv.FormatInt(n, 10), true
		}
		if f, err := x.Float64(); err == nil {
			return p.textOf(f)
		}
	}
	return "", false
}

// canonical renders a validated scalar choice.
func canonical(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func scalarType(v any) string {
	switch v.(type) {
	case string:
		return TypeString
	case int64:
		return TypeInteger
	case float64:
		return TypeFloat
	case bool:
		return TypeBoolean
	}
	return ""
}

// typeName names a decoded TOML or JSON value's type for messages.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any, []map[string]any:
		return "a table"
	case time.Time:
		return "a datetime"
	case string:
		return "a string"
	case json.Number, float64, int64, int:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return fmt.Sprintf("a %T", x)
	}
}

// describe quotes a caller-supplied value for an error message.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(clip(s))
	}
	return clip(fmt.Sprint(v))
}
