// Package workspace finds, creates and opens a flameox workspace: the
// `.diagnostics/` directory at a project root that holds native artifacts,
// run manifests, the published corpus and the policy.
//
// Discovery walks up from the working directory to the nearest
// `.diagnostics` (like git does with `.git`); an explicit --workspace path
// is used as it is. Opening validates workspace.json and config.toml
// strictly: a damaged or unknown file is WORKSPACE_INVALID with the file
// named, never treated as empty; so is a symbolic link among the
// workspace's own directories, which would lead reads and writes outside
// it (docs/safety.md).
package workspace
