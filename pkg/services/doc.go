// Package services is the composition root: the one place that builds a
// workspace's services with their production parts, for the flameox
// porcelain, the fox-* plumbing tools and the MCP server alike.
//
// The publisher's wiring is in pkg/services/publishing, a package of its
// own so that fox-capture, which only captures, never links pkg/publish,
// the one package that advances corpus/HEAD.
//
// Each service has one constructor in its own package (capture.New,
// publish.New) that takes what it needs as options and knows nothing of
// the rest of the program. Which parts a running flameox gives them (the
// process broker for identity probes, the built-in adapters and their
// extractors, automatic compaction) is decided here and nowhere else, so
// `flameox capture run`, `fox-capture run | fox-publish` and the MCP tool
// execute_capture_plan capture and publish with the same parts. Tests
// that need other parts call the constructors themselves.
//
// A repository check (pkg/internal/repocheck, root_test.go) keeps it so:
// publish.Publisher and capture.Service values are built only by their
// constructors, and no tool package imports another.
package services
