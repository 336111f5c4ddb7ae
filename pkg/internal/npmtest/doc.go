// Package npmtest tests the npm packages of contrib/npm as a user gets
// them: scripts/npm-pack.sh builds the binary and packs the tarballs, npm
// installs them from files into a temporary prefix with no registry, and
// the installed launcher runs the binary. It has only tests; docs/npm.md
// describes the packages.
package npmtest
