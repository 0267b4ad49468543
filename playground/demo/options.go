package demo

import (
	"slices"
	"strings"
)

// The options task (commit_artifact_options) and the selection task
// (commit_artifact_selection).

type optionArgs struct {
	Label string `json:"label"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// optionsTask answers the options and selection tasks of a workflow.
type optionsTask struct{ *workflowTask }

// options proposes the options: as many as the schema's minItems, labelled by its
// label enum, from the artifact's pool, skipping the ones proposed last time.
func (t optionsTask) options() []optionArgs {
	labels := t.optionLabels()
	n := len(labels)
	prev := map[string]bool{}
	for _, o := range listedOptions(t.text, "These options were proposed before") {
		prev[strings.ToLower(o.Title)] = true
	}
	var pool []option
	if t.content != nil {
		pool = t.content.Options
	}
	picked := pickOptions(pool, prev, n)
	if len(picked) < n {
		picked = append(picked, pickOptions(t.genericOptions(), prev, n-len(picked))...)
	}
	instr := quotedAfter(t.text, "The team asked for this in the new options:")
	out := make([]optionArgs, n)
	for i, o := range picked {
		text := t.fill(o.Text)
		if instr != "" {
			if wantsShorter(instr) {
				text = firstSentences(text, 1)
			}
			text += " As asked: " + trimEnd(oneLine(instr)) + "."
		}
		out[i] = optionArgs{Label: labels[i], Title: o.Title, Text: text}
	}
	return out
}

// optionLabels reads the labels of commit_artifact_options' schema: its label enum,
// or A, B, C… for minItems.
func (t optionsTask) optionLabels() []string {
	opts := prop(t.schema, "options")
	n := intOf(opts["minItems"], workflowDefaultOptions)
	labels := enumOf(prop(itemsOf(opts), "label"))
	if len(labels) != n {
		labels = make([]string, n)
		for i := range labels {
			labels[i] = string(rune('A' + i))
		}
	}
	return labels
}

// workflowDefaultOptions is the option count when the schema names none.
const workflowDefaultOptions = 3

// pickOptions returns n options of pool: those whose titles are not in prev first, in
// order, then the others.
func pickOptions(pool []option, prev map[string]bool, n int) []option {
	var fresh, old []option
	for _, o := range pool {
		if prev[strings.ToLower(o.Title)] {
			old = append(old, o)
		} else {
			fresh = append(fresh, o)
		}
	}
	all := append(fresh, old...)
	return all[:min(n, len(all))]
}

// genericOptions are the options of an artifact without canned content.
func (t optionsTask) genericOptions() []option {
	title := "“" + orDefault(t.artifactTitle, "this artifact") + "”"
	if t.topic != "" {
		title += " for “" + t.topic + "”"
	}
	desc := sentence(t.description)
	if desc == "" {
		desc = "what the team needs from it."
	}
	out := make([]option, len(genericAngles))
	for i, a := range genericAngles {
		text := strings.NewReplacer("{title}", title, "{description}", desc).Replace(a.text)
		out[i] = option{Title: a.title, Text: text}
	}
	return out
}

// selection reads the reply of the artifact_selection task.
func (t optionsTask) selection() map[string]any {
	reply := quotedAfter(t.text, "A person replied in the thread:")
	opts := listedOptions(t.text, "The team was shown these options")
	label, instr, regen := interpret(reply, opts)
	if labels := enumOf(prop(t.schema, "label")); label != "" && len(labels) > 0 && !slices.Contains(labels, label) {
		label = ""
	}
	return map[string]any{"label": label, "instructions": instr, "regenerate": regen}
}
