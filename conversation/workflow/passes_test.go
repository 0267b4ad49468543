package workflow_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

const passesYAML = `name: blog
title: Blog
artifacts:
  - id: plan
    title: Plan
    mode: choice
    self_review: true
    criteria:
      - id: clear
        description: Clear
  - id: sections
    title: Sections
    mode: auto
    depends_on: [plan]
    model: writer
    enhance: {model: polish, prompt: Sharpen it}
  - id: article
    title: Article
    depends_on: [sections]
    enhance:
      model: enhance
      prompt: Make it about {{ input "topic" }}.
`

func TestParse_Passes(t *testing.T) {
	d, err := workflow.Parse("blog.yaml", []byte(passesYAML))
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := d.Artifact("plan")
	article, _ := d.Artifact("article")
	if !plan.SelfReview || plan.Enhance != nil {
		t.Errorf("plan: %+v", plan)
	}
	if e := article.Enhance; e == nil || e.Model != "enhance" || e.Prompt != `Make it about {{ input "topic" }}.` {
		t.Errorf("article enhance: %+v", e)
	}
	// The enhancement profiles are not required at start-up: only model and editor
	// models are.
	if got := d.Profiles(); !reflect.DeepEqual(got, []string{"writer"}) {
		t.Errorf("Profiles() = %v, want [writer] (enhance profiles are optional)", got)
	}
	if slices.Contains(d.Profiles(), "enhance") || slices.Contains(d.Profiles(), "polish") {
		t.Error("an enhance profile is required at start-up")
	}
}

func TestParse_PassesProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"SelfReviewOnDraft", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  self_review: true
	  criteria: [{id: c, description: C}]
`), []string{`test.yaml:6: artifact "a": self_review needs mode: choice (mode is draft): it reviews the proposed options`}},
		{"SelfReviewWithoutCriteria", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  mode: choice
	  self_review: true
`), []string{`test.yaml:7: artifact "a": self_review needs criteria: the options are reviewed against them`}},
		{"SelfReviewNotBool", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  mode: choice
	  self_review: often
`), []string{`test.yaml:7: artifact "a": self_review: want true or false, got "often"`}},
		{"EnhanceOnChoice", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  mode: choice
	  enhance: {model: enhance, prompt: P}
`), []string{`test.yaml:7: artifact "a": enhance needs mode draft or auto (mode is choice)`}},
		{"EnhanceEmpty", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  enhance:
`), []string{
			`test.yaml:6: artifact "a": enhance: missing model: the model profile (MODEL_PROFILES) that enhances the text, like model: enhance`,
			`test.yaml:6: artifact "a": enhance: missing prompt: what the enhancement does, like prompt: Sharpen the prose, keep every fact`,
		}},
		{"EnhanceBadModelNoPrompt", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  mode: auto
	  enhance:
	    model: Big Model
`), []string{
			`test.yaml:7: artifact "a": enhance: missing prompt: what the enhancement does, like prompt: Sharpen the prose, keep every fact`,
			`test.yaml:8: artifact "a": enhance: model "Big Model" is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, "_" and "-", starting with a letter or digit`,
		}},
		{"EnhanceNotMapping", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  enhance: enhance
`), []string{`test.yaml:6: artifact "a": enhance: want a mapping with model and prompt, like enhance: {model: enhance, prompt: Sharpen the prose}`}},
		{"EnhanceUnknownField", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  enhance: {model: e, prompt: P, profile: e}
`), []string{`test.yaml:6: unknown field "profile" in artifact "a": enhance (did you mean "model"?)`}},
		{"PreferModelInvalid", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  prefer_model: Large Model
`), []string{`test.yaml:6: artifact "a": prefer_model "Large Model" is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, "_" and "-", starting with a letter or digit`}},
		{"PreferModelAndModel", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  model: big
	  prefer_model: large
`), []string{`test.yaml:7: artifact "a": prefer_model and model both name a profile: keep model (the profile must be defined) or prefer_model (the main model writes when it is not)`}},
		{"PreferModelOnFetch", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  mode: auto
	- id: b
	  title: B
	  mode: auto
	  depends_on: [a]
	  fetch: a
	  prefer_model: large
`), []string{`test.yaml:12: artifact "b": prefer_model does not apply to a fetch artifact: no model writes it (remove prefer_model or fetch)`}},
		{"EnhancePromptTemplate", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
	  enhance:
	    model: e
	    prompt: About {{ input "nope" }}
`), []string{`test.yaml:8: artifact "a": enhance: prompt template line 1: at <input "nope">: no input "nope" in workflow "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problems(t, tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestWritingProfile: model is always the profile; prefer_model only when the
// deployment defines it, else the main model (""); Profiles, which start-up
// requires, leaves prefer_model out.
func TestWritingProfile(t *testing.T) {
	d, err := workflow.Parse("w.yaml", []byte(`name: w
title: W
artifacts:
  - id: a
    title: A
    model: big
  - id: b
    title: B
    prefer_model: large
  - id: c
    title: C
`))
	if err != nil {
		t.Fatal(err)
	}
	large := func(name string) bool { return name == "large" }
	none := func(string) bool { return false }
	for _, tt := range []struct {
		id      string
		defined func(string) bool
		want    string
	}{
		{"a", none, "big"}, {"a", large, "big"},
		{"b", large, "large"}, {"b", none, ""}, {"b", nil, ""},
		{"c", large, ""},
	} {
		a, _ := d.Artifact(tt.id)
		if got := a.WritingProfile(tt.defined); got != tt.want {
			t.Errorf("%s.WritingProfile = %q; want %q", tt.id, got, tt.want)
		}
	}
	if got := d.Profiles(); !slices.Equal(got, []string{"big"}) {
		t.Errorf("Profiles = %q; want [big]: prefer_model need not be defined", got)
	}
}
