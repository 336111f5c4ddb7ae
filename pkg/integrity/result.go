package integrity

import (
	"fmt"
	"sort"
	"strings"
)

// SchemaVersion of IntegrityResult and RepairPlan.
const SchemaVersion = 1

// Level is how deep a validation looks.
type Level string

// The levels, each including the one before.
const (
	// Quick reads HEAD, every commit of its history, the generation
	// manifests HEAD pins, the artifact manifests (artifact.json) and the
	// run manifests, and checks that every listed file exists with its
	// recorded size. It reads no payload and no Parquet file.
	Quick Level = "quick"
	// Standard adds every reference between runs, artifacts, generations,
	// analyses, run sets, comparisons and findings, each Parquet file's
	// footer (row count and schema against its manifest), and the
	// catalog's freshness.
	Standard Level = "standard"
	// Full adds re-hashing every artifact payload and every Parquet file
	// against the digests the corpus records.
	Full Level = "full"
)

// ParseLevel checks a --level value ("" is standard).
func ParseLevel(s string) (Level, bool) {
	switch Level(s) {
	case "":
		return Standard, true
	case Quick, Standard, Full:
		return Level(s), true
	}
	return "", false
}

func (l Level) rank() int {
	switch l {
	case Quick:
		return 0
	case Standard:
		return 1
	}
	return 2
}

// Severities. Only errors make a workspace invalid; a warning names
// something derived or set aside on purpose (a stale catalog, a
// quarantined artifact) that loses nothing.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Problem codes.
const (
	CodeHeadInvalid           = "HEAD_INVALID"
	CodeCommitInvalid         = "COMMIT_INVALID"
	CodeManifestMissing       = "GENERATION_MANIFEST_MISSING"
	CodeManifestChanged       = "GENERATION_MANIFEST_CHANGED"
	CodeManifestInvalid       = "GENERATION_MANIFEST_INVALID"
	CodeEvidenceMissing       = "EVIDENCE_FILE_MISSING"
	CodeEvidenceSize          = "EVIDENCE_FILE_SIZE_MISMATCH"
	CodeEvidenceUnreadable    = "EVIDENCE_FILE_UNREADABLE"
	CodeEvidenceDigest        = "EVIDENCE_FILE_DIGEST_MISMATCH"
	CodeArtifactInvalid       = "ARTIFACT_MANIFEST_INVALID"
	CodeArtifactMissing       = "ARTIFACT_PAYLOAD_MISSING"
	CodeArtifactSize          = "ARTIFACT_SIZE_MISMATCH"
	CodeArtifactDigest        = "ARTIFACT_DIGEST_MISMATCH"
	CodeArtifactQuarantined   = "ARTIFACT_QUARANTINED"
	CodeQuarantineInterrupted = "QUARANTINE_INTERRUPTED"
	CodeRunInvalid            = "RUN_INVALID"
	CodeRunProjectionBehind   = "RUN_PROJECTION_BEHIND"
	CodeDanglingReference     = "DANGLING_REFERENCE"
	CodeCatalogStale          = "CATALOG_STALE"
	CodeCatalogInvalid        = "CATALOG_INVALID"
	CodeReferencesUnreadable  = "REFERENCES_UNREADABLE"
)

// Ref names one record: its type (run, artifact, generation, commit,
// analysis, comparison, finding, run_set, trial, registration, table) and
// id, and how it relates to the problem's subject.
type Ref struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Relation string `json:"relation,omitempty"`
}

// ByteRange is a half-open range of bytes of a file, [Start, End).
type ByteRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Remediation says what to do about a problem: the command a person runs
// and, for an agent, the MCP tool (repair is CLI-only, so over MCP the
// tool only re-checks after a person repaired).
type Remediation struct {
	Command string `json:"command"`
	MCPTool string `json:"mcp_tool,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Problem is one thing found wrong: which file, which digest was expected
// and which found (or which bytes), the record it concerns and the records
// that depend on it.
type Problem struct {
	Severity  string     `json:"severity"`
	Code      string     `json:"code"`
	Message   string     `json:"message"`
	File      string     `json:"file,omitempty"`
	Subject   *Ref       `json:"subject,omitempty"`
	Expected  string     `json:"expected,omitempty"`
	Found     string     `json:"found,omitempty"`
	ByteRange *ByteRange `json:"byte_range,omitempty"`
	// Dependents are the records that rest on the subject (at most
	// maxDependents; DependentsTotal counts them all).
	Dependents      []Ref       `json:"dependents"`
	DependentsTotal int         `json:"dependents_total"`
	Remediation     Remediation `json:"remediation"`
}

// Checked counts what a validation looked at.
type Checked struct {
	Commits      int   `json:"commits"`
	Generations  int   `json:"generations"`
	ParquetFiles int   `json:"parquet_files"`
	Artifacts    int   `json:"artifacts"`
	Runs         int   `json:"runs"`
	References   int   `json:"references"`
	BytesHashed  int64 `json:"bytes_hashed"`
}

// IntegrityResult is the outcome of Validate: the `integrity_result`
// record of fox-gc, the JSON of `flameox validate --json` and the MCP
// result of validate_workspace.
type IntegrityResult struct {
	SchemaVersion int    `json:"schema_version"`
	Level         Level  `json:"level"`
	CommitID      string `json:"corpus_commit_id"`
	// Valid is true when no problem is an error.
	Valid    bool    `json:"valid"`
	Errors   int     `json:"errors"`
	Warnings int     `json:"warnings"`
	Checked  Checked `json:"checked"`
	// Problems are the first Options.MaxProblems problems, errors first;
	// Total counts them all and Truncated says some were left out.
	Problems  []Problem `json:"problems"`
	Total     int       `json:"total"`
	Truncated bool      `json:"truncated"`
}

// Summary is one line for a terminal or an MCP text.
func (r *IntegrityResult) Summary() string {
	at := "at commit " + short(r.CommitID)
	switch {
	case r.Valid && r.Warnings == 0:
		return fmt.Sprintf("%s validation %s: intact", r.Level, at)
	case r.Valid:
		return fmt.Sprintf("%s validation %s: intact, %d warning(s)", r.Level, at, r.Warnings)
	}
	return fmt.Sprintf("%s validation %s: %d error(s), %d warning(s)", r.Level, at, r.Errors, r.Warnings)
}

// short is the first 12 hex digits of a commit id.
func short(id string) string {
	if id == "" {
		return "(none: HEAD is unreadable)"
	}
	h := strings.TrimPrefix(id, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// collector gathers problems; it is not safe for concurrent use.
type collector struct {
	problems []Problem
}

func (c *collector) add(p Problem) {
	if p.Dependents == nil {
		p.Dependents = []Ref{}
	}
	c.problems = append(c.problems, p)
}

// finish sorts, counts and bounds the problems into r.
func (c *collector) finish(r *IntegrityResult, max int) {
	sort.SliceStable(c.problems, func(i, j int) bool {
		a, b := c.problems[i], c.problems[j]
		if a.Severity != b.Severity {
			return a.Severity == SeverityError
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Code < b.Code
	})
	for _, p := range c.problems {
		if p.Severity == SeverityError {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	r.Total = len(c.problems)
	r.Valid = r.Errors == 0
	r.Problems = c.problems
	if max > 0 && len(r.Problems) > max {
		r.Problems, r.Truncated = r.Problems[:max], true
	}
	if r.Problems == nil {
		r.Problems = []Problem{}
	}
}
