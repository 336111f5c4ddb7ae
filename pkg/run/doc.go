// Package run keeps run manifests: one directory per run (a UUID) holding
// append-only numbered revisions, a current projection and a log.
//
// A run is one attempted execution or one import, and it is never edited to
// attach later work: each change is a new revision, checked against the
// three state machines (execution, capture, validation) and written with a
// compare-and-swap on its revision number, after which the projection
// (`manifest.json`) is replaced atomically. The revisions are the truth:
// readers take the projection when it is the newest revision and the
// newest revision otherwise (a crash can land between the two writes),
// and Repair rebuilds the projection and log from the revisions.
package run
