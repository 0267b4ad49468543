// Package playground holds what `threadwright dev` runs instead of the real world: an
// emulated Slack with its web page (playground/emulator) and the offline demo model
// (playground/demo). Tests use both as doubles too; none of it is product code, and
// product packages never import it (docs/architecture.md, "Packages").
package playground
