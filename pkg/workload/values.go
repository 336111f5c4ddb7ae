package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Parameter types.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeFloat   = "float"
	TypeBoolean = "boolean"
)

// Parameter is one declared parameter. An enumerated parameter has
// ordered choices as canonical text (what templates render) and as typed
// values; the first is the default. A range parameter has inclusive
// bounds Min and Max (canonical text of integers or floats) instead of
// choices, and takes any number between them; its default is Default.
type Parameter struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Choices []string `json:"choices,omitempty"`
	Min     string   `json:"min,omitempty"`
	Max     string   `json:"max,omitempty"`
	Default string   `json:"default"`

	values []any // typed choices, in the order of Choices
	lo, hi any   // typed bounds of a range: int64 or float64
}

// Value returns choice i as a typed value: string, int64, float64 or bool.
func (p *Parameter) Value(i int) any { return p.values[i] }

// IsRange reports whether p is a range parameter (Min and Max set) rather
// than a list of choices.
func (p *Parameter) IsRange() bool { return p.Min != "" || p.Max != "" }

// Domain describes the values p accepts, for messages and listings:
// "[1, 50]" for a range, "a, b, c" for choices.
func (p *Parameter) Domain() string {
	if p.IsRange() {
		return "[" + p.Min + ", " + p.Max + "]"
	}
	return clip(strings.Join(p.Choices, ", "))
}

// buildParameter validates one `parameters` entry: an array of scalars of
// one type (integers mixed with floats become floats), unique by their
// canonical text, or a range table (buildRange).
func buildParameter(path, key, name string, raw any) (*Parameter, error) {
	if m, ok := raw.(map[string]any); ok {
		return buildRange(path, key, name, m)
	}
	arr, ok := raw.([]any)
	if !ok {
		return nil, invalid(path, key, "must be an array of 1..%d scalar choices or a range {min = …, max = …}, not %s", MaxChoices, typeName(raw))
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

// Range table keys.
const (
	rangeMin     = "min"
	rangeMax     = "max"
	rangeDefault = "default"
)

// buildRange validates a range table `{min = A, max = B}` with an optional
// `default` (else min). The bounds are inclusive and A <= B. All integers
// make an integer range; any float makes a float range, the integers in it
// converted exactly. Negative zero is zero.
func buildRange(path, key, name string, m map[string]any) (*Parameter, error) {
	for _, k := range sortedKeys(m) {
		if k != rangeMin && k != rangeMax && k != rangeDefault {
			return nil, invalid(path, key+"."+clip(k), "is not a range key (a range is {min = …, max = …} with an optional default)")
		}
	}
	for _, k := range []string{rangeMin, rangeMax} {
		if _, ok := m[k]; !ok {
			return nil, invalid(path, key, "is a range and needs both min and max (missing %s)", k)
		}
	}
	typ := TypeInteger
	for _, k := range []string{rangeMin, rangeMax, rangeDefault} {
		switch v, ok := m[k]; v.(type) {
		case int64:
		case float64:
			typ = TypeFloat
		default:
			if ok {
				return nil, invalid(path, key+"."+k, "must be an integer or a float, not %s", typeName(v))
			}
		}
	}
	num := func(k string) (any, error) {
		switch x := m[k].(type) {
		case int64:
			if typ == TypeFloat {
				if x < -1<<53 || x > 1<<53 {
					return nil, invalid(path, key+"."+k, "%d cannot be represented exactly as a float; write the bounds as integers", x)
				}
				return float64(x), nil
			}
			return x, nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, invalid(path, key+"."+k, "must be a finite number")
			}
			if x == 0 {
				x = 0 // -0 is 0
			}
			return x, nil
		}
		return nil, nil
	}
	lo, err := num(rangeMin)
	if err != nil {
		return nil, err
	}
	hi, err := num(rangeMax)
	if err != nil {
		return nil, err
	}
	if compare(lo, hi) > 0 {
		return nil, invalid(path, key, "has min %s greater than max %s", canonical(lo), canonical(hi))
	}
	def := lo
	if _, ok := m[rangeDefault]; ok {
		if def, err = num(rangeDefault); err != nil {
			return nil, err
		}
		if compare(def, lo) < 0 || compare(def, hi) > 0 {
			return nil, invalid(path, key+"."+rangeDefault, "%s is outside the range [%s, %s]", canonical(def), canonical(lo), canonical(hi))
		}
	}
	return &Parameter{Name: name, Type: typ, Min: canonical(lo), Max: canonical(hi), Default: canonical(def), lo: lo, hi: hi}, nil
}

// compare orders two numbers of one range type (both int64 or both float64).
func compare(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

// jsonNumberRE is the JSON number grammar: how a range value given as text
// (a key=value flag, an MCP argument) must be spelled.
var jsonNumberRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
})

// resolve returns the canonical text of the value v selects — a declared
// choice, or a number inside a range — or, when it selects none, why not,
// as a phrase that follows the value in a message.
func (p *Parameter) resolve(v any) (string, string) {
	if !p.IsRange() {
		if i := p.index(v); i >= 0 {
			return p.Choices[i], ""
		}
		return "", "is not a declared choice (choices: " + p.Domain() + ")"
	}
	// Numbers, as JSON decoding, TOML and Go callers give them, or text
	// spelled as a JSON number.
	var n any
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64, float64:
		n = x
	case string, json.Number:
		s := fmt.Sprint(x)
		if !jsonNumberRE().MatchString(s) {
			return "", "is not a number (range " + p.Domain() + ")"
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			n = i
		} else if f, err := strconv.ParseFloat(s, 64); err == nil {
			n = f
		} else {
			return "", "is not a finite number (range " + p.Domain() + ")"
		}
	default:
		return "", "is not a number (range " + p.Domain() + ")"
	}
	if f, ok := n.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return "", "is not a finite number (range " + p.Domain() + ")"
	}
	switch x := n.(type) {
	case int64:
		if p.Type == TypeFloat {
			if x < -1<<53 || x > 1<<53 {
				return "", "cannot be represented exactly as a float (range " + p.Domain() + ")"
			}
			n = float64(x)
		}
	case float64:
		if p.Type == TypeInteger {
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return "", "is not an integer (range " + p.Domain() + ")"
			}
			n = int64(x)
		} else if x == 0 {
			n = 0.0 // -0 is 0
		}
	}
	if compare(n, p.lo) < 0 || compare(n, p.hi) > 0 {
		return "", "is outside the range " + p.Domain()
	}
	return canonical(n), ""
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
