package workflow_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

const inputsWorkflow = `name: blog
title: Blog
inputs:
  - id: topic
    label: What is it about?
    required: true
  - id: audience
    label: Who reads it?
  - id: wordcount
    label: Target length (words)
    type: number
    default: 1500
artifacts:
  - id: post
    title: Post
report: |
  # {{ input "topic" }}
  For {{ input "audience" }}, about {{ input "wordcount" }} words.
  {{ artifact "post" }}
`

func TestInputs_ParseFillRender(t *testing.T) {
	d, err := workflow.Parse("blog.yaml", []byte(inputsWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	want := []workflow.Input{
		{ID: "topic", Label: "What is it about?", Required: true, Type: workflow.InputText},
		{ID: "audience", Label: "Who reads it?", Type: workflow.InputText},
		{ID: "wordcount", Label: "Target length (words)", Type: workflow.InputNumber, Default: "1500"},
	}
	if !reflect.DeepEqual(d.Inputs, want) {
		t.Errorf("Inputs = %+v, want %+v", d.Inputs, want)
	}
	values := d.FillInputs("  Go generics for data engineers ")
	wantValues := map[string]string{"topic": "Go generics for data engineers", "wordcount": "1500"}
	if !reflect.DeepEqual(values, wantValues) {
		t.Errorf("FillInputs = %v, want %v", values, wantValues)
	}
	if m := d.MissingInputs(values); len(m) != 0 {
		t.Errorf("MissingInputs = %v, want none", m)
	}
	if m := d.MissingInputs(d.FillInputs("")); len(m) != 1 || m[0].ID != "topic" {
		t.Errorf("MissingInputs without text = %v, want topic", m)
	}
	if got := d.Inputs[1].Name(); got != "Who reads it?" {
		t.Errorf("Name = %q, want the label", got)
	}
	out, err := d.RenderReport(workflow.ReportData{Artifacts: map[string]string{"post": "Body."}, Inputs: values})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "# Go generics for data engineers\nFor , about 1500 words.\nBody.") {
		t.Errorf("report = %q", out)
	}
}

func TestInputs_ImpliedTopic(t *testing.T) {
	d, err := workflow.Parse("x.yaml", []byte("name: x\ntitle: X\nartifacts:\n  - id: a\n    title: A\nreport: '{{ input \"topic\" }}'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].ID != workflow.TopicInput || d.Inputs[0].Required {
		t.Errorf("Inputs = %+v, want one optional topic", d.Inputs)
	}
	for text, want := range map[string]string{
		"about X":             "X", // "start blog about X": the subject, not the preposition
		"About Go generics":   "Go generics",
		"про дженерики в Go":  "дженерики в Go",
		"об  отпуске":         "отпуске",
		"about":               "about", // only the word: kept
		"aboutness of things": "aboutness of things",
		"on-call handbook":    "on-call handbook",
		"tabs vs spaces":      "tabs vs spaces",
	} {
		if got := d.FillInputs(text)["topic"]; got != want {
			t.Errorf("FillInputs(%q) topic = %q, want %q", text, got, want)
		}
	}
}

func TestInputs_Problems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"UndeclaredInReport", yaml(`name: x
title: X
inputs:
	- id: topic
	  label: Topic
artifacts:
	- id: a
	  title: A
report: |
	# {{ input "audience" }}
`), []string{`test.yaml:10: report template line 1: at <input "audience">: no input "audience" in workflow "x"`}},
		{"UndeclaredImplied", yaml(`name: x
title: X
artifacts:
	- id: a
	  title: A
report: '{{ input "title" }}'
`), []string{`test.yaml:6: report template line 1: at <input "title">: no input "title" in workflow "x"`}},
		{"BadInputs", yaml(`name: x
title: X
inputs:
	- id: Topic
	  label: T
	- label: No id
	- id: n
	  label: N
	  type: integer
	- id: w
	  label: W
	  type: number
	  default: many
	- id: w
	  label: W again
	  required: maybe
	- id: q
	  lable: Q
artifacts:
	- id: a
	  title: A
`), []string{
			`test.yaml:4: input id "Topic" is invalid: use lower-case letters, digits and "_", starting with a letter or digit`,
			`test.yaml:6: input #2: missing id, like id: topic`,
			`test.yaml:9: input "n": type "integer" is invalid: use text or number`,
			`test.yaml:13: input "w": default "many" is not a number`,
			`test.yaml:14: duplicate input id "w" (first at line 10)`,
			`test.yaml:16: input "w": required: want true or false, got "maybe"`,
			`test.yaml:18: unknown field "lable" in input "q" (did you mean "label"?)`,
		}},
		{"NotAList", "name: x\ntitle: X\ninputs: topic\nartifacts:\n  - id: a\n    title: A\n", []string{
			"test.yaml:3: inputs: want a list of inputs (- id: topic)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problems(t, tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestInputs_Prompts(t *testing.T) {
	src := strings.Replace(inputsWorkflow, "    title: Post\n", "    title: Post\n    prompt: Write about {{ input \"wordcount\" }} words on {{ input \"topic\" }}.\n    editor:\n      prompt: Keep it near {{ input \"wordcount\" }} words.\n", 1)
	d, err := workflow.Parse("blog.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	values := d.FillInputs("tabs vs spaces")
	if got, want := d.ExpandPrompt(d.Artifacts[0].Prompt, values), "Write about 1500 words on tabs vs spaces."; got != want {
		t.Errorf("ExpandPrompt = %q, want %q", got, want)
	}
	if got, want := d.ExpandPrompt(d.Artifacts[0].Editor.Prompt, values), "Keep it near 1500 words."; got != want {
		t.Errorf("ExpandPrompt (editor) = %q, want %q", got, want)
	}

	bad := strings.Replace(src, `{{ input "topic" }}.`, `{{ input "subject" }}.`, 1)
	bad = strings.Replace(bad, `near {{ input "wordcount" }} words.`, `near {{ input "wordcount" words.`, 1)
	want := []string{
		`test.yaml:16: artifact "post": prompt template line 1: at <input "subject">: no input "subject" in workflow "blog"`,
		`test.yaml:18: artifact "post": editor: prompt template line 1: function "words" not defined`,
	}
	if got := problems(t, bad); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
