// Package evalset is the eval set threadwright ships (docs/eval.md, "The shipped
// set"): cases for each part of the original design, in YAML, with the knowledge
// documents they search (handbook/). `threadwright eval` without a path runs them;
// the tests of cmd/threadwright run them against the offline demo model and against
// the fake OpenAI server, recorded and replayed.
package evalset

import "embed"

// FS holds the cases (*.yaml) and the documents they load (handbook/*.md).
//
//go:embed *.yaml handbook
var FS embed.FS
