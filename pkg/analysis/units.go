package analysis

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Values are printed as `go tool pprof` prints them: its measurement
// package (internal to pprof, so ported here) scales a value of a known
// unit (bytes, time, GCU) to the unit a report chose and prints it with
// two decimals, trailing ".00" dropped; percentages follow its Percentage.
// TestValueColumnsMatchGoToolPprof compares the columns with pprof's.

type unit struct {
	name    string
	aliases []string
	factor  float64
}

type unitType struct {
	def   unit
	units []unit
}

var unitTypes = []unitType{{
	units: []unit{
		{"B", []string{"b", "byte"}, 1},
		{"kB", []string{"kb", "kbyte", "kilobyte"}, float64(1 << 10)},
		{"MB", []string{"mb", "mbyte", "megabyte"}, float64(1 << 20)},
		{"GB", []string{"gb", "gbyte", "gigabyte"}, float64(1 << 30)},
		{"TB", []string{"tb", "tbyte", "terabyte"}, float64(1 << 40)},
		{"PB", []string{"pb", "pbyte", "petabyte"}, float64(1 << 50)},
	},
	def: unit{"B", []string{"b", "byte"}, 1},
}, {
	units: []unit{
		{"ns", []string{"ns", "nanosecond"}, 1},
		{"us", []string{"μs", "us", "microsecond"}, 1e3},
		{"ms", []string{"ms", "millisecond"}, 1e6},
		{"s", []string{"s", "sec", "second"}, 1e9},
		{"hrs", []string{"hour", "hr"}, 3600e9},
	},
	def: unit{"s", []string{}, 1e9},
}, {
	units: []unit{
		{"n*GCU", []string{"nanogcu"}, 1e-9},
		{"u*GCU", []string{"microgcu"}, 1e-6},
		{"m*GCU", []string{"milligcu"}, 1e-3},
		{"GCU", []string{"gcu"}, 1},
		{"k*GCU", []string{"kilogcu"}, 1e3},
		{"M*GCU", []string{"megagcu"}, 1e6},
		{"G*GCU", []string{"gigagcu"}, 1e9},
		{"T*GCU", []string{"teragcu"}, 1e12},
		{"P*GCU", []string{"petagcu"}, 1e15},
	},
	def: unit{"GCU", []string{}, 1},
}}

func (ut unitType) sniff(u string) *unit {
	u = strings.ToLower(u)
	if utf8.RuneCountInString(u) > 2 {
		u = strings.TrimSuffix(u, "s")
	}
	for i := range ut.units {
		for _, a := range ut.units[i].aliases {
			if a == u {
				return &ut.units[i]
			}
		}
	}
	return nil
}

func (ut unitType) convert(value int64, from, to string) (float64, string, bool) {
	fu := ut.sniff(from)
	if fu == nil {
		return 0, "", false
	}
	v := float64(value) * fu.factor
	if to == "minimum" || to == "auto" {
		var f float64
		var name string
		for _, u := range ut.units {
			if u.factor >= f && v/u.factor >= 1 {
				f, name = u.factor, u.name
			}
		}
		if f == 0 {
			return v / ut.def.factor, ut.def.name, true
		}
		return v / f, name, true
	}
	tu := ut.sniff(to)
	if tu == nil {
		return v / ut.def.factor, ut.def.name, true
	}
	return v / tu.factor, tu.name, true
}

// scale converts value from one unit to another ("minimum"/"auto": the
// largest unit the value is at least 1 of), as pprof's measurement.Scale.
func scale(value int64, from, to string) (float64, string) {
	if value < 0 && -value > 0 {
		v, u := scale(-value, from, to)
		return -v, u
	}
	for _, ut := range unitTypes {
		if v, u, ok := ut.convert(value, from, to); ok {
			return v, u
		}
	}
	switch to {
	case "count", "sample", "unit", "minimum", "auto":
		return float64(value), ""
	}
	return float64(value), to
}

// scaledLabel is pprof's measurement.ScaledLabel.
func scaledLabel(value int64, from, to string) string {
	v, u := scale(value, from, to)
	sv := strings.TrimSuffix(fmt.Sprintf("%.2f", v), ".00")
	if sv == "0" || sv == "-0" {
		return "0"
	}
	return sv + u
}

// Percentage is pprof's: "  100%" near 100, two decimals from 1%, two
// significant digits below.
func Percentage(value, total int64) string {
	var ratio float64
	if total != 0 {
		ratio = math.Abs(float64(value)/float64(total)) * 100
	}
	switch {
	case math.Abs(ratio) >= 99.95 && math.Abs(ratio) <= 100.05:
		return "  100%"
	case math.Abs(ratio) >= 1.0:
		return fmt.Sprintf("%5.2f%%", ratio)
	default:
		return fmt.Sprintf("%5.2g%%", ratio)
	}
}

// ValueFormat prints values of one report in one unit, chosen as pprof's
// report chooses it: the unit of the smallest non-zero value shown (flat,
// else cum), or, when the total needs a larger unit and that value is
// under a hundredth of it, the unit of a hundred times that value.
type ValueFormat struct {
	from, to string
}

// NewValueFormat chooses the output unit for values of unit shown with
// the given smallest non-zero value and total.
func NewValueFormat(unit string, minValue, total int64) ValueFormat {
	if minValue == 0 {
		minValue = total
	}
	_, minUnit := scale(minValue, unit, "minimum")
	_, maxUnit := scale(total, unit, "minimum")
	out := minUnit
	if minUnit != maxUnit && minValue*100 < total {
		_, out = scale(100*minValue, unit, "minimum")
	}
	if out == "" {
		out = unit
	}
	return ValueFormat{from: unit, to: out}
}

// Format prints v in the chosen unit.
func (f ValueFormat) Format(v int64) string { return scaledLabel(v, f.from, f.to) }

// HumanDuration prints nanoseconds as pprof's "Duration:" line does.
func HumanDuration(ns int64) string { return scaledLabel(ns, "nanoseconds", "auto") }

// Scale converts value from one unit to another, as pprof does; the
// second result is the unit's name ("" for counts).
func Scale(value int64, from, to string) (float64, string) { return scale(value, from, to) }

// HotspotsFormat is the value format of a hotspots result: its sample
// type's unit printed in the result's OutputUnit.
func (r *HotspotsResult) HotspotsFormat() ValueFormat {
	if r.OutputUnit == "" {
		return NewValueFormat(r.SampleType.Unit, pageMin(r.Rows), r.SampleType.Total)
	}
	return ValueFormat{from: r.SampleType.Unit, to: r.OutputUnit}
}
