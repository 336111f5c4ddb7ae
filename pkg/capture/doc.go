// Package capture turns outside evidence into runs: it imports existing
// artifacts (and, later, executes approved workloads through the broker),
// stages and registers native artifacts, and writes run manifests. It never
// publishes; fox-publish does that from the records capture emits.
package capture
