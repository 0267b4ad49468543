// Package doclinks finds pointers in the repository's comments and documents that
// lead nowhere: a Markdown section that does not exist, a file or directory that is
// not there. Its test (TestRepository) runs it on the whole repository under
// `go test ./...`, so a doc that moves, or a heading that is renamed, fails the
// build at every pointer it leaves dangling.
//
// What it reads:
//   - every .go file's comments, and the string literals of non-test .go files
//     (struct tags included: a `desc:` tag may point at a section too);
//   - every .md file's prose, outside fenced code blocks.
//
// Directories named testdata, and those whose name starts with a dot (.git), are
// skipped.
//
// What it checks (see pointers.go):
//   - section pointers: a document, then the section's heading in double quotes,
//     `docs/workflows.md, "Permissions"`, also with several sections
//     (`"Persistence" and "Durable turns"`). The document is a .md path (from the
//     repository's root, or from the directory of the file that points), or README
//     (README.md) or architecture (docs/architecture.md). The section must be the
//     text of one of its ATX headings (`## Permissions`), ignoring case. A section
//     named without quotes after a document and a comma, inside parentheses, is
//     reported too;
//   - Markdown links and images, `[text](#anchor)`, `[text](docs/api.md#webhooks)`:
//     the file must exist (relative to the linking document) and the anchor must be
//     one GitHub makes for a heading of it (Anchor);
//   - repository paths in comments and Markdown prose, such as conversation/failure.go
//     or store/storetest: a word with a slash whose first element is a top-level
//     directory of the repository must name a file or directory. In Go comments, a
//     bare file name such as check.go must exist in the comment's own directory.
//
// The one form this repository uses for a pointer is `docs/<page>.md, "<Section>"`
// (or the path alone for a whole file).
package doclinks
