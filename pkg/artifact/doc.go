// Package artifact is the content-addressed store of native artifacts: the
// exact bytes a collector wrote, kept once per content under
// `artifacts/sha256/ab/<hex>/payload.<ext>` with an `artifact.json` of
// content facts only (id, length, payload name, hash time).
//
// What an artifact *is* (kind, media type, role, producer, sensitivity)
// belongs to a registration on a run, not to the object: identical bytes
// captured by two runs are stored once and registered twice, and the
// effective sensitivity is the maximum over registrations and format floors.
//
// Imports are hostile-input safe: the source is opened without following
// symlinks, must be a regular file with one link, is streamed into staging
// under a byte budget while being hashed, and its identity and size are
// checked again after the copy. Placement into the store is atomic (a
// directory rename), so a crash leaves either no object or a whole one.
package artifact
