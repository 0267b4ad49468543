package planner_test

import "github.com/threadwright/threadwright/agents/internal/agentstest"

// The fixtures of the executor the planner's tasks run on, shared with package
// agents' tests (package agents/internal/agentstest), by the names the tests use.
var (
	testLogger     = agentstest.Logger
	MustServer     = agentstest.MustServer
	newClient      = agentstest.NewClient
	newExecutor    = agentstest.NewExecutor
	prompt         = agentstest.Prompt
	commit         = agentstest.Commit
	text           = agentstest.Text
	checkRequest   = agentstest.CheckRequest
	contains       = agentstest.Contains
	lacks          = agentstest.Lacks
	policyExecutor = agentstest.PolicyExecutor
)

type statuses = agentstest.Statuses
