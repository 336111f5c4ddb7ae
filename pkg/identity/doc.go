// Package identity records which environment and which source state produced
// a run, as content-addressed canonical JSON records.
//
// Runs are compared only when their identities say they are comparable, so a
// record lists what could not be observed (MissingFields) next to what was,
// and its id is the digest of both. A record with an unknown kernel can never
// share an id with one whose kernel is known: "unknown" is never taken for
// "equal". ObservedAt is left out of ids, so one state observed twice has one
// id. Collection never fails; it degrades to IdentityQuality "partial".
//
// Records never carry hostnames, user names, home paths, environment
// variable values or secrets. Collectors read fixed system files, child
// processes get a fixed minimal environment (see GitEnv and toolEnv) instead
// of the parent's, and paths are recorded relative to the project root.
package identity
