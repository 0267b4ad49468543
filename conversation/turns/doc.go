// Package turns is the durable turn runtime (docs/architecture.md, "Durable turns"):
// it takes inputs, keeps them, and runs one turn per input through a Handler, knowing
// that each input has a handler but not what the handler does.
//
// Its files stand in layers, each using only those below it:
//
//   - runtime.go: Runtime (New, Start, Wait, Shutdown) wires the parts.
//   - scheduler.go: one worker per thread, turn slots, the sweep that takes over a
//     dead replica's threads.
//   - burst.go: the double-texting policy of a thread's channel, and the burst of
//     a person's messages the merge policy answers as one input.
//   - run.go: one turn: its envelope (timeout, trace, metrics, give-up) and Run,
//     what a handler gets: the input, its posts (Out), and the one ending of every
//     turn that saves (Run.Finish) on a detached, bounded context.
//   - intake.go, spool.go, limits.go: Submit (promoted to Runtime) stores an input
//     before its envelope is acked (or spools it while the store is down), within the flood limits.
//   - leases.go: leases with fencing tokens, the heartbeat that renews them and
//     brings other replicas' Stop requests.
//   - outbox.go: tagged posts that a re-run of the input reuses ("Exactly one
//     answer").
//   - env.go, config.go, threads.go: the configuration, the threads this process
//     holds and what every part uses (store retries, status).
//   - redact.go, trace.go, metrics.go, retry.go: the scrubbing Messenger, spans,
//     turn outcomes, backoff.
package turns
