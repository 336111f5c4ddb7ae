package investigate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/publish"
)

// jsonFields maps the JSON names of t's fields to their types' kinds.
func jsonFields(t reflect.Type) map[string]reflect.Kind {
	out := map[string]reflect.Kind{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		out[name] = ft.Kind()
	}
	return out
}

// TestComparisonFieldsAgree: the publisher reads a comparison through its
// JSON (fox-publish links no DuckDB, so not compare.Comparison itself);
// every field it reads must be one compare.Comparison writes, under the
// same name and of the same kind, or a renamed field would be recorded as
// zero.
func TestComparisonFieldsAgree(t *testing.T) {
	for _, pair := range []struct{ read, written reflect.Type }{
		{reflect.TypeFor[publish.Comparison](), reflect.TypeFor[compare.Comparison]()},
		{reflect.TypeFor[publish.ComparisonSide](), reflect.TypeFor[compare.Side]()},
		{reflect.TypeFor[publish.ComparisonMismatch](), reflect.TypeFor[compare.Mismatch]()},
	} {
		written := jsonFields(pair.written)
		for name, kind := range jsonFields(pair.read) {
			if got, ok := written[name]; !ok || got != kind {
				t.Errorf("%s reads %q (%s); %s writes %v", pair.read, name, kind, pair.written, got)
			}
		}
	}
}
