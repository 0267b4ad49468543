package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// A workflow's inputs (Input, in definition.go): reading, defaults and checks, the
// values a start fills, and the prompt templates that use them ({{ input "id" }}).

// TopicInput is the id of the input a workflow that declares none is given: what
// the workflow is about, filled from the start command's text.
const TopicInput = "topic"

var inputFields = []string{"id", "label", "required", "type", "default"}

// decodeInputs reads the inputs list v into d.
func decodeInputs(ps *problems, v *yaml.Node, d *Definition, pos *positions) {
	pos.inputs.list = v.Line
	if isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		ps.addf(v.Line, "inputs: want a list of inputs (- id: topic)")
		return
	}
	for i, item := range v.Content {
		n := resolve(item)
		var in Input
		p := position{line: n.Line}
		if n.Kind != yaml.MappingNode {
			ps.addf(n.Line, "input #%d: want a mapping with id, label, …", i+1)
			p.broken = true
		} else {
			what := fmt.Sprintf("input #%d", i+1)
			if id := lookup(n, "id"); id != nil && id.Kind == yaml.ScalarNode && id.Value != "" {
				what = fmt.Sprintf("input %q", id.Value)
			}
			p = fields(ps, n, what, inputFields, func(key string, v *yaml.Node) {
				switch key {
				case "id":
					in.ID = str(ps, v, what+": id")
				case "label":
					in.Label = str(ps, v, what+": label")
				case "type":
					in.Type = InputType(str(ps, v, what+": type"))
				case "default":
					in.Default = str(ps, v, what+": default")
				case "required":
					if v.Kind != yaml.ScalarNode || v.Decode(&in.Required) != nil {
						ps.addf(v.Line, "%s: required: want true or false, got %s", what, describe(v))
					}
				}
			})
		}
		d.Inputs = append(d.Inputs, in)
		pos.inputs.items = append(pos.inputs.items, p)
	}
}

// checkInputs fills the inputs' defaults (an optional topic when none is declared,
// type text) and checks them.
func (d checking) checkInputs(ps *problems, pos *positions) {
	if len(d.Inputs) == 0 {
		d.Inputs = []Input{{ID: TopicInput, Label: "Topic", Type: InputText}}
		return
	}
	first := map[string]int{}
	for i := range d.Inputs {
		in, p := &d.Inputs[i], pos.inputs.item(i)
		what := fmt.Sprintf("input #%d", i+1)
		switch {
		case in.ID == "":
			if p.ok("id") {
				ps.addf(p.at("id"), "%s: missing id, like id: topic", what)
			}
		case !artifactIDRE.MatchString(in.ID):
			ps.addf(p.at("id"), "input id %q is invalid: use lower-case letters, digits and \"_\", starting with a letter or digit", in.ID)
		default:
			if line, dup := first[in.ID]; dup {
				ps.addf(p.at("id"), "duplicate input id %q (first at line %d)", in.ID, line)
			} else {
				first[in.ID] = p.at("id")
			}
			what = fmt.Sprintf("input %q", in.ID)
		}
		if in.Label == "" && p.ok("label") {
			ps.addf(p.at("label"), "%s: missing label: the question people answer, like label: What is it about?", what)
		}
		if in.Type == "" {
			in.Type = InputText
		}
		switch in.Type {
		case InputText:
		case InputNumber:
			if _, err := strconv.ParseFloat(in.Default, 64); in.Default != "" && err != nil && p.ok("default") {
				ps.addf(p.at("default"), "%s: default %q is not a number", what, in.Default)
			}
		default:
			ps.addf(p.at("type"), "%s: type %q is invalid: use %s or %s", what, in.Type, InputText, InputNumber)
		}
	}
}

// Input returns the declared input with the given id.
func (d *Definition) Input(id string) (*Input, bool) {
	for i := range d.Inputs {
		if d.Inputs[i].ID == id {
			return &d.Inputs[i], true
		}
	}
	return nil, false
}

// FillInputs returns the values of d's inputs for a start command whose text
// (after the workflow's name) is text: text fills the first required input (the
// first input when none is required), every other input takes its default. Inputs
// with no value are left out. A Definition from Parse always has an input.
func (d *Definition) FillInputs(text string) map[string]string {
	values := map[string]string{}
	for _, in := range d.Inputs {
		if in.Default != "" {
			values[in.ID] = in.Default
		}
	}
	text = strings.TrimSpace(text)
	target := d.TopicInput()
	if text == "" || target == nil {
		return values
	}
	values[target.ID] = withoutPreposition(text)
	return values
}

// TopicInput is the input a start's text fills (FillInputs): the first required
// one, else the first; nil when d has no inputs.
func (d *Definition) TopicInput() *Input {
	for i := range d.Inputs {
		if d.Inputs[i].Required {
			return &d.Inputs[i]
		}
	}
	if len(d.Inputs) == 0 {
		return nil
	}
	return &d.Inputs[0]
}

// topicPrepositions are the words a start's text may open with before its subject
// ("start blog about Go generics"), in each supported language.
var topicPrepositions = []string{"about", "on", "regarding", "re:", "про", "о", "об", "обо"}

// withoutPreposition returns text without a leading topicPrepositions word, so that
// "about Go generics" fills the topic as "Go generics"; text that is only the word
// is kept.
func withoutPreposition(text string) string {
	first, rest, ok := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	if !ok || rest == "" {
		return text
	}
	for _, p := range topicPrepositions {
		if strings.EqualFold(first, p) {
			return rest
		}
	}
	return text
}

