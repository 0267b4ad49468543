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
//     Revise the current text; the team's instructions are applied and quoted; it
//     sets "failure" only for the blog's third research item, until the recovery
//     agent has rewritten its instructions, so the playground shows retries and
//     recovery), commit_evaluation (one result per criterion id),
//     commit_final_docset (a short summary), commit_recovery_plan (new instructions
//     for the failing item, two narrower search queries when the writer searches,
//     and a rationale that answers the last failure) and classify_scope (always in
//     scope). Any other forced function gets an example value of its schema.
//   - a workflow commit function among other tools, tool_choice "required" or
//     "auto": a Write with tools (the blog's research). The demo calls no tool and
//     commits at once, as above.
//   - a task with the line "Item <n> of <total>: <title>": one item of a foreach
//     artifact. Write writes that item only, without a heading; Revise is the
//     editor pass, which tightens the text (filler and hedges out) and adds no note.
//   - tools with tool_choice "auto": agents.Executor. A question about the time or an
//     arithmetic expression calls current_time or calculate; another question (one
//     ending in "?" or starting with a question word, not a greeting, thanks or a
//     request for help) calls search_knowledge, when offered, with its key words.
//     The next request, with the results, answers from them: a knowledge answer
//     quotes the first passage's first two sentences and cites it as [1], or says
//     that the knowledge base has nothing on it. Anything else gets a short canned
//     reply that says it is the demo model and suggests `/threadwright start
//     product-brief`, in Russian when the question is written in Cyrillic, else in
//     English.
//   - no tools: agents.Summarizer (an extractive summary, one line per message) or
//     the executor's final answer after its step limit.
//
// The built-in workflows are recognised by their titles ("Product brief", "Grant
// proposal", "Blog article") and their artifacts by the ids in the workflow system
// prompt. The product brief is about one fictional product, a weekly meal-planning
// app for busy parents; the proposal about one fictional grant, the Millbrook
// Community Solar Pilot. Later artifacts refer to the options chosen for earlier
// ones. A custom workflow's artifacts get generic content built from their titles
// and descriptions, and an item its title and brief.
//
// The blog article is about async stand-ups for small teams. Its outline (plan) has
// six angles, proposed three at a time (a playbook, a fictional five-person team's
// story, an async-or-live comparison, a team lead's guide, a Slack setup, why async
// stand-ups fail); the outline written from one is "# Title", "Angle:", "Audience:"
// and five "## " sections with a brief, taken from a pool of twelve in the angle's
// order. For each section, the research (research) is three or four canned facts,
// each with a placeholder source marked "(demo source: https://example.com/demo/…)";
// the draft (sections) is 200 to 400 words built from the notes under the section's
// heading in the prompt, citing each as a Markdown link, and the editor pass
// tightens it. The article (article) puts the outline's sections together from the
// drafts in the prompt, with a "# " title, a meta description of at most 160
// characters, a TL;DR of three bullets, transitions, a conclusion and a numbered
// "## References" list of exactly the sources cited, renumbered [1], [2], … A
// heading the team wrote into the outline gets generic notes and text. The blog's
// evaluations fail only real checks (the number of sections, word ranges per
// section, the meta description's length, the TL;DR's bullets, references against
// citations), since a pipeline writes most of it without review.
//
// A workflow started with a topic (the input `topic`, in the system prompt's "## What
// the team asked for") that its canned subject is not about gets content about that
// topic: the blog's outline options come from six angles on the topic, each with five
// sections of its own ("Getting started with <topic>", …), and its outline, research
// and drafts follow them as they follow an outline the team wrote; the other built-in
// workflows are written as a custom workflow is, with the topic in their options and
// texts (topic.go).
//
// The content is in English whatever the conversation's language; only the chat
// replies speak Russian.
package demo
