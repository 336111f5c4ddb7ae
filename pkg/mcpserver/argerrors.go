package mcpserver

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/google/jsonschema-go/jsonschema"
)

// argumentFault turns a failed input-schema validation into a fault an
// agent can act on: the first offending argument by name, what it must be
// and what was sent, and how to call again. The validator's own text
// ("100000/1 is greater than 1000.000000", "<invalid reflect.Value>" for
// null) names neither the argument nor the fix; it is kept only when no
// rule below explains the failure.
func argumentFault(sch *jsonschema.Schema, props []string, args map[string]any, verr error) *fault.Error {
	allowed := strings.Join(props, ",")
	for _, name := range sch.Required {
		if _, ok := args[name]; !ok {
			p := sch.Properties[name]
			return fault.New(fault.InvalidArguments, "missing required argument %s", name).
				With("field", name).With("allowed_fields", allowed).
				Fix("Call again with " + name + " (" + expected(p) + ").")
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		p := sch.Properties[name]
		if p == nil {
			continue
		}
		if field, why := mismatch(name, p, args[name]); why != "" {
			fix := "Pass " + field + " as " + expected(p) + ", or omit it"
			if len(p.Default) > 0 {
				fix += " for the default " + string(p.Default)
			}
			if args[name] == nil {
				fix = "Omit " + field + " instead of sending null"
				if len(p.Default) > 0 {
					fix += " (the default is " + string(p.Default) + ")"
				}
			}
			return fault.New(fault.InvalidArguments, "argument %s %s", field, why).
				With("field", field).With("allowed_fields", allowed).Fix(fix + "; tools/list shows each tool's input schema.")
		}
	}
	return fault.New(fault.InvalidArguments, "invalid arguments: %s", strings.ReplaceAll(fmt.Sprint(verr), "<invalid reflect.Value>", "null")).
		With("allowed_fields", allowed).Fix("Check the arguments against the tool's input schema in tools/list.")
}

// mismatch says why v does not fit p ("" when it does, as far as these
// rules see), naming the offending element of an object or array.
func mismatch(field string, p *jsonschema.Schema, v any) (string, string) {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	kind := jsonKind(v)
	if len(types) > 0 && !typeAllows(types, v) {
		return field, "must be " + typeList(types) + ", not " + kind
	}
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				return field, ""
			}
		}
		return field, "must be one of " + enumList(p.Enum) + ", not " + quote(v)
	}
	switch x := v.(type) {
	case float64:
		if p.Minimum != nil && x < *p.Minimum {
			return field, "must be at least " + num(*p.Minimum) + ", not " + num(x)
		}
		if p.Maximum != nil && x > *p.Maximum {
			return field, "must be at most " + num(*p.Maximum) + ", not " + num(x)
		}
	case string:
		n := utf8.RuneCountInString(x)
		if p.MinLength != nil && n < *p.MinLength {
			return field, fmt.Sprintf("must be at least %d characters long", *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return field, fmt.Sprintf("must be at most %d characters long, not %d", *p.MaxLength, n)
		}
		if p.Pattern != "" {
			if re, err := regexp.Compile(p.Pattern); err == nil && !re.MatchString(x) {
				return field, "does not match the pattern " + p.Pattern
			}
		}
	case []any:
		if p.MaxItems != nil && len(x) > *p.MaxItems {
			return field, fmt.Sprintf("has %d items; at most %d are allowed", len(x), *p.MaxItems)
		}
		if p.MinItems != nil && len(x) < *p.MinItems {
			return field, fmt.Sprintf("has %d items; at least %d are needed", len(x), *p.MinItems)
		}
		if p.Items != nil {
			for i, e := range x {
				if f, why := mismatch(fmt.Sprintf("%s[%d]", field, i), p.Items, e); why != "" {
					return f, why
				}
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := p.Properties[k]
			if sub == nil {
				sub = p.AdditionalProperties
			}
			if sub == nil {
				continue
			}
			if f, why := mismatch(field+"."+k, sub, x[k]); why != "" {
				return f, why
			}
		}
	}
	return field, ""
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		if x == math.Trunc(x) {
			return "the integer " + num(x)
		}
		return "the number " + num(x)
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func typeAllows(types []string, v any) bool {
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case float64:
			if t == "number" || (t == "integer" && x == math.Trunc(x)) {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		}
	}
	return false
}

// expected describes what p accepts, for a remediation.
func expected(p *jsonschema.Schema) string {
	if p == nil {
		return "described in tools/list"
	}
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	var out string
	switch {
	case len(p.Enum) > 0:
		out = "one of " + enumList(p.Enum)
	case len(types) > 0:
		out = typeList(types)
	default:
		out = "described in tools/list"
	}
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		out += " from " + num(*p.Minimum) + " to " + num(*p.Maximum)
	case p.Minimum != nil:
		out += " of at least " + num(*p.Minimum)
	case p.Maximum != nil:
		out += " of at most " + num(*p.Maximum)
	}
	return out
}

func typeList(types []string) string {
	var out []string
	for _, t := range types {
		if t == "null" {
			continue
		}
		switch t {
		case "integer", "array", "object":
			out = append(out, "an "+t)
		default:
			out = append(out, "a "+t)
		}
	}
	if len(out) == 0 {
		return "null"
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = quote(e)
	}
	return strings.Join(parts, ", ")
}

func quote(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(clipText(x))
	case float64:
		return num(x)
	case nil:
		return "null"
	}
	return clipText(fmt.Sprint(v))
}

func clipText(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