// MissingInputs returns the required inputs that values does not fill, in
// declared order.
func (d *Definition) MissingInputs(values map[string]string) []Input {
	var missing []Input
	for _, in := range d.Inputs {
		if in.Required && strings.TrimSpace(values[in.ID]) == "" {
			missing = append(missing, in)
		}
	}
	return missing
}

// Name returns what people call the input: its label, else its id.
func (in Input) Name() string {
	if in.Label != "" {
		return in.Label
	}
	return in.ID
}

// inputFuncs is the function map of artifact and editor prompts: input "id" is the
// input's value, and fails on an id the workflow does not declare.
func (d *Definition) inputFuncs(values map[string]string) template.FuncMap {
	return template.FuncMap{"input": func(id string) (string, error) {
		if _, ok := d.Input(id); !ok {
			return "", fmt.Errorf("no input %q in workflow %q", id, d.Name)
		}
		return strings.TrimSpace(values[id]), nil
	}}
}

// ExpandPrompt returns an artifact's or editor's prompt with its {{ input "id" }}
// actions replaced by the run's input values (docs/workflows.md, "Workflows"). A prompt
// without "{{" is returned as it is; one that fails (Parse checked it, so only a
// Definition built in Go and never validated can) is returned unexpanded.
func (d *Definition) ExpandPrompt(prompt string, values map[string]string) string {
	out, err := d.expandPrompt(prompt, values)
	if err != nil {
		return prompt
	}
	return out
}

func (d *Definition) expandPrompt(prompt string, values map[string]string) (string, error) {
	if !strings.Contains(prompt, "{{") {
		return prompt, nil
	}
	t, err := template.New("prompt").Option("missingkey=error").Funcs(d.inputFuncs(values)).Parse(prompt)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkPrompts checks that the artifacts' and editors' prompts are valid templates
// that name only declared inputs.
func (d checking) checkPrompts(ps *problems, pos *positions) {
	checkPrompt := func(prompt string, line int, what string) {
		if _, err := d.expandPrompt(prompt, nil); err != nil {
			ps.addf(line, "%s: prompt template %s", what, templateReason(err))
		}
	}
	for i, a := range d.Artifacts {
		ap := pos.artifact(i)
		what := fmt.Sprintf("artifact %q", a.ID)
		if ap.ok("prompt") {
			checkPrompt(a.Prompt, ap.at("prompt"), what)
		}
		if a.Editor != nil && ap.editor.ok("prompt") {
			checkPrompt(a.Editor.Prompt, ap.editorAt("prompt"), what+": editor")
		}
	}
}

// templateError matches text/template's errors in a report or prompt template:
// "template: report:LINE: reason" when parsing, "template: report:LINE:COL:
// executing "report" at <…>: reason" when executing.
var templateError = regexp.MustCompile(`^template: (?:report|prompt):(\d+)(?::\d+)?: (?:executing "[^"]*" (at <.*?>): (?:error calling \w+: )?)?(.*)$`)

// templateReason is a prompt template's error as a problem says it: "line 1: …"
// (checkPrompts, checkPasses).
func templateReason(err error) string {
	reason := err.Error()
	if m := templateError.FindStringSubmatch(reason); m != nil {
		reason = "line " + m[1] + ": " + m[3]
		if m[2] != "" {
			reason = "line " + m[1] + ": " + m[2] + ": " + m[3]
		}
	}
	return reason
}

var (
	// subjectRes read the subject a message states for a piece of writing: "we need a
	// post on X", "let's write about X", "a brief for X", "нужна статья про X".
	subjectRes = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(?:post|article|blog|brief|proposal|piece|write-?up|document|doc|memo|report|story|guide|plan|pitch|newsletter)s?\s+(?:on|about|for|regarding|covering)\s+(.+)$`),
		regexp.MustCompile(`(?i)\b(?:write|writing|cover|covering|draft|drafting)\s+(?:(?:a|an|the|some|up|something)\s+)*(?:about|on)\s+(.+)$`),
		regexp.MustCompile(`(?i)(?:^|\s)(?:пост\p{L}*|стать\p{L}*|бриф\p{L}*|текст\p{L}*|заметк\p{L}*|заявк\p{L}*|написать)\s+(?:про|о|об|на тему)\s+(.+)$`),
	}
	// questionWords begin a question: a question put to the bot never states a topic.
	questionWords = []string{"what", "how", "why", "who", "which", "when", "where", "can", "could", "do", "does", "is", "are",
		"will", "would", "should", "что", "как", "почему", "кто", "какой", "какие", "когда", "где", "можно", "зачем"}
)

// StatedSubject returns the subject that message text (one message of a thread, as
// typed) states for a piece of writing ("We need an article on schema migrations" →
// "schema migrations"), or "" when it states none. A question ("What can you do?")
// never states one, whatever it mentions: it is asked of the bot, not given as a
// topic.
func StatedSubject(text string) string {
	text = strings.TrimSpace(strings.Join(strings.Fields(text), " "))
	words := strings.Fields(strings.ToLower(text))
	if len(words) == 0 || strings.HasSuffix(text, "?") || slices.Contains(questionWords, strings.Trim(words[0], ",.!:")) {
		return ""
	}
	for _, re := range subjectRes {
		if m := re.FindStringSubmatch(text); m != nil {
			if s := strings.TrimRight(strings.TrimSpace(m[1]), ".!;:,"); s != "" {
				return s
			}
		}
	}
	return ""
}
