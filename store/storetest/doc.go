// Package storetest is the conformance suite of conversation.Store: one set of tests and
// benchmarks that every implementation (store/sqlite, store/postgres) runs against
// itself, so the backends cannot drift apart (docs/architecture.md, "Persistence").
//
// An implementation's external test package calls Run from a Test function and
// BenchSaveLoad, BenchLeasedTurn and BenchComparison from Benchmark functions, passing
// a function that opens a new, empty store and closes it in the test's Cleanup:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) conversation.Store { return mustOpen(t) })
//	}
//
// RunKnowledge and BenchKnowledgeSearch do the same for conversation.Knowledge, which
// both backends' stores implement as well: ingest, replace, delete, the listing of
// sources, and search (ranking, Unicode, query syntax that must not be interpreted,
// limits), and the latency of a search among 10,000 chunks (p50 and p99).
//
// RunReplicas runs the tests of several stores on one database (a backend passes a
// function that opens another store on the database of its test): races of Acquire
// (and the winner's Begin of an input another store enqueued), and the Release of a
// lease against an Enqueue and Acquire on another store, which must never leave an
// input pending with nobody to run it.
// DeleteIdleCascades and MigrationsDown look into the database itself, through a
// connection the backend opens. Opened closes a store, or another connection, when
// the test ends.
//
// Each Run function is a table of named cases (suite), one function each, grouped in
// files by what they test (conversation.go, input.go, lease.go, heartbeat.go, …) over
// the fixtures of fixtures.go.
//
// The benchmarks measure and report; they never assert timings.
package storetest
