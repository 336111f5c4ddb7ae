package config

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/flameox/flameox/pkg/fault"
)

// DecodeStrict decodes TOML src into v and fails on anything the schema does
// not name: unknown tables and keys, and keys whose spelling differs only in
// case (BurntSushi/toml matches field names case-insensitively as a fallback
// and would otherwise accept `Threads = 3` for `threads`). file names the
// source in errors. Errors are WORKSPACE_INVALID with details kind=config
// (exit 2), the file, and the offending keys or line.
func DecodeStrict(src string, v any, file string) (toml.MetaData, error) {
	md, err := toml.Decode(src, v)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return md, Invalid(file, "%s: line %d: %s", file, pe.Position.Line, pe.Message).
				With("line", fmt.Sprint(pe.Position.Line))
		}
		return md, Invalid(file, "%s: %v", file, err)
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		unknown = append(unknown, k.String())
	}
	var s schema
	s.collect(reflect.TypeOf(v), nil)
	for _, k := range md.Keys() {
		if !s.allows(k) {
			unknown = append(unknown, k.String())
		}
	}
	if len(unknown) > 0 {
		unknown = dedupe(unknown)
		return md, Invalid(file, "%s: unknown key(s) %s", file, strings.Join(unknown, ", ")).
			With("keys", strings.Join(unknown, ",")).
			Fix("Remove or correct the named keys; keys are case-sensitive and documented in docs/configuration.md.")
	}
	return md, nil
}

// Invalid returns a configuration error for file (WORKSPACE_INVALID, exit 2).
func Invalid(file, format string, args ...any) *fault.Error {
	return fault.New(fault.WorkspaceInvalid, format, args...).With(fault.DetailKind, fault.KindConfig).With("file", file)
}

// schema is the set of exact key paths a Go type declares through `toml`
// tags. "*" stands for one user-chosen name (a key of a map of tables);
// open paths accept any keys below them (maps of scalars).
type schema struct {
	exact [][]string
	open  [][]string
}

func (s *schema) collect(t reflect.Type, prefix []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("toml"), ",")[0]
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		key := append(append([]string{}, prefix...), name)
		s.exact = append(s.exact, key)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && ft.String() != "time.Time":
			s.collect(ft, key)
		case ft.Kind() == reflect.Map:
			et := ft.Elem()
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				named := append(append([]string{}, key...), "*")
				s.exact = append(s.exact, named)
				s.collect(et, named)
			} else {
				s.open = append(s.open, key)
			}
		}
	}
}

func (s *schema) allows(k toml.Key) bool {
	for _, p := range s.exact {
		if match(p, k, false) {
			return true
		}
	}
	for _, p := range s.open {
		if match(p, k, true) {
			return true
		}
	}
	return false
}

// match compares a pattern with a key component-wise ("*" matches any one
// component). With prefix, the key may extend below the pattern.
func match(p []string, k toml.Key, prefix bool) bool {
	if len(k) < len(p) || (!prefix && len(k) != len(p)) || (prefix && len(k) == len(p)) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != k[i] {
			return false
		}
	}
	return true
}

func dedupe(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}
