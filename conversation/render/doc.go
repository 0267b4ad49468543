// Package render is how threadwright looks: pure functions from a conversation's
// state to what people read in Slack (docs/architecture.md, "Packages"). Every
// Block Kit card, notice, modal and verdict line is built here, in the language of
// the thread, from the catalogs of i18n.go (English and Russian), and returned as
// data (conversation.Card, conversation.Modal, text); the packages that run turns
// only send what these functions return.
//
//   - cards.go, artifact.go, live.go, stale.go, pipeline.go: a workflow run's
//     messages (Cards): the run's header, options, an artifact under review, the
//     stale list, status, the pipeline's progress message.
//   - verdict.go: an evaluation as a card shows it, the criterion checks' reasons
//     and the verdict line.
//   - assistant.go: the assistant's progress message and Stop, a tool call's
//     approval card, the out-of-scope reply.
//   - modal.go, commands.go, notices.go: modals and their fields, command help, and
//     the notices of limits.
//   - shorten.go: text cut to fit a Block Kit field without breaking a word or its
//     Markdown.
//
// Nothing here does I/O, reads a clock or keeps state.
package render
