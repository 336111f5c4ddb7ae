// Package schema is the checked-in contract for flameox's evidence tables:
// one explicit, versioned Arrow schema per table, a fast Parquet writer for
// it, a typed empty "anchor" file and a validator for files read back.
//
// Why explicit schemas in code rather than inferring them from rows: the
// Parquet files under evidence/<table>/generation=<id>/ are immutable and are
// read by DuckDB long after the binary that wrote them has changed. Every
// view the catalog defines, every cursor and every comparison depends on
// column names, types and nullability staying what they were when the file
// was published. Keeping them here, versioned per table (Major.Minor, stored
// in the Arrow schema metadata keys flameox.table, flameox.schema.major and
// flameox.schema.minor), makes a change to a table a reviewed code change
// with a version bump, and lets readers reject a file that does not match
// (Validate) instead of silently returning wrong answers.
//
// The rules every table follows (SPEC §3):
//
//   - it starts with the publication columns schema_version,
//     evidence_generation_id, published_at, extractor_name and
//     extractor_version, which the Writer fills from Common;
//   - timestamps are timestamp[us, UTC] (DuckDB TIMESTAMPTZ); durations are
//     int64 nanoseconds in columns named *_ns (pqarrow cannot write
//     arrow.Duration); bytes and counts are integers; a measured value always
//     comes with an explicit unit;
//   - values that analyses filter on are plain columns, not map entries,
//     because DuckDB filters on MAP and LIST columns are several times slower;
//   - every string is valid UTF-8: the column handles replace invalid
//     sequences from artifacts with U+FFFD and keep the original bytes'
//     digest where a table asks for it (Column.Originals; see utf8.go);
//   - rows are never edited: re-extraction publishes a new generation whose
//     manifest supersedes the old one, so no column records "superseded";
//   - a minor version only appends optional columns (Column.Since), so a
//     file an older flameox published at an older minor stays readable:
//     Validate accepts it with that minor's columns (Table.At), the catalog's
//     views match its columns by name (the later ones read as null) and
//     compaction's Copy fills them with nulls. A new major, or a change to
//     an existing column, is what makes older files unreadable.
//
// Writer files use zstd at its fastest level (see zstdCodec), dictionary
// encoding on the string columns declared low-cardinality (Column.Dict) and
// on coded columns (Writer.DictStringCol, Writer.SetString: values a
// producer holds once and refers to by index) unless a coded column's
// first row group shows its values rarely repeat (coded.sparse: then it
// is written plain), no min/max statistics on digest columns
// (Column.Digest), and row groups of RowGroupRows rows (fewer when their
// strings, or the ids a coded list stands for, pass a byte budget), each
// encoded on a goroutine of its own while the caller fills the next, one
// at a time in the process, or on the caller's goroutine for a writer
// filled beside others (Writer.EncodeInline).
// Rows are appended through typed column handles obtained once per file
// (Writer.StringCol, Writer.Int64Col, ...), so the hot path does no
// reflection, no map lookups and no boxing; Writer.AppendRow is the slower
// convenience for small tables.
//
// This package imports arrow-go (and the zstd encoder arrow-go uses) only;
// it never opens DuckDB.
package schema
