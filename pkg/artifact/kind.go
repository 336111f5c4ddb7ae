package artifact

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// Kind says what an artifact is evidence of. Kinds are a closed set so that
// extractors and analyses can rely on them.
type Kind string

const (
	KindSampleProfile  Kind = "sample_profile"     // pprof, perf.data, perf script, speedscope, collapsed stacks
	KindBenchmark      Kind = "benchmark_samples"  // go test -bench output, pyperf JSON, hyperfine JSON
	KindMemoryProfile  Kind = "memory_profile"     // memray, massif, heaptrack, Go heap profiles
	KindTrace          Kind = "execution_trace"    // Chrome/Kineto/Perfetto traces
	KindCoverage       Kind = "execution_coverage" // coverage.py data or JSON, Go coverprofile
	KindTestEvents     Kind = "test_events"        // go test -json, pytest events
	KindProcessOutput  Kind = "process_output"     // a child's stdout or stderr
	KindObservations   Kind = "semantic_observations"
	KindCoreDump       Kind = "core_dump"
	KindSourceSnapshot Kind = "source_snapshot"
	KindMetadata       Kind = "collector_metadata" // anything else a collector wrote
)

var kinds = []Kind{KindSampleProfile, KindBenchmark, KindMemoryProfile, KindTrace, KindCoverage,
	KindTestEvents, KindProcessOutput, KindObservations, KindCoreDump, KindSourceSnapshot, KindMetadata}

// Kinds lists every kind.
func Kinds() []Kind { return append([]Kind{}, kinds...) }

// ParseKind accepts a kind name (case-insensitive).
func ParseKind(s string) (Kind, error) {
	for _, k := range kinds {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	sort.Strings(names)
	return "", fault.New(fault.InvalidArguments, "unknown artifact kind %q", s).With("allowed", strings.Join(names, ","))
}

// Sensitivity orders how carefully an artifact must be handled.
type Sensitivity string

const (
	Normal    Sensitivity = "normal"
	Internal  Sensitivity = "internal"
	Sensitive Sensitivity = "sensitive"
)

func (s Sensitivity) rank() int {
	switch s {
	case Normal:
		return 0
	case Internal:
		return 1
	case Sensitive:
		return 2
	}
	return 3
}

// ParseSensitivity accepts normal, internal or sensitive.
func ParseSensitivity(s string) (Sensitivity, error) {
	switch v := Sensitivity(strings.ToLower(s)); v {
	case Normal, Internal, Sensitive:
		return v, nil
	}
	return "", fault.New(fault.InvalidArguments, "unknown sensitivity %q", s).With("allowed", "normal,internal,sensitive")
}

// Max returns the most sensitive of its arguments.
func Max(levels ...Sensitivity) Sensitivity {
	out := Normal
	for _, l := range levels {
		if l.rank() > out.rank() {
			out = l
		}
	}
	return out
}

// Floor is the least sensitivity a kind or content may have: core dumps and
// source snapshots hold program memory and source code, so they are always
// sensitive, whatever the caller says.
func Floor(k Kind, head []byte) (Sensitivity, string) {
	switch {
	case k == KindCoreDump:
		return Sensitive, "core dumps are always sensitive"
	case k == KindSourceSnapshot:
		return Sensitive, "source snapshots are always sensitive"
	case isELFCore(head):
		return Sensitive, "the file is an ELF core dump"
	}
	return Normal, ""
}

// isELFCore recognises an ELF file of type ET_CORE (4) by its header.
func isELFCore(h []byte) bool {
	if len(h) < 18 || !bytes.Equal(h[:4], []byte("\x7fELF")) {
		return false
	}
	var typ uint16
	switch h[5] { // EI_DATA
	case 1:
		typ = uint16(h[16]) | uint16(h[17])<<8
	case 2:
		typ = uint16(h[17]) | uint16(h[16])<<8
	default:
		return false
	}
	return typ == 4
}

// CheckFloor applies the floor: an explicit request below it is refused
// (SENSITIVE_ARTIFACT_REFUSED); an implicit default is raised to it.
func CheckFloor(k Kind, head []byte, requested Sensitivity, explicit bool) (Sensitivity, error) {
	floor, why := Floor(k, head)
	if requested.rank() >= floor.rank() {
		return requested, nil
	}
	if explicit {
		return "", fault.New(fault.SensitiveArtifactRefused, "refusing to register this artifact as %s: %s", requested, why).
			With("floor", string(floor)).Fix(fmt.Sprintf("Import it with --sensitivity %s.", floor))
	}
	return floor, nil
}
