// Package textcut cuts text to a length without splitting a character: the one place
// where threadwright shortens a string, whether for Slack's bounds on a block, a
// label or a task, for a prompt's bounds on what the model reads, or for a log line.
//
// Lengths are in runes (what Slack and the prompts call characters), except Bytes
// and BytesMark, whose bound is in bytes. A cut never ends inside a UTF-8 sequence,
// so valid UTF-8 in gives valid UTF-8 out; invalid UTF-8 counts a byte as one rune,
// as ranging over a string does, and is kept as it is.
//
// The variants differ in what they add where they cut:
//
//   - Runes and Bytes cut, and add nothing (Index is where Runes cuts);
//   - Ellipsis ends a cut with "…", counted in the bound, after dropping the runes
//     its caller names (spaces, punctuation) from the end of what is kept;
//   - BytesMark ends a cut with the caller's mark (Truncated, for what a model or a
//     log reads), counted in the bound;
//   - AtBreak cuts after a line or a word when one is near the bound;
//   - Noted appends a note that says how much was left out, for a reader (a model)
//     that should know the text goes on.
//
// Each returns its input unchanged when it fits.
package textcut
