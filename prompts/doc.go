// Package prompts holds threadwright's prompt templates, embedded in the binary.
//
// Every template is a text/template file under templates/ (executor_system.tmpl,
// final_answer.tmpl, scope_system.tmpl, scope_request.tmpl, scope_refusal.tmpl). Parse reads
// and parses them all once, at start-up, so a broken template stops the program before
// it serves anyone rather than failing in the middle of a turn. Templates run with
// Option("missingkey=error"): a map key a template needs but the data lacks is an
// error, not "<no value>".
//
// Each template has a name constant (ExecutorSystem, …) and a data type that documents
// the fields it reads (ExecutorSystemData, …). The agents package renders them; this
// package imports nothing of threadwright, so workflow authors can change the wording
// without touching Go.
//
// The built-in workflow definitions (YAML, DESIGN.md "Artifact workflows": proposal and
// product-brief) live under workflows/ and are embedded as Workflows; package
// conversation/workflow parses and validates them.
package prompts
