// Package agentstest holds the fixtures the tests of package agents and of the
// packages beside it (agents/planner) share: a model server (testkit/openaitest) and a
// Client for it with test-sized backoffs, an Executor on a fixed clock with the
// built-in tools, an Executor with tools of every policy class, scripted responses,
// and checks of the requests the agents sent. It is used by tests only.
package agentstest
