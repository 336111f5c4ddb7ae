// Package testenv is how a test says that this machine lacks something it
// needs: a collector (py-spy, perf), a tool (bwrap, node, prlimit), the
// shared fixtures. Locally the test is skipped; under CI=true, where
// scripts/install-collectors.sh has installed everything, it fails, so a
// CI run never passes by skipping.
//
// Every such skip is also appended, one line per test, to the file named
// by $FLAMEOX_SKIP_LOG (when set): `make test` points it at a temporary
// file and scripts/test-summary.sh ends the run with one line per missing
// thing ("py-spy not installed: 3 tests skipped"), so a green local run
// cannot hide what CI will run. The line is "what<TAB>why<TAB>test name<TAB>package directory".
package testenv
