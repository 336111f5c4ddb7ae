// Package status answers "what is in this workspace and is it healthy?":
// identity, the published head, runs by state, stored objects by kind,
// abandoned staging, stale or quarantined runs, and warnings. It only reads;
// it never takes the write lock.
package status
