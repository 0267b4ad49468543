// Package configdoc renders threadwright's configuration reference,
// docs/configuration.md, from the struct tags of its settings, so that the
// descriptions in the code are the only ones there are. cmd/threadwright's
// TestConfigReference compares the rendering with the committed file, and
// `go generate ./cmd/threadwright` rewrites it.
//
// A setting is a struct field read by envconfig (github.com/kelseyhightower/envconfig)
// with three tags: `envconfig` (the variable's name), `default` (optional) and `desc`
// (what it does, in sentences; the same text `threadwright help` prints). A fourth
// tag, `group`, starts a group of the reference: the field that carries it and every
// field after it belong to that group, until the next `group`. On an embedded struct
// it applies to the struct's fields.
//
// In the rendered descriptions, the names of settings become code spans, and
// pointers to the docs written in the repository's one form, docs/tools.md, "Tool
// policy", become links.
package configdoc
