package workflow

import (
	"regexp"
	"text/template"
)

// The schema: the types a workflow file decodes into (docs/workflows.md, "Workflows"),
// each with its YAML keys. What they do is in the files named for them: the
// permission rule in permissions.go, inputs and prompt templates in inputs.go,
// criteria's checks in checks.go, the dependency graph in graph.go; Parse (parse.go)
// fills them and Validate (check.go) checks them.

// Mode says how an artifact is produced (docs/workflows.md, "Workflows").
type Mode string

// The artifact modes.
const (
	// ModeChoice: the model proposes Options, a person picks one (or edits it in a
	// reply), the model writes the artifact, people review it.
	ModeChoice Mode = "choice"
	// ModeDraft: the model writes the artifact, people review it.
	ModeDraft Mode = "draft"
	// ModeAuto: the model writes the artifact; it is approved without review.
	ModeAuto Mode = "auto"
)

// DefaultOptions is the option count of a choice artifact that names none.
const DefaultOptions = 3

// MaxOptions bounds an artifact's option count (one button per option).
const MaxOptions = 5

// Definition is one workflow, as written in YAML:
//
//	name: proposal            # the id used in commands: [a-z0-9-]+
//	title: Grant proposal
//	description: ...
//	locale: ru                # optional: force the language of artifacts and messages
//	approvers: starter        # optional: shorthand for permissions: {approve: starter}
//	permissions:              # optional: who may do what (see Permissions)
//	  cancel: starter
//	inputs: [...]             # optional: see Input (default: an optional topic)
//	pass_share: 0.75          # optional: see Definition.PassShare
//	artifacts: [...]          # see Artifact
//	report: |                 # text/template for the final document (see ReportData)
//	  ...
type Definition struct {
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	Locale      string `yaml:"locale,omitempty"`
	Approvers   string `yaml:"approvers,omitempty"`
	// Permissions says who may approve, keep, restart, edit and cancel; Parse and
	// Validate fill its defaults (see Permissions).
	Permissions Permissions `yaml:"permissions,omitempty"`
	// Inputs are what the starter gives (see Input); Parse and Validate imply an
	// optional topic when none is declared.
	Inputs []Input `yaml:"inputs,omitempty"`
	// PassShare is the share (0 < share ≤ 1) of an artifact's non-critical criteria
	// that must pass for its evaluation's verdict to pass (Judge); nil is
	// DefaultPassShare. An artifact's own PassShare wins.
	PassShare *float64   `yaml:"pass_share,omitempty"`
	Artifacts []Artifact `yaml:"artifacts"`
	Report    string     `yaml:"report"`

	// Source names where the definition came from ("builtin:proposal.yaml" or a
	// file path), for messages.
	Source string `yaml:"-"`

	report *template.Template // parsed Report (or DefaultReport), set by Parse
	order  []string           // Order(), set by Parse
	line   int                // the line of the name key, for problems
}

// Permissions says who may do what in a workflow's runs, as written in YAML:
//
//	permissions:
//	  approve: anyone    # approve, keep all, edit an auto artifact (default: approvers: or anyone)
//	  keep: anyone       # optional; must equal approve
//	  restart: starter   # default starter
//	  edit: starter      # default starter
//	  cancel: starter    # default starter
//
// Each is RuleAnyone, RuleStarter or RuleApprovers; "" takes the default.
// Definition.Approvers is a shorthand for Approve.
type Permissions struct {
	Approve string `yaml:"approve,omitempty"`
	Keep    string `yaml:"keep,omitempty"`
	Restart string `yaml:"restart,omitempty"`
	Edit    string `yaml:"edit,omitempty"`
	Cancel  string `yaml:"cancel,omitempty"`
}

// InputType is the kind of value an input takes.
type InputType string

// The input types.
const (
	// InputText is free text (the default).
	InputText InputType = "text"
	// InputNumber is a number ("1500", "2.5").
	InputNumber InputType = "number"
)

// Input is one input a workflow needs from the person who starts it (docs/workflows.md,
// "Workflows"):
//
//	inputs:
//	  - id: topic            # [a-z0-9_]+, used by {{ input "topic" }}
//	    label: What is it about?
//	    required: true
//	  - id: wordcount
//	    label: Target length (words)
//	    type: number         # text (default) or number
//	    default: 1500
type Input struct {
	ID       string    `yaml:"id"`
	Label    string    `yaml:"label"`
	Required bool      `yaml:"required,omitempty"`
	Type     InputType `yaml:"type,omitempty"`
	// Default is the value of an input nobody filled ("" when none).
	Default string `yaml:"default,omitempty"`
}

