// Package workload reads flameox.toml, the project's list of named workloads
// and experiments; renders a workload with chosen parameters into one exact
// command; and records and checks the human approval that lets it run.
//
// # Why argv only
//
// flameox executes code on behalf of an agent. The agent never supplies a
// command line, a shell string or a working directory: it names a workload
// declared in flameox.toml at the project root and picks values for the
// parameters that workload declares. A workload's argv is an array whose
// elements become exactly the child's argv elements; `{name}` tokens are
// replaced by the chosen value of a declared parameter and nothing else
// happens — no shell, no environment-variable, `~` or glob expansion, no
// word splitting. A value such as `; rm -rf /` is therefore one literal
// argument, and since every value must be one of the declared choices, the
// set of commands a workload can produce is finite and visible in the file.
//
// # Why approval binds the canonical digest
//
// Declaring is not enough: whoever can edit flameox.toml (an agent, a patch)
// could otherwise change what runs. `flameox workload approve NAME` (CLI
// only, never MCP) records in .diagnostics/approvals.json the definition id
// of the workload: the digest (RFC 8785 canonical JSON, pkg/digest) of its
// canonical form — name, argv and cwd templates, timeout, env, allow_env,
// options, parameters with their ordered choices or range bounds and
// default, and oracle. The canonical form is
// independent of TOML formatting and key order, so reformatting the file
// keeps the approval, while any change to what could run revokes it: capture
// of that workload is then EXECUTION_REFUSED (exit 9) and the error names
// what changed, diffed against the canonical form stored with the approval.
//
// # flameox.toml
//
// The file is strict (pkg/config.DecodeStrict): unknown or case-variant keys,
// wrong types and values out of range are WORKSPACE_INVALID (exit 2) naming
// the file and the key path. A project without flameox.toml has no
// workloads. `schema_version = 1` is required. Limits:
//
//   - file: at most 1 MiB; at most 1000 workloads and 1000 experiments.
//   - names of workloads and experiments: [a-z0-9][a-z0-9_-]*, at most 64
//     bytes; parameter names: [a-z_][a-z0-9_]*, at most 64 bytes.
//   - argv: 1..1024 templates, argv[0] not empty; every template (argv, cwd,
//     env values, oracle argv) at most 16 KiB; no NUL byte anywhere.
//   - cwd: default "."; project-relative, no ".." component, not absolute;
//     after rendering and cleaning it must still lie inside the project.
//   - timeout_seconds: default 300, in (0, 86400].
//   - env: at most 128 entries, names [A-Za-z_][A-Za-z0-9_]*, values are
//     templates. allow_env: at most 128 unique names of the same form.
//   - parameters: at most 128; each either 1..256 unique scalar choices of
//     one type (string, integer, float, boolean; integers mixed with floats
//     become floats; strings at most 1 KiB; the first choice is the
//     default), or a range {min = A, max = B} with an optional default
//     (else min): inclusive, finite, A <= B; integer bounds make an integer
//     range, any float bound a float range (integers in it at most 2^53 in
//     magnitude). A range table has no other key.
//   - description: optional text (at most 1 KiB) saying what the workload
//     measures; shown by `workload show`/`list` and MCP get_workload and
//     list_workloads. It is not part of the definition: editing it keeps
//     the approval.
//   - oracle: strength execution_check (default) | contract_check |
//     cross_treatment_equivalence; argv as for the workload.
//   - experiments: workload (required, declared); either variants (1..16
//     unique choices of treatment_parameter, which may be omitted when
//     exactly one parameter declares them all) with optional
//     scaling_parameter + scaling_values (1..32), or factors (1..8
//     parameters, 1..32 values each; treatment_parameter names one, required
//     with more than one factor); design randomized_complete_blocks (default)
//     | fixed_order; blocks 1..1000 (1); primary_metric (categorical_outcome);
//     polarity lower_is_better | higher_is_better | neutral (neutral);
//     estimand median_paired_log_ratio; practical_threshold [0, 10] (0);
//     confidence_level (0, 1) (0.95); random_seed >= 0 (0); max_trials
//     1..100000 (10000), and combinations × blocks may not exceed it.
//
// # Templates
//
// `{name}` renders a declared parameter's chosen value canonically: strings
// as they are, integers in decimal without exponent, floats with
// strconv 'g' -1, booleans true/false. `{{` and `}}` are literal braces.
// Anything else in braces (`{}`, `{a.b}`, `{a[0]}`, `{a!r}`, `{a:>3}`), a
// lone `}`, an unclosed `{` or an undeclared name is WORKSPACE_INVALID naming
// the workload, field and token. Values passed to Render must be declared
// choices, compared by canonical text (JSON 65536, 65536.0 and "65536" all
// select the integer choice 65536), or numbers inside a declared range
// (numbers, or text spelled as a JSON number: "25", "2.5e1"; an integer
// range refuses 2.5), else INVALID_ARGUMENTS naming the parameter, the value
// and the choices or range; missing parameters take the default. What
// renders is always the canonical text of the value (the declared choice;
// for a range, the number formatted as above), never the caller's spelling.
package workload

// FileName is the workload file at the project root.
const FileName = "flameox.toml"

// SchemaVersion is the flameox.toml format version this build reads.
const SchemaVersion = 1

// Limits documented in the package comment.
const (
	MaxFileBytes          = 1 << 20
	MaxWorkloads          = 1000
	MaxExperiments        = 1000
	MaxNameBytes          = 64
	MaxArgv               = 1024
	MaxTemplateBytes      = 16 << 10
	MaxEnv                = 128
	MaxParameters         = 128
	MaxChoices            = 256
	MaxChoiceBytes        = 1 << 10
	DefaultTimeoutSeconds = 300
	MaxTimeoutSeconds     = 86400
	MaxVariants           = 16
	MaxFactors            = 8
	MaxFactorValues       = 32
	MaxBlocks             = 1000
	DefaultMaxTrials      = 10000
	MaxTrialsLimit        = 100000
	MaxPracticalThreshold = 10
	MaxDescriptionBytes   = 1 << 10
)
