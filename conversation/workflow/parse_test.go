package workflow_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// problems parses src as "test.yaml" and returns its problems as strings.
func problems(t *testing.T, src string) []string {
	t.Helper()
	d, err := workflow.Parse("test.yaml", []byte(src))
	if err == nil {
		t.Fatalf("Parse succeeded, want problems")
	}
	if d != nil {
		t.Errorf("Parse returned a definition with an error")
	}
	var e *workflow.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not a *workflow.Error", err, err)
	}
	var out []string
	for _, p := range e.Problems {
		if p.File != "test.yaml" {
			t.Errorf("problem %v: File = %q, want test.yaml", p, p.File)
		}
		out = append(out, p.String())
	}
	if got := err.Error(); got != strings.Join(out, "\n") {
		t.Errorf("Error() = %q, want the problems one per line", got)
	}
	return out
}

// yaml turns a test's indented literal into a document: tabs are not YAML.
func yaml(s string) string { return strings.ReplaceAll(s, "\t", "  ") }

func TestParse_Problems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"Empty", "", []string{
			"test.yaml: empty file: a workflow needs at least name, title and artifacts",
		}},
		{"OnlyComments", "# nothing yet\n", []string{
			"test.yaml: empty file: a workflow needs at least name, title and artifacts",
		}},
		{"OnlyDocumentStart", "---", []string{
			"test.yaml: empty file: a workflow needs at least name, title and artifacts",
		}},
		{"TabIndent", "name: x\ntitle: X\nartifacts:\n\t- id: a\n", []string{
			"test.yaml:4: invalid YAML: found character that cannot start any token (indent with spaces: YAML does not allow tabs)",
		}},
		{"Syntax", "name: x\ntitle: [a\n", []string{
			"test.yaml:1: invalid YAML: did not find expected ',' or ']'", // yaml.v3 names the line the list opens on
		}},
		{"NotAMapping", "- a\n- b\n", []string{
			"test.yaml:1: a workflow is a YAML mapping with name, title, artifacts, …",
		}},
		{"TwoDocuments", yaml("name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n---\nname: y\n"), []string{
			"test.yaml:6: a file holds one workflow: remove the second YAML document (from this ---)",
		}},
		{"UnknownFields", yaml(`name: x
title: X
owner: me
artifacts:
	- id: a
		title: A
		dependson: [b]
		criteria:
			- id: c
				description: D
				weight: 2
	- id: b
		title: B
		colour: red
`), []string{
			`test.yaml:3: unknown field "owner" in the workflow (known: name, title, description, locale, approvers, permissions, inputs, pass_share, artifacts, report)`,
			`test.yaml:7: unknown field "dependson" in artifact "a" (did you mean "depends_on"?)`,
			`test.yaml:11: unknown field "weight" in artifact "a": criterion "c" (known: id, description, critical, check)`,
			`test.yaml:14: unknown field "colour" in artifact "b" (known: id, title, description, mode, options, depends_on, criteria, pass_share, prompt, model, prefer_model, tools, editor, foreach, retries, concurrency, fetch, research_strategy, self_review, enhance)`,
		}},
		{"TypoInsteadOfRequired", yaml(`nme: x
titel: X
artifacts:
	- ID: a
		title: A
		criteria:
			- id: c
				descripton: D
`), []string{
			`test.yaml:1: unknown field "nme" in the workflow (did you mean "name"?)`,
			`test.yaml:2: unknown field "titel" in the workflow (did you mean "title"?)`,
			`test.yaml:4: unknown field "ID" in artifact #1 (did you mean "id"?)`,
			`test.yaml:8: unknown field "descripton" in artifact #1: criterion "c" (did you mean "description"?)`,
		}},
		{"RepeatedKey", yaml("name: x\ntitle: X\ntitle: Y\nartifacts:\n\t- id: a\n\t\ttitle: A\n"), []string{
			`test.yaml:3: the workflow: field "title" repeated (first at line 2)`,
		}},
		{"WrongKinds", yaml(`name: x
title: [X]
artifacts:
	- id: a
		title: A
		mode: choice
		options: three
		depends_on: b
	- id: b
		title: B
		criteria: none
report: {a: b}
`), []string{
			`test.yaml:2: title: want text, got a list`, // and no "missing title"
			`test.yaml:7: artifact "a": options: want a whole number, got "three"`,
			`test.yaml:8: artifact "a": depends_on: want a list of artifact ids, like [research]`,
			`test.yaml:11: artifact "b": criteria: want a list of criteria (- id: …, description: …)`,
			`test.yaml:12: report: want text (a text/template), like report: |`,
		}},
		{"NotMappings", yaml(`name: x
title: X
artifacts:
	- 
	- just a word
	- id: a
		title: A
		criteria: [clear]
`), []string{
			`test.yaml:4: artifact #1: want a mapping with id, title, …`,
			`test.yaml:5: artifact #2: want a mapping with id, title, …`,
			`test.yaml:8: artifact "a": criterion #1: want a mapping with id and description`,
		}},
		{"ArtifactsNotAList", "name: x\ntitle: X\nartifacts: {id: a}\n", []string{
			`test.yaml:3: artifacts: want a list of artifacts (- id: …)`,
		}},
		{"MissingTopLevel", "description: nothing else\n", []string{
			"test.yaml:1: missing name: the workflow's id in commands, like name: proposal",
			"test.yaml:1: missing title: the workflow's name as people read it, like title: Grant proposal",
			"test.yaml:1: missing artifacts: a workflow needs at least one artifact",
		}},
		{"EmptyArtifacts", "name: x\ntitle: X\nartifacts: []\n", []string{
			"test.yaml:3: missing artifacts: a workflow needs at least one artifact",
		}},
		{"MissingIDsAndTitles", yaml(`name: x
title: X
artifacts:
	- title: A
	- id: b
		criteria:
			- description: no id
			- id: c
`), []string{
			"test.yaml:4: artifact #1: missing id",
			`test.yaml:5: artifact "b": missing title`,
			`test.yaml:7: artifact "b": criterion #1: missing id`,
			`test.yaml:8: artifact "b": criterion "c": missing description: what the evaluator checks`,
		}},
		{"InvalidNames", yaml(`name: Grant_Proposal
title: X
artifacts:
	- id: Problem-Statement
		title: A
		criteria:
			- id: Clear
				description: D
`), []string{
			`test.yaml:1: name "Grant_Proposal" is invalid: use lower-case letters, digits and "-", starting with a letter or digit`,
			`test.yaml:4: artifact id "Problem-Statement" is invalid: use lower-case letters, digits and "_", starting with a letter or digit`,
			`test.yaml:7: artifact "Problem-Statement": criterion id "Clear" is invalid: use lower-case letters, digits and "_"`,
		}},
		{"DuplicateIDs", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		criteria:
			- id: clear
				description: D
			- id: clear
				description: E
	- id: a
		title: A again
`), []string{
			`test.yaml:9: artifact "a": duplicate criterion id "clear" (first at line 7)`,
			`test.yaml:11: duplicate artifact id "a" (first at line 4)`,
		}},
		{"UnknownDependency", yaml(`name: x
title: X
artifacts:
	- id: timeline
		title: T
	- id: budget
		title: B
		depends_on:
			- timline
			- staff
			- timeline
			- timeline
`), []string{
			`test.yaml:9: artifact "budget": depends_on names unknown artifact "timline" (did you mean "timeline"?)`,
			`test.yaml:10: artifact "budget": depends_on names unknown artifact "staff"`,
			`test.yaml:12: artifact "budget": depends_on lists "timeline" twice`,
		}},
		{"Cycle", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		depends_on: [b]
	- id: b
		title: B
		depends_on: [c]
	- id: c
		title: C
		depends_on: [a]
	- id: d
		title: D
		depends_on: [a]
`), []string{
			`test.yaml:6: dependency cycle: a → b → c → a (each depends on the next)`,
		}},
		{"TwoCyclesAndSelf", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		depends_on: [a]
	- id: b
		title: B
		depends_on:
			- a
			- c
	- id: c
		title: C
		depends_on: [b]
`), []string{
			`test.yaml:6: dependency cycle: a → a (each depends on the next)`,
			`test.yaml:11: dependency cycle: b → c → b (each depends on the next)`,
		}},
		{"Modes", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		mode: manual
	- id: b
		title: B
		mode: choice
		options: 1
	- id: c
		title: C
		mode: choice
		options: 6
	- id: d
		title: D
		options: 3
	- id: e
		title: E
		mode: choice
		options: 0
`), []string{
			`test.yaml:6: artifact "a": mode "manual" is invalid: use choice, draft or auto`,
			`test.yaml:10: artifact "b": options must be between 2 and 5, got 1`,
			`test.yaml:14: artifact "c": options must be between 2 and 5, got 6`,
			`test.yaml:17: artifact "d": options is only for mode choice (mode is draft)`,
			`test.yaml:21: artifact "e": options must be between 2 and 5, got 0`,
		}},
		{"ApproversAndLocale", yaml(`name: x
title: X
locale: English
approvers: admins
artifacts:
	- id: a
		title: A
`), []string{
			`test.yaml:3: locale "English" is not a BCP 47 language tag (like "en", "ru", "pt-BR")`,
			`test.yaml:4: approvers "admins" is invalid: use anyone, starter, approvers`,
		}},
		{"PermissionsBadValues", yaml(`name: x
title: X
permissions:
	approve: everyone
	cancel: owner
	delete: starter
artifacts:
	- id: a
		title: A
`), []string{
			`test.yaml:4: permissions: approve "everyone" is invalid: use anyone, starter, approvers`,
			`test.yaml:5: permissions: cancel "owner" is invalid: use anyone, starter, approvers`,
			`test.yaml:6: unknown field "delete" in permissions (known: approve, keep, restart, edit, cancel)`,
		}},
		{"PermissionsNotAMapping", yaml(`name: x
title: X
permissions: starter
artifacts:
	- id: a
		title: A
`), []string{
			`test.yaml:3: permissions: want a mapping of actions to rules, like permissions: {cancel: starter}`,
		}},
		{"PermissionsKeepDiffersFromApprove", yaml(`name: x
title: X
permissions:
	approve: starter
	keep: anyone
artifacts:
	- id: a
		title: A
`), []string{
			`test.yaml:5: permissions: keep "anyone" differs from approve "starter": keeping a stale artifact approves it, so both follow approve's rule (remove keep, or set approve)`,
		}},
		{"PermissionsKeepAloneDiffersFromDefault", yaml(`name: x
title: X
permissions:
	keep: starter
artifacts:
	- id: a
		title: A
`), []string{
			`test.yaml:4: permissions: keep "starter" differs from approve "anyone": keeping a stale artifact approves it, so both follow approve's rule (remove keep, or set approve)`,
		}},
		{"PermissionsContradictApprovers", yaml(`name: x
title: X
approvers: starter
permissions:
	approve: anyone
artifacts:
	- id: a
		title: A
`), []string{
			`test.yaml:5: permissions: approve "anyone" contradicts approvers "starter": approvers is a shorthand for permissions: approve; keep one`,
		}},
		{"PipelineTypos", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
	- id: b
		title: B
		mode: auto
		depends_on: [a]
		for_each: a
		retry: 2
		tool: [web_search]
		editor:
			promt: Tighten.
			modle: fast
`), []string{
			`test.yaml:10: unknown field "for_each" in artifact "b" (did you mean "foreach"?)`,
			`test.yaml:11: unknown field "retry" in artifact "b" (did you mean "retries"?)`,
			`test.yaml:12: unknown field "tool" in artifact "b" (did you mean "tools"?)`,
			`test.yaml:14: unknown field "promt" in artifact "b": editor (did you mean "prompt"?)`, // and no "missing prompt"
			`test.yaml:15: unknown field "modle" in artifact "b": editor (did you mean "model"?)`,
		}},
		{"PipelineWrongKinds", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
	- id: b
		title: B
		mode: auto
		depends_on: [a]
		foreach: [a]
		retries: twice
		concurrency: {n: 2}
		model: [fast]
		tools: web_search
		editor: Tighten the prose.
	- id: c
		title: C
		tools:
			- {name: fetch_url}
`), []string{
			`test.yaml:10: artifact "b": foreach: want text, got a list`,
			`test.yaml:11: artifact "b": retries: want a whole number, got "twice"`,
			`test.yaml:12: artifact "b": concurrency: want a whole number, got a mapping`,
			`test.yaml:13: artifact "b": model: want text, got a list`,
			`test.yaml:14: artifact "b": tools: want a list of tool names, like [web_search, fetch_url]`,
			`test.yaml:15: artifact "b": editor: want a mapping with prompt (and optionally model), like editor: {prompt: Tighten the prose}`,
			`test.yaml:19: artifact "c": tools entry: want text, got a mapping`,
		}},
		{"PipelineNeedsAuto", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		mode: choice
		tools: [web_search]
		editor: {prompt: Tighten., model: careful}
	- id: b
		title: B
		depends_on: [a]
		foreach: a
		retries: 1
		concurrency: 0
		model: fast
		tools: [web_search]
`), []string{
			`test.yaml:7: artifact "a": tools need mode draft or auto: a choice artifact's options are written without them`,
			`test.yaml:12: artifact "b": foreach needs mode: auto (mode is draft)`,
			`test.yaml:13: artifact "b": retries needs mode: auto (mode is draft)`,
			`test.yaml:14: artifact "b": concurrency needs mode: auto (mode is draft)`,
		}},
		{"Foreach", yaml(`name: x
title: X
artifacts:
	- id: plan
		title: Plan
		mode: choice
	- id: notes
		title: Notes
		mode: auto
		foreach: plan
	- id: sections
		title: Sections
		mode: auto
		depends_on: [plan]
		foreach: plna
	- id: self
		title: Self
		mode: auto
		depends_on: [plan]
		foreach: self
	- id: later
		title: Later
		mode: auto
		depends_on: [plan]
		foreach: ghost
`), []string{
			`test.yaml:10: artifact "notes": foreach: "plan" is not an earlier dependency of "notes": add it to depends_on`,
			`test.yaml:15: artifact "sections": foreach names unknown artifact "plna" (did you mean "plan"?)`,
			`test.yaml:20: artifact "self": foreach names the artifact itself: name an earlier dependency whose items it is written for`,
			`test.yaml:25: artifact "later": foreach names unknown artifact "ghost"`,
		}},
		{"PipelineLimits", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		mode: auto
		retries: 6
		concurrency: 17
	- id: b
		title: B
		mode: auto
		retries: -1
		concurrency: -2
`), []string{
			`test.yaml:7: artifact "a": retries must be between 0 and 5, got 6`,
			`test.yaml:8: artifact "a": concurrency must be between 1 and 16 (0 or none: the deployment's PIPELINE_CONCURRENCY), got 17`,
			`test.yaml:12: artifact "b": retries must be between 0 and 5, got -1`,
			`test.yaml:13: artifact "b": concurrency must be between 1 and 16 (0 or none: the deployment's PIPELINE_CONCURRENCY), got -2`,
		}},
		{"EditorModelTools", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		model: GPT-4o
		editor:
			model: big model
	- id: b
		title: B
		editor:
		tools:
			- web_search
			- Fetch-URL
			- web_search
			- ""
			- notion__search_pages
`), []string{
			`test.yaml:6: artifact "a": model "GPT-4o" is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, "_" and "-", starting with a letter or digit`,
			`test.yaml:7: artifact "a": editor: missing prompt: what the editor does, like prompt: Tighten the prose, keep every fact`,
			`test.yaml:8: artifact "a": editor: model "big model" is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, "_" and "-", starting with a letter or digit`,
			`test.yaml:11: artifact "b": editor: missing prompt: what the editor does, like prompt: Tighten the prose, keep every fact`,
			`test.yaml:14: artifact "b": tool "Fetch-URL" is invalid: use lower-case letters, digits and "_" (an MCP tool is server__tool)`,
			`test.yaml:15: artifact "b": tools lists "web_search" twice`,
			`test.yaml:16: artifact "b": tools has an empty entry`,
		}},
		{"ReportDoesNotParse", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
report: |
	# {{.Workflow.Title}}

	{{artifact "a"}
`), []string{
			`test.yaml:9: report template line 3: unexpected "}" in operand`,
		}},
		{"ReportUnknownFunction", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
report: |
	{{upper (artifact "a")}}
`), []string{
			`test.yaml:7: report template line 1: function "upper" not defined`,
		}},
		{"ReportUnknownArtifact", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
report: |
	# {{.Workflow.Title}}
	{{if approved "a"}}ok{{end}}
	{{artifact "b"}}
`), []string{
			`test.yaml:9: report template line 3: at <artifact "b">: no artifact "b" in workflow "x"`,
		}},
		{"ReportUnknownField", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
report: "{{.Artifacts.b}} {{.Workflow.Name}}"
`), []string{
			`test.yaml:6: report template line 1: at <.Artifacts.b>: map has no entry for key "b"`,
		}},
		{"ReportFoldedKeyLine", yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
report: >
	line one

	{{.Nope}}
`), []string{
			// A folded block (>) joins lines, so only the key's line is known.
			`test.yaml:6: report template line 2: at <.Nope>: can't evaluate field Nope in type workflow.ReportData`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(t, tt.src)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParse_Defaults(t *testing.T) {
	d, err := workflow.Parse("ok.yaml", []byte(yaml(`name: ok
title: OK
artifacts:
	- id: a
		title: A
	- id: b
		title: B
		mode: choice
	- id: c
		title: C
		mode: choice
		options: 5
		depends_on: [a, b]
`)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != "ok.yaml" {
		t.Errorf("Source = %q", d.Source)
	}
	for _, tt := range []struct {
		id      string
		mode    workflow.Mode
		options int
	}{{"a", workflow.ModeDraft, 0}, {"b", workflow.ModeChoice, workflow.DefaultOptions}, {"c", workflow.ModeChoice, 5}} {
		a, ok := d.Artifact(tt.id)
		if !ok {
			t.Fatalf("Artifact(%q) not found", tt.id)
		}
		if a.Mode != tt.mode || a.Options != tt.options {
			t.Errorf("%s: mode %q options %d, want %q %d", tt.id, a.Mode, a.Options, tt.mode, tt.options)
		}
	}
	if _, ok := d.Artifact("z"); ok {
		t.Error("Artifact(z) found")
	}
}

func TestParse_AcceptsLocalesAndAnchors(t *testing.T) {
	for _, loc := range []string{"en", "ru", "pt-BR", "zh-Hant-TW", "es-419", "sl-rozaj"} {
		src := "name: x\ntitle: X\nlocale: " + loc + "\napprovers: starter\nartifacts:\n  - {id: a, title: A}\n"
		if _, err := workflow.Parse("x.yaml", []byte(src)); err != nil {
			t.Errorf("locale %s: %v", loc, err)
		}
	}
	// Anchors let authors share criteria between artifacts.
	src := yaml(`name: x
title: X
artifacts:
	- id: a
		title: A
		criteria: &common
			- id: short
				description: At most 100 words.
	- id: b
		title: B
		criteria: *common
`)
	d, err := workflow.Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := d.Artifact("b"); len(b.Criteria) != 1 || b.Criteria[0].ID != "short" {
		t.Errorf("b criteria = %+v", b.Criteria)
	}
}

func TestValidate(t *testing.T) {
	d := &workflow.Definition{
		Name:   "go-built",
		Title:  "Built in Go",
		Source: "test",
		Artifacts: []workflow.Artifact{
			{ID: "a", Title: "A", Mode: workflow.ModeChoice},
			{ID: "b", Title: "B", DependsOn: []string{"c"}},
		},
	}
	err := d.Validate()
	want := `test: artifact "b": depends_on names unknown artifact "c"`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want %s", err, want)
	}
	d.Artifacts[1].DependsOn = []string{"a"}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if a := d.Artifacts[0]; a.Options != workflow.DefaultOptions {
		t.Errorf("options = %d, want default", a.Options)
	}
	if b := d.Artifacts[1]; b.Mode != workflow.ModeDraft {
		t.Errorf("mode = %q, want draft", b.Mode)
	}
}

func TestParse_Pipeline(t *testing.T) {
	d, err := workflow.Parse("blog.yaml", []byte(yaml(`name: blog
title: Blog
artifacts:
	- id: plan
		title: Plan
		mode: choice
		model: planner
		editor: {prompt: Keep it short.}
	- id: research
		title: Research
		mode: auto
		depends_on: [plan]
		foreach: plan
		retries: 5
		concurrency: 16
		tools: [web_search, fetch_url, notion__search]
	- id: sections
		title: Sections
		mode: auto
		depends_on: [research, plan]
		foreach: plan
		model: writer
		editor:
			prompt: Tighten the prose.
			model: editor-2
	- id: article
		title: Article
		depends_on: [sections]
		tools: [search_knowledge]
		model: writer
`)))
	if err != nil {
		t.Fatal(err)
	}
	research, _ := d.Artifact("research")
	want := workflow.Artifact{
		ID: "research", Title: "Research", Mode: workflow.ModeAuto, DependsOn: []string{"plan"},
		Foreach: "plan", Retries: 5, Concurrency: 16, Tools: []string{"web_search", "fetch_url", "notion__search"},
	}
	if !reflect.DeepEqual(*research, want) {
		t.Errorf("research = %+v\nwant %+v", *research, want)
	}
	sections, _ := d.Artifact("sections")
	if e := sections.Editor; e == nil || *e != (workflow.Editor{Prompt: "Tighten the prose.", Model: "editor-2"}) {
		t.Errorf("sections editor = %+v", e)
	}
	if got, want := d.Profiles(), []string{"editor-2", "planner", "writer"}; !slices.Equal(got, want) {
		t.Errorf("Profiles() = %v, want %v", got, want)
	}
	if got := builtin(t, "proposal").Profiles(); got != nil {
		t.Errorf("proposal Profiles() = %v, want nil", got)
	}
}

func TestValidate_Pipeline(t *testing.T) {
	d := &workflow.Definition{
		Name: "go-built", Title: "Built in Go", Source: "test",
		Artifacts: []workflow.Artifact{
			{ID: "a", Title: "A"},
			{ID: "b", Title: "B", Mode: workflow.ModeAuto, Foreach: "a", Retries: 9, Editor: &workflow.Editor{}},
		},
	}
	want := `test: artifact "b": retries must be between 0 and 5, got 9
test: artifact "b": editor: missing prompt: what the editor does, like prompt: Tighten the prose, keep every fact
test: artifact "b": foreach: "a" is not an earlier dependency of "b": add it to depends_on`
	if err := d.Validate(); err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want\n%s", err, want)
	}
	d.Artifacts[1].DependsOn = []string{"a"}
	d.Artifacts[1].Retries = workflow.MaxRetries
	d.Artifacts[1].Editor.Prompt = "Tighten."
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestParsePermissions: the permissions a file sets, and the defaults of those it
// does not (approve and keep as approvers: says, or anyone; the rest starter).
func TestParsePermissions(t *testing.T) {
	def, err := workflow.Parse("p.yaml", []byte(`name: p
title: P
approvers: starter
permissions:
  keep: starter
  cancel: approvers
  edit: anyone
artifacts:
  - id: a
    title: A
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[workflow.Permission]string{
		workflow.PermApprove: "starter", workflow.PermKeep: "starter", workflow.PermRestart: "starter",
		workflow.PermEdit: "anyone", workflow.PermCancel: "approvers",
	}
	for p, rule := range want {
		if got := def.Rule(p); got != rule {
			t.Errorf("%s: %q; want %q", p, got, rule)
		}
	}
}
