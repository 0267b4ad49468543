// Package planner holds the second strategy of the assistant pipeline and the choice
// between the two (docs/architecture.md, "Assistant pipeline"; docs/tools.md, "Strategies").
//
// The Planner answers a deep question in phases: it understands the request, plans
// dependent tasks, runs each task as one turn of the ReAct executor of package
// agents (Executor.ExecuteTask: a task cannot stop for a person's confirmation), in
// parallel where the plan allows, reflects on the results, and writes the answer.
// Each phase saves its work by calling a forced commit function (agents.CommitLoop).
// Its tasks are shown as a plan of thinking steps (tasks.go).
//
// The Router picks the strategy of each request, "react" or "planner", by the
// deployment's or the channel's setting (STRATEGY, STRATEGY_CHANNELS), or, in "auto",
// by asking the small model. Both implement conversation.Executor.
package planner
