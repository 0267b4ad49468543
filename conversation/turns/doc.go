// Package turns is the durable turn runtime (docs/architecture.md, "Durable turns"):
// it takes inputs, keeps them, and runs one turn per input through a Handler, knowing
// that each input has a handler but not what the handler does.
//
//   - submit.go, spool.go, limits.go: the intake. Submit stores an input before its
//     envelope is acked (or spools it while the store is down), deduplicated, within
//     the flood limits.
//   - scheduler.go: leases, one worker per thread, the heartbeat that renews every
//     lease, the sweep that takes over a dead replica's threads, and Stop.
//   - run.go, finish.go: one turn's envelope. Run is what a handler gets: the input,
//     the outbox of its posts, and the one ending of every turn that saves
//     (Run.Finish: reply, save, release) on a detached, bounded context.
//   - outbox.go: tagged posts that a re-run of the input reuses instead of posting
//     twice ("Exactly one answer").
//   - redact.go: the Messenger that scrubs configured secrets from everything sent.
//   - trace.go, metrics.go: spans and instruments of turns and store calls.
package turns