// Artifact is one artifact of a workflow.
type Artifact struct {
	// ID names the artifact in commands, depends_on and the report: [a-z0-9_]+.
	ID          string `yaml:"id"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	// Mode defaults to ModeDraft.
	Mode Mode `yaml:"mode,omitempty"`
	// Options is the number of options of a choice artifact (default DefaultOptions,
	// at most MaxOptions).
	Options int `yaml:"options,omitempty"`
	// DependsOn lists artifacts whose approved text this one is written from.
	// Editing or restarting one of them marks this one stale. They may be declared
	// anywhere in the workflow (there must be no cycle); artifacts are worked on in
	// Definition.Order.
	DependsOn []string `yaml:"depends_on,omitempty"`
	// Criteria are what the evaluator checks the written text against.
	Criteria []Criterion `yaml:"criteria,omitempty"`
	// PassShare overrides Definition.PassShare for this artifact (nil: the
	// workflow's).
	PassShare *float64 `yaml:"pass_share,omitempty"`
	// Prompt is extra guidance for the model writing this artifact.
	Prompt string `yaml:"prompt,omitempty"`

	// Foreach (auto only) names an earlier dependency whose text is split into items
	// (Items: its headings, else its numbered list): this artifact is written once per
	// item, concurrently, and the results are joined in order.
	Foreach string `yaml:"foreach,omitempty"`
	// Retries (auto only) is how many times a failed item (or the whole artifact,
	// without foreach) is tried again, 0..MaxRetries. Before the last retry the
	// recovery agent rewrites the item's instructions. An item that fails every try
	// records an empty result with the reason, and the pipeline goes on.
	Retries int `yaml:"retries,omitempty"`
	// Concurrency (auto only) bounds the items of this artifact written at once,
	// 1..MaxConcurrency (0, the default: the deployment's PIPELINE_CONCURRENCY, which
	// also bounds the whole pipeline).
	Concurrency int `yaml:"concurrency,omitempty"`
	// Editor, when set, is an editor pass: every written text (each item's, for
	// foreach) is revised by the editor agent following Editor.Prompt before it is
	// committed.
	Editor *Editor `yaml:"editor,omitempty"`
	// Model names a model profile (MODEL_PROFILES) that writes this artifact; empty
	// is the deployment's main model. Start-up fails when the profile is undefined.
	Model string `yaml:"model,omitempty"`
	// PreferModel names a model profile that writes this artifact when the
	// deployment defines it (MODEL_PROFILES), like a larger model for the final
	// text; without it the artifact is written on the main model, and the log and
	// "workflows validate" say so. At most one of Model and PreferModel is set.
	PreferModel string `yaml:"prefer_model,omitempty"`
	// Tools (draft and auto) names tools the model may call while writing
	// (web_search, fetch_url, search_knowledge, an MCP server's server__tool, …);
	// those the deployment has not configured are left out.
	Tools []string `yaml:"tools,omitempty"`
	// Fetch (auto only) names one of DependsOn: this artifact is not written by a
	// model; its text is the readable text of every http(s) URL found in that
	// dependency's text (its same item, with foreach), fetched concurrently (docs/workflows.md,
	// "Pipelines"). No retries, tools, editor, model, prompt or enhance go with it.
	Fetch string `yaml:"fetch,omitempty"`
	// ResearchStrategy (auto with foreach only) is StrategyIndividual (the default,
	// ""): one write per item; or StrategyBatch: one write covers every pending item,
	// split back by its "## " headings, the items it misses written one by one.
	ResearchStrategy string `yaml:"research_strategy,omitempty"`
	// SelfReview (choice only, with criteria): the model reviews the options it
	// proposed against the criteria and revises them once before people see them.
	SelfReview bool `yaml:"self_review,omitempty"`
	// Enhance (draft and auto), when set, is an enhancement pass on a second model
	// profile: the written text (each item's, after its editor pass, for auto) is
	// revised following Enhance.Prompt before it is evaluated. It is skipped when the
	// deployment defines no such profile.
	Enhance *Enhance `yaml:"enhance,omitempty"`
}

// Enhance is an artifact's enhancement pass (docs/workflows.md, "Pipelines").
type Enhance struct {
	// Model names the model profile (MODEL_PROFILES) that enhances the text; unlike
	// Artifact.Model it need not be defined: without it the pass is skipped.
	Model string `yaml:"model"`
	// Prompt says what the enhancement does; a text/template like Artifact.Prompt.
	Prompt string `yaml:"prompt"`
}

// The values of Artifact.ResearchStrategy.
const (
	StrategyIndividual = "individual"
	StrategyBatch      = "batch"
)

// WritingProfile returns the model profile that writes a, given whether the
// deployment defines a profile (defined may be nil: none is): Model, else
// PreferModel when defined, else "" (the main model).
func (a *Artifact) WritingProfile(defined func(string) bool) string {
	switch {
	case a.Model != "":
		return a.Model
	case a.PreferModel != "" && defined != nil && defined(a.PreferModel):
		return a.PreferModel
	}
	return ""
}

// Batch reports whether a's items are written in one batch write
// (ResearchStrategy batch, with foreach).
func (a *Artifact) Batch() bool { return a.ResearchStrategy == StrategyBatch && a.Foreach != "" }

// Editor is an artifact's editor pass.
type Editor struct {
	// Prompt says what the editor does ("tighten the prose, keep every fact").
	Prompt string `yaml:"prompt"`
	// Model names a model profile for the editor (default: the artifact's Model).
	Model string `yaml:"model,omitempty"`
}

// MaxRetries bounds Artifact.Retries.
const MaxRetries = 5

// MaxConcurrency bounds Artifact.Concurrency.
const MaxConcurrency = 16

// MaxItems bounds the items a foreach artifact fans out over.
const MaxItems = 30

// Criterion is one evaluation criterion of an artifact.
type Criterion struct {
	ID          string `yaml:"id"`
	Description string `yaml:"description"`
	// Critical criteria must all pass for the evaluation's verdict to pass, whatever
	// the pass share (Definition.Judge).
	Critical bool `yaml:"critical,omitempty"`
	// Check, when set, judges the criterion without a model (RunChecks); the model's
	// evaluation is not asked about it.
	Check *Check `yaml:"check,omitempty"`
}

// Check is a criterion's deterministic check, judged by RunChecks without a model
// (docs/workflows.md, "Verdicts"). Exactly one of Line, Heading, Words, Lead,
// Subsections, BannedOpeners and Keywords is set:
//
//	check: {line: "Meta keywords:"}      # a line starting with this, with text after it
//	check: {heading: "Table of contents"} # a heading (any level) with this title
//	check: {words: wordcount, tolerance: 0.15, exclude: ["Table of contents", "TL;DR"]}
//	check: {lead: 2}                      # "## " opening, 2 sentences before the first "### "
//	check: {subsections: [250, 300], tolerance: 0.1} # "### " subsections of 225–330 words
//	check: {banned_openers: ["In conclusion", "In summary"]} # no sentence opens so
//	check: {keywords: brief}              # every keyword the artifact brief lists is used
type Check struct {
	// Line passes when a line of the text (outside fenced code), less its
	// indentation, starts with Line (case-insensitive; emphasis marks "*" and "_"
	// in the line are skipped, so "**Meta keywords**: x" has "Meta keywords:") and
	// has text after it.
	Line string `yaml:"line,omitempty"`
	// Heading passes when the text has a Markdown heading of any level whose title
	// is Heading (trimmed, case-insensitive).
	Heading string `yaml:"heading,omitempty"`
	// Words names a number input, the target word count of the text's body: what
	// follows its first "## " heading (the whole text without one), less the "## "
	// sections titled as an Exclude entry. It passes when the count is within
	// target × (1 ± Tolerance), inclusive.
	Words string `yaml:"words,omitempty"`
	// Tolerance is the share the count may differ from the target (or the
	// subsections' bounds) by, 0 < t < 1; nil is DefaultTolerance. Words and
	// Subsections only.
	Tolerance *float64 `yaml:"tolerance,omitempty"`
	// Exclude lists "## " section titles (case-insensitive) left out of the count.
	// Words only.
	Exclude []string `yaml:"exclude,omitempty"`
	// Lead is the number of sentences every "## " section opens with, before its
	// first "### " subsection (its whole text when it has none); the text must start
	// with a "## " heading. Above 0.
	Lead int `yaml:"lead,omitempty"`
	// Subsections are the least and the most words, [least, most], of every "### "
	// subsection (its text up to the next heading of level 3 or less, without its
	// heading); every "## " section must have one. It passes when each count is
	// within least × (1 − Tolerance) and most × (1 + Tolerance), inclusive.
	Subsections []int `yaml:"subsections,omitempty"`
	// BannedOpeners are phrases no sentence of the text may open with (ignoring
	// case and emphasis): wrap-ups such as "In conclusion".
	BannedOpeners []string `yaml:"banned_openers,omitempty"`
	// Keywords names an artifact (a dependency) whose keywords must all occur in the
	// text's body (as for Words): the list under its heading "Keywords", or after a
	// line "Keywords:" (prose.List, prose.Contains).
	Keywords string `yaml:"keywords,omitempty"`

	pos      position // where it was written, for problems
	excludes []int    // the line of each Exclude entry
	openers  []int    // the line of each BannedOpeners entry
}

// ReportData is what a report template is executed with.
type ReportData struct {
	// Workflow is the definition.
	Workflow *Definition
	// Artifacts maps artifact id to its text ("" when it has none).
	Artifacts map[string]string
	// Approved maps artifact id to whether it is approved; an export before the end
	// marks the others.
	Approved map[string]bool
	// Draft is true for an export with unapproved artifacts.
	Draft bool
	// Inputs maps input id to its value (see Definition.FillInputs).
	Inputs map[string]string
}

// The syntax of the names in a definition, which Validate checks.
var (
	// nameRE matches workflow names (Definition.Name).
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	// artifactIDRE matches artifact, criterion and input ids.
	artifactIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)
	// profileRE matches model profile names (MODEL_PROFILES).
	profileRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	// toolRE matches tool names; an MCP tool is server__tool.
	toolRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)
	// localeRE accepts the BCP 47 tags people write: language, optional script,
	// optional region, optional variants ("en", "ru", "pt-BR", "zh-Hant-TW",
	// "sl-rozaj"). It does not check the registry.
	localeRE = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*$`)
)
