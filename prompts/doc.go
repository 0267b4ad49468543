// Package prompts holds threadwright's prompt templates, embedded in the binary.
//
// Every template is a text/template file under templates/: the executor's
// (executor_system, final_answer), the scope check's (scope_*), the workflow agent's
// (workflow_system, artifact_*, docset_summary, commit_reminder, recovery_plan), the
// summarizer's (summarize_*) and the planner's (planner_*). Parse reads and parses
// them all once, at start-up, so a broken template stops the program before
// it serves anyone rather than failing in the middle of a turn. Templates run with
// Option("missingkey=error"): a map key a template needs but the data lacks is an
// error, not "<no value>".
//
// Each template has a name constant (ExecutorSystem, …) and a data type that documents
// the fields it reads (ExecutorSystemData, …). The agents package renders them; this
// package imports nothing of threadwright, so workflow authors can change the wording
// without touching Go.
//
// The built-in workflow definitions (YAML, docs/architecture.md, "Workflow machine":
// proposal, product-brief and blog) live under workflows/ and are embedded as
// Workflows; package conversation/workflow parses and validates them.
package prompts
