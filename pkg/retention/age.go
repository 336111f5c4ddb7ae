package retention

import (
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// ParseAge reads an age as `gc purge --older-than` and `gc --min-age`
// take it: a number of days ("30d"), weeks ("2w"), or a Go duration
// ("36h", "90m", "0s"). time.ParseDuration has no days, which is the unit
// people keep trash in.
func ParseAge(s string) (time.Duration, error) {
	bad := fault.New(fault.InvalidArguments, "%q is not an age (like 30d, 2w, 36h or 0s)", s)
	if s == "" {
		return 0, bad
	}
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || !(v >= 0 && v <= 1e5) { // NaN fails both
				return 0, bad
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// FlagOptions turns the --min-age and --keep-commits flags (empty and -1
// for the configured policy) into plan options.
func FlagOptions(now time.Time, minAge string, keep int) (Options, error) {
	opt := Options{Now: now}
	if minAge != "" {
		d, err := ParseAge(minAge)
		if err != nil {
			return opt, err
		}
		opt.MinAge = &d
	}
	if keep < -1 {
		return opt, fault.New(fault.InvalidArguments, "--keep-commits must not be negative")
	}
	if keep >= 0 {
		opt.KeepCommits = &keep
	}
	return opt, nil
}
