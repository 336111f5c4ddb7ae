// Package publish is the single writer of the published corpus: it turns
// runs (and, through extractors, their native artifacts) into Parquet rows,
// stages them as one generation, and commits that generation by atomically
// replacing corpus/HEAD. No other package advances HEAD, the first,
// empty commit of a workspace included (FirstCommit, which workspace.Init
// calls); pkg/internal/repocheck keeps it so.
//
// A publication is one generation: every table gets at most one file, with
// its sha256, size, row count and schema recorded in the generation
// manifest, and the new commit lists the previous inventory plus the new
// generation (minus any it supersedes). See Commit for the protocol and its
// crash guarantees.
package publish
