// Package demo is threadwright's offline demo model: an agents.Completer that needs
// no network and no API key, so that `threadwright dev` can show the whole product
// (answers, tool calls, the built-in workflows with their buttons, reviews, stale
// marking and report) with canned but sensible content. It is labelled as a demo in
// everything it says, and its Completions report the model ModelName.
//
// The model reads nothing but the request, keeps no state and uses no randomness:
// the same request gets the same answer. It recognises a request by its shape and by
// the texts of package prompts' templates:
//
//   - one function forced by tool_choice: a workflow task of agents.WorkflowAgent or
//     the scope classifier. It calls the function with arguments valid for its JSON
//     schema: commit_artifact_options (as many options as minItems, labelled by the
//     label enum), commit_artifact_selection (the letter, ordinal, title or "none of
//     these" of the reply), commit_artifact_final_text (Write from the chosen option,
//     Revise the current text; the team's instructions are applied and quoted),
//     commit_evaluation (one result per criterion id), commit_final_docset (a short
//     summary) and classify_scope (always in scope). Any other forced function gets
//     an example value of its schema.
//   - tools with tool_choice "auto": agents.Executor. A question about the time or an
//     arithmetic expression calls current_time or calculate; the next request, with
//     the results, answers from them. Anything else gets a short canned reply that
//     says it is the demo model and suggests `/threadwright start product-brief`, in
//     Russian when the question is written in Cyrillic, else in English.
//   - no tools: agents.Summarizer (an extractive summary, one line per message) or
//     the executor's final answer after its step limit.
//
// The built-in workflows are recognised by their titles ("Product brief", "Grant
// proposal") and their artifacts by the ids in the workflow system prompt. The
// product brief is about one fictional product, a weekly meal-planning app for busy
// parents; the proposal about one fictional grant, the Millbrook Community Solar
// Pilot. Later artifacts refer to the options chosen for earlier ones. A custom
// workflow's artifacts get generic content built from their titles and
// descriptions.
//
// The content is in English whatever the conversation's language; only the chat
// replies speak Russian.
package demo
