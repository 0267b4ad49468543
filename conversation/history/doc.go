// Package history is what a turn gives the model of its thread: the dialogue of its
// stored messages (Dialogue), each text clipped with a note of what was left out
// (Clip, ClipAll), and the older half folded into the conversation's summary when the
// history passes its bound (Compactor; docs/architecture.md, "Persistence").
package history
