package fault

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

// A full file system (or an exhausted quota) is the environment's failure,
// not flameox's: wherever a write meets it — a durable write, artifact or
// Parquet staging, DuckDB's catalog file — the error that reaches the top
// says STORAGE_FULL and which directory to free, whatever code the call
// site wrapped it in. The mapping lives in As, so no call site has to know.

// storageErrnos are the errnos that mean "no room to write".
var storageErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT}

// quotedPath finds a quoted absolute path in a library's message, such as
// DuckDB's `Could not write file "/w/.diagnostics/catalog.duckdb": …`.
var quotedPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["'](/[^"']+)["']`) })

// quotesArtifact are the codes of errors about reading an artifact, whose
// library text may quote the artifact's own bytes: their text is never
// taken for a disk-full report (their errno still is).
var quotesArtifact = map[Code]bool{ArtifactParseFailed: true, ArtifactTooLarge: true, ArtifactIntegrityFailed: true}

// storageFull returns err as a STORAGE_FULL error when its chain holds
// ENOSPC or EDQUOT, or when a library error that lost the errno (DuckDB
// reports I/O failures as strings) carries the errno's text; otherwise nil.
// fe is the outermost *Error of the chain, or nil.
func storageFull(err error, fe *Error) *Error {
	dir, hit := "", false
	for _, n := range storageErrnos {
		if errors.Is(err, n) {
			hit = true
			break
		}
	}
	if hit {
		var pe *os.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			dir = filepath.Dir(pe.Path)
		case errors.As(err, &le):
			dir = filepath.Dir(le.New)
		}
	} else if fe == nil || !quotesArtifact[fe.Code] {
		walkLeaves(err, func(leaf error) {
			if hit {
				return
			}
			msg := strings.ToLower(leaf.Error())
			for _, n := range storageErrnos {
				if strings.Contains(msg, strings.ToLower(n.Error())) {
					hit = true
					if m := quotedPath().FindStringSubmatch(leaf.Error()); m != nil {
						dir = filepath.Dir(m[1])
					}
					return
				}
			}
		})
	}
	if !hit {
		return nil
	}
	what := err.Error()
	if fe != nil {
		what = fe.Message
	}
	sf := Wrap(StorageFull, nil, "out of storage space: %s", what).Retry()
	sf.cause = err
	if fe != nil {
		for k, v := range fe.Details {
			sf.Details[k] = v
		}
		if fe.Code != InternalError {
			sf.Details["reported_as"] = string(fe.Code)
		}
		sf.RunID = fe.RunID
	}
	where := "the file system that holds the workspace"
	if dir != "" {
		sf.Details["directory"] = dir
		where = dir
	}
	return sf.Fix("Free space in "+where+" (or raise its quota), then run the command again.",
		"Run 'flameox recover' afterwards to close any run the failure left unfinished.")
}

// walkLeaves calls fn on every error of err's tree that wraps nothing,
// except flameox's own errors: their text is flameox's, not a library's.
func walkLeaves(err error, fn func(error)) {
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if e != nil {
				walkLeaves(e, fn)
			}
		}
		return
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			walkLeaves(next, fn)
			return
		}
	}
	if _, ours := err.(*Error); !ours {
		fn(err)
	}
}

// readOnly returns err as CAPABILITY_UNAVAILABLE when a write met a
// read-only file system (EROFS, or a library's text for it, as DuckDB
// reports it): like a full disk it is the environment's, not a bug nor
// damage, and the same command works once the directory is writable. The
// call site's code is kept in details.reported_as. Otherwise nil.
func readOnly(err error, fe *Error) *Error {
	if fe != nil && fe.Code == CapabilityUnavailable {
		return nil // already said (As is idempotent)
	}
	dir, hit := "", errors.Is(err, syscall.EROFS)
	if hit {
		var pe *os.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			dir = filepath.Dir(pe.Path)
		case errors.As(err, &le):
			dir = filepath.Dir(le.New)
		}
	} else if fe == nil || !quotesArtifact[fe.Code] {
		walkLeaves(err, func(leaf error) {
			if !hit && strings.Contains(strings.ToLower(leaf.Error()), strings.ToLower(syscall.EROFS.Error())) {
				hit = true
				if m := quotedPath().FindStringSubmatch(leaf.Error()); m != nil {
					dir = filepath.Dir(m[1])
				}
			}
		})
	}
	if !hit {
		return nil
	}
	what := err.Error()
	if fe != nil {
		what = fe.Message
	}
	ro := Wrap(CapabilityUnavailable, nil, "read-only file system: %s", what)
	ro.cause = err
	if fe != nil {
		for k, v := range fe.Details {
			ro.Details[k] = v
		}
		if fe.Code != InternalError {
			ro.Details["reported_as"] = string(fe.Code)
		}
		ro.RunID = fe.RunID
	}
	where := "the file system that holds the workspace"
	if dir != "" {
		ro.Details["directory"] = dir
		where = dir
	}
	return ro.Fix("Make " + where + " writable (remount it read-write, or copy the workspace to a writable place), then run the command again; commands that only read work on a read-only workspace.")
}
