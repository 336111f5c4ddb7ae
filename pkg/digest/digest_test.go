package digest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := Canonical(v)
	if err != nil {
		t.Fatalf("Canonical(%#v): %v", v, err)
	}
	return string(b)
}

// TestRFC8785Numbers covers RFC 8785 Appendix B (IEEE-754 bit patterns and
// their ECMAScript serializations) plus the §3.2.2.3 examples.
func TestRFC8785Numbers(t *testing.T) {
	bits := []struct {
		ieee uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"}, // -0
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, c := range bits {
		if got := canon(t, math.Float64frombits(c.ieee)); got != c.want {
			t.Errorf("%016x: got %s, want %s", c.ieee, got, c.want)
		}
	}
	literals := []struct {
		v    any
		want string
	}{
		{1e21, "1e+21"},
		{1e20, "100000000000000000000"},
		{1e-7, "1e-7"},
		{0.000001, "0.000001"},
		{math.Copysign(0, -1), "0"},
		{123456789012345678901.0, "123456789012345680000"},
		{4.50, "4.5"},
		{2e-3, "0.002"},
		{1e-27, "1e-27"},
		{json.Number("1E30"), "1e+30"},
		{json.Number("333333333.33333329"), "333333333.3333333"},
		{int64(-42), "-42"},
		{uint8(7), "7"},
	}
	for _, c := range literals {
		if got := canon(t, c.v); got != c.want {
			t.Errorf("%v: got %s, want %s", c.v, got, c.want)
		}
	}
}

func TestNonFiniteNumbersFail(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), math.Inf(-1),
		map[string]any{"x": []float64{1, math.NaN()}}} {
		_, err := Canonical(v)
		if !fault.Is(err, fault.InvalidArguments) || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("Canonical(%v): want INVALID_ARGUMENTS naming NaN, got %v", v, err)
		}
		if _, err := Of(v); err == nil {
			t.Errorf("Of(%v) succeeded", v)
		}
	}
	if _, err := Canonical(make(chan int)); !fault.Is(err, fault.InvalidArguments) {
		t.Errorf("channel: got %v", err)
	}
}

// TestRFC8785KeyOrder is the §3.2.3 example: keys sort by UTF-16 code
// units, so U+1F600 (D83D DE00) sorts before U+FB33 although its code point
// is larger.
func TestRFC8785KeyOrder(t *testing.T) {
	m := map[string]string{
		"\u20ac":     "Euro Sign",
		"\r":         "Carriage Return",
		"\ufb33":     "Hebrew Letter Dalet With Dagesh",
		"1":          "One",
		"\U0001F600": "Emoji: Grinning Face",
		"\u0080":     "Control",
		"\u00f6":     "Latin Small Letter O With Diaeresis",
	}
	want := `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis",` +
		`"€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`
	if got := canon(t, m); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestRFC8785Strings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"€$\x0f\nA'B\"\\\\\"/", `"€$\u000f\nA'B\"\\\\\"/"`}, // RFC §3.2.2.2 example
		{"</script>&", `"</script>&"`},                       // no HTML escaping
		{"\b\f\t\r\x00\x1f\x7f", `"\b\f\t\r\u0000\u001f` + "\x7f" + `"`},
		{"\u2028\u2029", "\"\u2028\u2029\""}, // literal, unlike encoding/json
		{"😀", `"😀"`},
	}
	for _, c := range cases {
		if got := canon(t, c.in); got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
	}
	// The whole §3.2.2 example, from raw JSON.
	var v any
	in := `{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
	  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],` +
		`"string":"€$\u000f\nA'B\"\\\\\"/"}`
	if got := canon(t, v); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestDeterminism builds equal maps in different insertion orders and
// canonicalizes each many times; every result must be byte-identical.
func TestDeterminism(t *testing.T) {
	build := func(reverse bool) map[string]any {
		m := map[string]any{}
		for i := range 200 {
			k := i
			if reverse {
				k = 199 - i
			}
			m[fmt.Sprintf("k%03d\u00e9", k)] = map[string]any{"n": float64(k) / 3, "s": []any{k, "x"}}
		}
		return m
	}
	first := canon(t, build(false))
	for i := range 50 {
		if got := canon(t, build(i%2 == 1)); got != first {
			t.Fatalf("iteration %d differs", i)
		}
	}
	// A struct and a map with the same members are the same JSON value.
	type pair struct {
		Zeta  int    `json:"zeta"`
		Alpha string `json:"alpha"`
	}
	if a, b := canon(t, pair{1, "a"}), canon(t, map[string]any{"alpha": "a", "zeta": 1}); a != b {
		t.Errorf("struct %s != map %s", a, b)
	}
}
