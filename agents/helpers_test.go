package agents_test

import "github.com/threadwright/threadwright/agents/internal/agentstest"

// The fixtures these tests share with those of package agents/planner (package
// agents/internal/agentstest), by the names the tests use.
var (
	testLogger     = agentstest.Logger
	MustServer     = agentstest.MustServer
	newClient      = agentstest.NewClient
	fixedNow       = agentstest.FixedNow
	newExecutor    = agentstest.NewExecutor
	policyExecutor = agentstest.PolicyExecutor
	prompt         = agentstest.Prompt
	commit         = agentstest.Commit
	text           = agentstest.Text
	checkRequest   = agentstest.CheckRequest
	contains       = agentstest.Contains
	lacks          = agentstest.Lacks
)

type statuses = agentstest.Statuses
