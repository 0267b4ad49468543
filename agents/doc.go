// Package agents runs threadwright's LLM agents on go-openai against any
// OpenAI-compatible Chat Completions API (docs/architecture.md, "Assistant pipeline"
// and "Models"). It implements the assistant pipeline's interfaces of package
// conversation:
//
//   - ScopeChecker (conversation.ScopeChecker): deny and allow rules, then the small
//     model classifies the request against the deployment's scope description by
//     calling a forced classify_scope function; out of scope gets a polite refusal.
//     ResultScope classifies the tool results of a turn the same way.
//   - Executor (conversation.Executor): a ReAct loop. The model picks tools from a
//     Registry; the tool calls of one response run in parallel, each under its own
//     timeout; a failure goes back to the model as the tool's result ("error: …");
//     the loop is bounded by MaxSteps (and an optional token budget) and ends with a
//     final answer written without tools.
//   - Synthesizer (conversation.Synthesizer): converts the executor's Markdown answer
//     to Slack mrkdwn, deterministically, its [n] markers matched to the sources of
//     the turn's tool results and the sources listed at its end (package
//     agents/mrkdwn; docs/tools.md, "Citations").
//
// and the artifact workflows' agent:
//
//   - WorkflowAgent (conversation.WorkflowAgent): proposes options, reads a person's
//     reply to them, writes, revises (the editor) and evaluates artifacts, and writes
//     the report's summary. The model writes plain text and saves it by calling one
//     forced commit function per task (commit_artifact_options, …; CommitLoop); a
//     model that does not is reminded a bounded number of times, then the task fails
//     with ErrNoCommit. For automated pipelines it writes one item of a foreach
//     artifact at a time (the task shows "Item <n> of <total>: <title>"), lets the
//     model report that a task cannot be done (conversation.TaskFailure), rewrites a
//     failing item's instructions before its last retry (Recover,
//     commit_recovery_plan), lets the model call an artifact's tools while it writes
//     (a bounded loop sharing the executor's tool running), and sends a request to
//     the model profile it names (Profile, from MODEL_PROFILES).
//
// Summarizer (conversation.Summarizer) folds older messages into a conversation's
// running summary with the small model, so prompts stay bounded as a thread grows.
//
// Underneath, Client makes every model call: streamed, reassembled into one Completion
// (content, tool calls by index, finish_reason, usage), with a per-attempt timeout and
// retries with exponential backoff and jitter on 5xx, timeouts and connection errors,
// and after the Retry-After of an HTTP 429, within a retry budget. A Client bounds the
// calls in flight to its endpoint with a limit that adapts to the endpoint's rate limit
// (halved by a burst of 429s, grown back by successes) and keeps its connections for
// reuse (package internal/httpclient). Prompts come from package prompts.
//
// Tools implement Tool (Run(ctx, args) (string, error)); ToolFunc adapts a function and
// InferTool derives a JSON schema from a Go struct. Recall (recall.go) reads back the
// tool results of the thread's earlier turns, which the Executor's system prompt lists
// by reference. The tools themselves live beside: package agents/toolbox
// (current_time, calculate, search_knowledge), agents/web (fetch_url, web_search) and
// agents/mcp (the tools of MCP servers).
//
// Instructions (instructions.go, EXECUTOR_INSTRUCTIONS) are a deployment's own text
// for the Executor's and the Planner's system prompts, by default and per channel.
//
// The tool policy (docs/tools.md, "Tool policy", policy.go): ToolPolicy narrows the tools a
// channel is offered (TOOL_POLICY); every result reaches the model inside a ToolOutput
// block labelled with its trust; a ToolSpec's ReadOnly, NeedsApproval and Untrusted
// decide which calls need the asker's confirmation, before which the Executor stops
// (Findings.Pending) and from which it resumes (Prompt.Resume).
//
// The Planner, the second strategy (understand → plan → execute dependent tasks in
// parallel → reflect → answer), and the Router, which picks a strategy per deployment,
// channel or question, are in package agents/planner; each task is a turn of the
// Executor (ExecuteTask). Package agents/function builds the forced functions every
// agent calls.
//
// Tests run the real go-openai client against testkit/openaitest, a scriptable fake
// OpenAI server.
package agents
