// Package workflow defines artifact workflows and runs their state: the YAML documents
// a workflow author writes (docs/workflows.md, "Workflows"), how they are parsed and validated,
// the set of workflows a deployment offers (the built-ins embedded from
// prompts/workflows plus any in WORKFLOWS_DIR), and the workflow machine
// (docs/architecture.md, "Workflow machine"): a run's State, every transition of a
// person's action (Machine, with the one permission check, Machine.May), the stale
// rule (Staleness), the pipeline's item bookkeeping (Pipeline) and the scheduling rule
// (Next). The machine is pure: no context, no I/O; package conversation/workflowrun
// calls the agents, posts the cards and saves.
//
// A Definition is an ordered list of artifacts. Each artifact has a mode (choice:
// options → pick → write → review; draft: write → review; auto: write, no review),
// may depend on other artifacts, and is evaluated against its criteria. The report
// template renders the final document from the approved artifacts.
//
// # Schema
//
// One workflow per file (*.yaml or *.yml). Every field not listed here is an error.
//
//	name: proposal              # required; the id used in commands: ^[a-z0-9][a-z0-9-]*$
//	title: Grant proposal       # required; what people read
//	description: ...            # optional; what the workflow is for
//	locale: ru                  # optional BCP 47 tag; forces the language of artifacts
//	                            # and messages (default: the conversation's language)
//	approvers: starter          # optional: shorthand for permissions: {approve: starter}
//	permissions:                # optional: anyone, starter or approvers per action
//	  cancel: starter           #   approve (and keep) default anyone; restart, edit, cancel starter
//	inputs:                     # optional (default: one optional input, topic); see Input
//	  - id: topic               # required; ^[a-z0-9][a-z0-9_]*$, unique in the workflow
//	    label: What is it about?  # required; the question people answer
//	    required: true          # optional; the start text fills the first required input
//	    type: number            # text (default) | number
//	    default: 1500           # optional; a number for type number
//	pass_share: 0.75            # optional; 0 < share <= 1 of the non-critical criteria
//	                            # that must pass (default DefaultPassShare); see Judge
//	artifacts:                  # required, at least one
//	  - id: problem_statement   # required; ^[a-z0-9][a-z0-9_]*$, unique in the workflow
//	    title: Problem statement  # required
//	    description: ...        # optional; what the artifact is, for the model and people
//	    mode: choice            # choice | draft (default) | auto
//	    options: 3              # choice only: 2..MaxOptions, default DefaultOptions
//	    depends_on: [research]  # optional; ids of other artifacts of this workflow
//	    criteria:               # optional; what the evaluator checks the text against
//	                            # (every text is also checked for placeholders: the
//	                            # engine's no_placeholders, see Placeholders)
//	      - id: specific        # required; ^[a-z0-9][a-z0-9_]*$, unique in the artifact
//	        description: States a measurable problem  # required
//	        critical: true      # optional; must pass for the verdict to pass
//	        check: {line: "Keywords:"}  # optional; judged without the model (RunChecks),
//	                            # exactly one of: line: <start of a line, text after it>,
//	                            # heading: <a heading's title, any level>,
//	                            # words: <a number input> with tolerance: 0.15 (0 < t < 1,
//	                            # default DefaultTolerance) and exclude: [<## titles>],
//	                            # lead: <sentences before each ## section's first ###>,
//	                            # subsections: [<least>, <most>] words of each ###, with
//	                            # tolerance, banned_openers: [<phrases no sentence opens
//	                            # with>], or keywords: <a dependency listing keywords>
//	    pass_share: 1           # optional; overrides the workflow's pass_share
//	    prompt: |               # optional; extra guidance for the model writing it; a
//	      ...                   # text/template whose only function is input "id"
//	    model: writer           # optional; the model profile (MODEL_PROFILES) writing it,
//	                            # ^[a-z0-9][a-z0-9_-]*$ (default: the main model)
//	    prefer_model: large     # optional, not with model; the profile writing it when
//	                            # MODEL_PROFILES defines it, else the main model (a note
//	                            # in the start-up log and workflows validate)
//	    tools: [web_search]     # draft and auto; tools the model may call while writing,
//	                            # ^[a-z0-9][a-z0-9_]*$, MCP tools as server__tool
//	    editor:                 # optional; an editor pass over what is written
//	      prompt: Tighten …     #   required; what the editor does
//	      model: careful        #   optional profile (default: the artifact's model)
//	    foreach: outline        # auto only; a dependency whose Items it is written for
//	    retries: 2              # auto only; 0..MaxRetries tries again on failure (default 0)
//	    concurrency: 4          # auto only; 1..MaxConcurrency items written at once
//	                            # (default: the deployment's PIPELINE_CONCURRENCY)
//	    fetch: research         # auto only; one of depends_on whose URLs are fetched:
//	                            # no model writes it (no retries, tools, editor, model,
//	                            # prefer_model, prompt, enhance)
//	    research_strategy: batch  # auto with foreach only; batch or individual (default)
//	    self_review: true       # choice only, needs criteria; the model reviews its options
//	                            # against the criteria and revises them once
//	    enhance:                # draft and auto; an enhancement pass before evaluation
//	      model: enhance        #   required profile name; skipped when MODEL_PROFILES lacks it
//	      prompt: Sharpen …     #   required; what the enhancement does (a text/template)
//	report: |                   # optional text/template (default DefaultReport)
//	  # {{.Workflow.Title}}
//	  {{artifact "problem_statement"}}
//
// The report template's functions are artifact, title, approved, written (each takes
// an artifact id) and input (an input id); naming an undeclared id is a problem.
//
// depends_on may name artifacts declared later; the dependency graph must have no
// cycle. Artifacts are worked on in Definition.Order: each after those it depends
// on, otherwise in declared order. Editing or restarting an artifact makes
// Definition.Dependents stale. YAML anchors and aliases work (to share criteria).
//
// # Pipelines
//
// Auto artifacts run without people (an auto artifact is approved when written), so
// a run of them makes a pipeline: the auto artifacts whose dependencies are all
// approved are written concurrently, at most PIPELINE_CONCURRENCY writes at once
// across the pipeline. These fields shape how an artifact is written:
//
//   - foreach (auto only) names an artifact that is also in depends_on. Its text is
//     split by Items (its sections by heading, else its numbered list entries) and
//     this artifact is written once per item, with the item's title and text, at
//     most concurrency items at once (1..MaxConcurrency; default
//     PIPELINE_CONCURRENCY); the results are joined in item order. A foreach fans
//     out over at most MaxItems items. The artifact it names may have any mode.
//   - retries (auto only, 0..MaxRetries, default 0) is how many times a failed write
//     (each item's, with foreach) is tried again; before the last retry the
//     recovery agent rewrites the instructions. An item that fails every try gets
//     an empty result with the reason, and the pipeline goes on.
//   - editor adds an editor pass: every text written for the artifact (each item's,
//     with foreach) is revised following editor.prompt before it is committed.
//   - model and editor.model name model profiles (MODEL_PROFILES); start-up checks
//     that every name in Definition.Profiles is configured. Without one, the
//     deployment's main model writes (and the editor uses the artifact's model).
//   - prefer_model names a profile that need not be configured: the artifact runs
//     on it when it is (Artifact.WritingProfile), else on the main model, and
//     start-up logs a warning.
//   - An item whose text lists queries under "Search queries:" (SearchQueries) is
//     researched from them: a write offered web_search or search_knowledge runs
//     each query with them before the model is called (docs/workflows.md,
//     "Pipelines").
//   - self_review (choice only, with criteria): after proposing the options, the
//     model reviews them against the criteria and revises them once; people see
//     the revised options.
//   - enhance (draft and auto) is an enhancement pass: the written text (each
//     item's, after the editor pass) is revised on the model profile enhance.model
//     following enhance.prompt, before it is evaluated. The profile is optional (it
//     is not in Definition.Profiles): without it the pass is skipped and the thread
//     says so.
//   - tools (draft and auto) names the tools the model may call while writing
//     (web_search, fetch_url, search_knowledge, an MCP server's server__tool);
//     those the deployment has not configured are left out. A choice artifact's
//     options are written without tools.
//   - fetch (auto only) names one of depends_on; the artifact is not written by a
//     model: each item's text (with foreach, from the same item of the dependency,
//     when that fans out over the same artifact) is the readable text of the
//     http(s) URLs in the dependency's text (URLs: in order, without repeats, at
//     most MaxFetchURLs), fetched concurrently by the deployment's fetcher with
//     fetch_url's limits, each page under "### title" with a "Source: url" line and
//     at most SourceChars(n) of text (MaxSourceChars, less when an item's n pages
//     would pass MaxSourceItemChars together); a page that could not be fetched says
//     "Not fetched: why", and the item still succeeds. retries, tools, editor, model,
//     prompt, enhance, criteria and research_strategy are problems on a fetch artifact.
//   - research_strategy (auto with foreach only): individual (the default) writes
//     each item alone; batch writes every pending item in one request, one "## "
//     section per item (SplitBatch matches them by title), each then through the
//     editor; items the batch misses, or all of them when it fails, are written
//     alone with their retries.
//
// # Report templates
//
// The report is a text/template executed with ReportData as its dot (.Workflow,
// .Artifacts, .Approved, .Draft) and these functions, each taking an artifact id:
//
//	artifact "id"  the artifact's text, trimmed; in a draft report (.Draft) an
//	               unapproved artifact renders as MarkerNotWritten when it has no
//	               text, else as MarkerNotApproved, a blank line, then its text
//	title "id"     the artifact's title
//	approved "id"  whether the artifact is approved (bool)
//	written "id"   whether the artifact has text (bool)
//
// .Artifacts.id is the raw text, without markers. Templates run with
// missingkey=error. Validation executes the template on sample data, so a syntax
// error, an unknown function, an unknown artifact id (in a function or in
// .Artifacts) or an unknown field is reported with its line. RenderReport collapses
// runs of blank lines, so templates need not trim around {{if}} and {{range}}.
//
// # Verdicts
//
// Definition.Judge gives an evaluation its overall verdict: it passes when every
// criterion marked critical passes and at least the pass share (PassShareOf: the
// artifact's pass_share, else the workflow's, else DefaultPassShare) of the others
// do. The conversation package revises a failing text once before people review it
// (a pipeline's artifact once before it is approved). A criterion with a Check is
// judged by RunChecks, without a model; the model evaluates only the others.
//
// # Problems
//
// Parse, Load and NewSet report every problem, not only the first, as an *Error: a
// list of Problem, each printed "file:line: reason". They cover YAML syntax, unknown
// and repeated fields, values of the wrong kind, missing name, title, artifacts, ids
// and titles, malformed names and ids, duplicate artifact and criterion ids,
// depends_on naming an unknown artifact, dependency cycles ("a → b → a": a depends
// on b, which depends on a), invalid mode, options, approvers and locale, pipeline
// fields on the wrong mode (foreach, retries, concurrency, fetch and
// research_strategy need mode auto; tools are not for choice), fetch naming an
// unknown artifact, itself or one not in its depends_on, fields a fetch artifact
// cannot have, a research_strategy other than batch or individual, batch without
// foreach, foreach naming an unknown artifact, the artifact itself or
// fields on the wrong mode (foreach, retries and concurrency need mode auto; tools
// and enhance are not for choice; self_review is for choice only, with criteria),
// an enhance without model or prompt, foreach naming an unknown artifact, the artifact itself or
// one not in its depends_on, retries and concurrency out of range, an editor
// without a prompt, a pass_share outside (0, 1] or a critical that is not true or
// false, a check with none or several of line, heading, words, lead, subsections,
// banned_openers and keywords (or an empty one), words naming an unknown or
// non-number input, a lead that is not a whole number above 0, subsections that are
// not two ascending whole numbers above 0, keywords naming an artifact not in
// depends_on, a tolerance outside (0, 1), tolerance without words or subsections,
// exclude without words, an empty exclude or banned_openers entry, malformed model profile and tool
// names, repeated tools, report
// templates that do not parse or execute, and duplicate workflow names across files.
// A template problem is reported at the file line when the report is a literal
// block (report: |), else at the report key, and always names the template's line.
//
// # Sources
//
// Definition.Source names where a definition came from: "builtin:" (BuiltinPrefix)
// and the file name for the built-ins, the file's path for WORKFLOWS_DIR. A
// WORKFLOWS_DIR file cannot replace a built-in: NewSet refuses duplicate names.
package workflow
