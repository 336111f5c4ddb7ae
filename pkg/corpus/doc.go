// Package corpus reads and writes the published state of a workspace:
// `corpus/HEAD`, the immutable commit files it names, and the generation
// manifests those commits list.
//
// A commit is the whole inventory of published evidence at one moment: the
// exact list of generation manifests (and, through them, the exact Parquet
// files) a reader may see. Commits are content-addressed and verified on
// every read; HEAD is replaced atomically as the last step of a
// publication, so a reader that pins HEAD once sees one complete commit
// whatever happens concurrently. A missing or damaged HEAD or commit is
// WORKSPACE_INVALID (exit 5), never an empty corpus.
package corpus
