package flameox

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
)

// formatQuantity prints a measured value in its unit the way benchstat
// does: the unit tidied to its base (ns to sec, MB to B), then scaled with
// an SI or binary prefix to at least three significant digits (220.0µs/op,
// 1.173 MiB/s, 95.70 MiB). Zero, and a whole number in a unit that is
// neither a time nor bytes (allocs/op, count), print exactly: 3 allocs/op.
// The unit column of the catalog is the only source of the unit.
func formatQuantity(v float64, unit string) string {
	if f, ok := spelledUnits[unit]; ok { // pprof's sample units
		v, unit = v*f, "sec"
	}
	tv, tu := benchunit.Tidy(v, unit)
	switch tu {
	case "bytes":
		tu = "B"
	case "count", "code": // a count, an exit code: plain numbers
		tu = ""
	}
	cls := benchunit.ClassOf(tu)
	whole := tv == math.Trunc(tv) && math.Abs(tv) < 1e15
	if a := math.Abs(tv); math.IsNaN(tv) || math.IsInf(tv, 0) || a >= 1e16 || (a > 0 && a < 1e-12) {
		// Past the largest and smallest SI prefixes benchunit has.
		return withUnit(strconv.FormatFloat(tv, 'g', 4, 64), "", tu)
	}
	if tv == 0 || (whole && cls == benchunit.Decimal && !isTime(tu)) {
		return withUnit(strconv.FormatInt(int64(tv), 10), "", tu)
	}
	scaled := benchunit.Scale(tv, cls) // "220.0µ", "1.173Mi", "12.00"
	num := strings.TrimRightFunc(scaled, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	return withUnit(num, scaled[len(num):], tu)
}

// spelledUnits are time units spelled out, as pprof sample types name
// them, with their factor to seconds.
var spelledUnits = map[string]float64{"nanoseconds": 1e-9, "microseconds": 1e-6, "milliseconds": 1e-3, "seconds": 1}

func isTime(unit string) bool { return unit == "sec" || strings.HasPrefix(unit, "sec/") }

// withUnit joins a number, a scale prefix and a tidied unit: seconds print
// as s with no space ("220.0µs/op"), a unit of bytes after a space with its
// prefix ("1.173 MiB/s", "0 B/op"), a word unit after the prefixed number
// ("3 allocs/op", "1.200k items/s").
func withUnit(num, prefix, unit string) string {
	switch {
	case unit == "":
		return num + prefix
	case isTime(unit):
		return num + prefix + "s" + unit[len("sec"):]
	case unit == "B" || strings.HasPrefix(unit, "B/"):
		return num + " " + prefix + unit
	}
	return num + prefix + " " + unit
}
