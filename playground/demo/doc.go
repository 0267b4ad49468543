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
//     label enum; for the options' self-review, a task with the sentence "Review
//     these options against the criteria below, then revise them once:", the listed
//     options with their labels and titles and texts revised to say what the
//     criteria ask: the blog outline's working title, reader, angle and sections,
//     another artifact's criteria ids), commit_artifact_selection (the letter,
//     ordinal, title or "none of these" of the reply), commit_artifact_final_text
//     (Write from the chosen option, Revise the current text; the team's
//     instructions are applied and quoted, but an enhancement pass, instructions
//     that say "enhance", only tightens the wording, without a note; it sets
//     "failure" only for the blog's third research item, until the recovery agent
//     has rewritten its instructions, so the playground shows retries and
//     recovery), commit_evaluation (one result per criterion id),
//     commit_final_docset (a short summary), commit_recovery_plan (new instructions
//     for the failing item, two narrower search queries when the writer searches,
//     and a rationale that answers the last failure) and classify_scope (always in
//     scope). Any other forced function gets an example value of its schema.
//   - a workflow commit function among other tools, tool_choice "required" or
//     "auto": a Write with tools (the research of the blog and of the proposal).
//     When web_search or search_knowledge is offered and the request has no tool
//     results yet, the demo calls each offered one, with a query from the item's
//     title (every item's, for a batch) and the subject (the topic, or the canned
//     one), or with the recovery agent's "Search for:" queries (research_tools.go).
//     The next request, with the results, commits: the blog's notes are the
//     results' first sentences, each citing its URL or knowledge-base source
//     ("(source: …)"), and fall back to the canned notes when nothing was found;
//     another text gets a "What the searches found" list. Without search tools it
//     commits at once, as above.
//   - a task with the line "Item <n> of <total>: <title>": one item of a foreach
//     artifact. Write writes that item only, without a heading; Revise is the
//     editor pass, which tightens the text (filler and hedges out) and adds no note.
//   - a task with the line `Write all <total> items in one text, one "## " section
//     per item, titled exactly as below:` and the lines "Item <n> of <total>:
//     <title>": a batch write. Every item is written as it would be alone (without
//     the blog's demo failure), under "## " and its title exactly as listed.
//   - tools with tool_choice "auto": agents.Executor. A question about the time or an
//     arithmetic expression calls current_time or calculate; another question (one
//     ending in "?" or starting with a question word, not a greeting, thanks or a
//     request for help) follows the grounding rule of the system prompt
//     (prompts.GroundingRule): it calls search_knowledge, when offered, else
//     web_search, when offered, with its key words. When a deployment's own tool
//     rules replace the built-in ones, it answers such a question without a tool.
//     The next request, with the results, answers from them: a knowledge answer
//     quotes the first passage's first two sentences and cites it as [1], or says
//     that the knowledge base has nothing on it. A question that refers back ("is
//     this one compatible?") while the request carries the conversation's focus
//     (agents.FocusMessage) is answered without tools, naming the focused item and
//     the details the tools reported (executor.go). Anything else gets a short canned
//     reply that says it is the demo model and suggests `/threadwright start
//     product-brief`, in Russian when the question is written in Cyrillic, else in
//     English.
//   - the planner's forced functions (package agents/planner; planner.go):
//     commit_understanding (the request as the intent), commit_plan (a task of type
//     "tool" per lookup the question asks for, as the executor's tool loop would
//     call it, each selecting only its tool, then, after two or more, a "reasoning"
//     task "combine" that depends on them; a question that needs no lookup is one
//     reasoning task "reply") and commit_reflection (always answered). A reasoning
//     task, offered no tools, answers with the results it builds on, and the
//     answer phase with every task's result lines, each once.
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
// order. For each section, the research (research) is the search results' notes, or
// three or four canned facts, each with a placeholder source marked "(demo source:
// https://example.com/demo/…)". The sources (sources) are fetched by the engine, not
// written; in the offline playground SourceFetcher serves a canned page for each of
// those placeholder URLs (the note's fact and its section's context, marked as the
// demo's) and fetches nothing else (sources.go). The brief (brief) is written from the
// outline and the inputs in the shape blog.yaml asks for: "## Reader", "## Angle",
// "## Key messages" (one "- **<heading>**: <message>" per section), "## Tone" (with the
// layout, when given), "## Keywords" (five) and "## Words per section" (the wordcount
// input, default 1500, split into a conclusion and equal sections, "- **<heading>**:
// about <n> words") (blog_brief.go). The draft (sections) is 200 to 400 words (towards
// the brief's words for it) built from the notes of the section in the prompt, citing
// each as a Markdown link, and quoting one sentence of the first page fetched for it
// ("### title", "Source: url", its text) that is not one of its notes, with its URL;
// pages "Not fetched" and example.com placeholders other than the demo's own pages
// are left out. The editor pass tightens it.
// The article (article) is exactly "# " title, "Meta description:" (at most 160
// characters), "Meta keywords:", "Image description:", "## Table of contents", "## TL;DR"
// (three bullets), the outline's sections from the drafts in the prompt with
// transitions, "## Conclusion" and a numbered "## References" list of exactly the
// sources cited, renumbered [1], [2], … Its body (after the first "## " heading,
// without the table of contents, TL;DR and references) is fitted to the wordcount
// input within about 4%: the drafts lose their middle paragraphs, last paragraphs and
// then sentences, or gain the brief's key message and neutral practical paragraphs
// (blog_article.go). A revision asked for "shorter" aims at 90% of the target, "more
// detail" at 108%; an enhancement pass (a revision whose instructions say "enhance")
// tightens the body's wording and keeps every field. A heading the team wrote into
// the outline gets generic notes and text. The blog's evaluations fail only real
// checks (the number of sections, word ranges per section, the meta description's
// length, the TL;DR's bullets, references against citations, and for the article
// the word count within the criterion's percentage of the target, the meta keywords
// and image description lines, the title and the table of contents, conclusion and
// references headings), since a pipeline writes most of it without review.
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
//
// # Inside
//
// demo.go answers a request by its shape. A forced function goes to the job of
// its commit function, over the task read from the prompts (task.go,
// prompt.go): options.go (options and selection), write.go (the text of a
// theme's or a custom workflow's artifact, the report's summary), review.go
// (the evaluation, the options' self-review), and blog_task.go with
// blog_brief.go and blog_article.go (the blog's phases, over the blog model of
// blog.go and its checks in blog_checks.go); reply.go reads a reply to
// options. research_tools.go and knowledge.go read the search tools' results,
// executor.go is the executor's tool loop, planner.go the planner's phases and
// summary.go the summarizer. The
// canned content sits in content.go and blog_content.go, and the words and
// JSON schemas every job uses in prose.go and request.go.
package demo
