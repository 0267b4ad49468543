package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The commit functions of the WorkflowAgent (docs/architecture.md, "Workflow machine"):
// the model persists its work by calling them, one per method. Their arguments:
//
//	commit_artifact_options     {"options": [{"label": "A", "title": "…", "text": "…"}, …]}
//	commit_artifact_selection   {"label": "B" or "", "instructions": "…", "regenerate": false}
//	commit_artifact_final_text  {"text": "…"}, or {"text": "", "failure": "…"} (automated writes)
//	commit_evaluation           {"results": [{"id": "…", "pass": true, "reason": "…"}, …]}
//	commit_final_docset         {"summary": "…"}
//	commit_recovery_plan        {"instructions": "…", "queries": ["…", …], "rationale": "…"}
//
// Every argument is required except "failure" and "queries".
const (
	CommitOptionsTool    = "commit_artifact_options"
	CommitSelectionTool  = "commit_artifact_selection"
	CommitFinalTextTool  = "commit_artifact_final_text"
	CommitEvaluationTool = "commit_evaluation"
	CommitDocsetTool     = "commit_final_docset"
	CommitRecoveryTool   = "commit_recovery_plan"
)

// isCommitTool reports whether name is one of the commit functions (an artifact's
// tools cannot name one).
func isCommitTool(name string) bool {
	switch name {
	case CommitOptionsTool, CommitSelectionTool, CommitFinalTextTool, CommitEvaluationTool, CommitDocsetTool, CommitRecoveryTool:
		return true
	}
	return false
}

// Bounds of commit_recovery_plan's queries; maxQuery also bounds an approved query
// (cutQuery).
const (
	maxQueries = 8
	maxQuery   = 200 // bytes, one line
)

// cutQuery makes q, a search query from a model or an approved outline, one line of
// at most maxQuery bytes (textcut.Truncated marks a cut); "" when q is blank.
func cutQuery(q string) string { return textcut.BytesMark(oneLine(q), maxQuery, textcut.Truncated) }

// Bounds of what the commit functions' arguments keep.
const (
	maxOptionTitle = 60  // runes: an option's title is shown on a button
	maxReason      = 300 // bytes: a criterion's reason
)

// notEvaluated is the reason of a criterion the model left out of its evaluation.
const notEvaluated = "Not evaluated: the model gave no result for this criterion."

// optionCount is how many options a choice artifact gets.
func optionCount(a *workflow.Artifact) int {
	n := a.Options
	if n <= 0 {
		n = workflow.DefaultOptions
	}
	return min(n, workflow.MaxOptions)
}

// optionLabels returns the first n labels: "A", "B", …
func optionLabels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('A' + i))
	}
	return out
}

func optionsTool(labels []string) openai.FunctionDefinition {
	n := len(labels)
	label := function.String("the option's letter, in order: " + strings.Join(labels, ", "))
	label["enum"] = labels
	return function.Define(CommitOptionsTool,
		"Save the options proposed for the artifact. Only the options passed here are shown to the team.",
		function.Object(function.Schema{"options": function.Schema{
			"type":        "array",
			"description": fmt.Sprintf("exactly %d options, labelled %s", n, strings.Join(labels, ", ")),
			"minItems":    n,
			"maxItems":    n,
			"items": function.Object(function.Schema{
				"label": label,
				"title": function.String("a few words naming the option, at most 60 characters (shown on a button)"),
				"text":  function.String("the option itself: a short paragraph"),
			}),
		}}))
}

func selectionTool(labels []string) openai.FunctionDefinition {
	label := function.String(`the label of the option the reply chooses, or "" when it chooses none`)
	label["enum"] = append([]string{""}, labels...)
	return function.Define(CommitSelectionTool,
		"Save what the person's reply to the options means.",
		function.Object(function.Schema{
			"label":        label,
			"instructions": function.String(`the changes asked for with the choice, or the guidance for new options, in a few words; "" when none`),
			"regenerate":   function.Schema{"type": "boolean", "description": "true when the reply asks for new options instead of choosing one"},
		}))
}

// finalTextTool is commit_artifact_final_text, for an item's text or the artifact's,
// with the optional "failure" argument when failure is set.
func finalTextTool(item, failure bool) openai.FunctionDefinition {
	what := "the complete text of the artifact, in light Markdown"
	if item {
		what = "the complete text of the item, in light Markdown, without its heading"
	}
	if !failure {
		return function.Define(CommitFinalTextTool,
			"Save the artifact's complete text. Only the text passed here is kept and shown to the team.",
			function.Object(function.Schema{"text": function.String(what)}))
	}
	return function.Define(CommitFinalTextTool,
		"Save the artifact's complete text, or report that the task cannot be done. Only the text passed here is kept.",
		function.Optional(function.Object(function.Schema{
			"text":    function.String(what + `; "" when you set failure`),
			"failure": function.String("set only when the task cannot be done — for research, when nothing relevant was found — with what you tried; leave text empty then"),
		}), "failure"))
}

func recoveryTool() openai.FunctionDefinition {
	return function.Define(CommitRecoveryTool,
		"Save the new instructions for the last try of the failing task.",
		function.Optional(function.Object(function.Schema{
			"instructions": function.String("the new, more specific instructions for the last try: what to do, where to look, what to leave out"),
			"queries": function.Schema{
				"type":        "array",
				"description": fmt.Sprintf("for research: new, more specific search queries, at most %d; empty when searching does not apply", maxQueries),
				"items":       function.String("one search query"),
			},
			"rationale": function.String("one or two sentences: why the new instructions should work where the tries failed"),
		}), "queries"))
}

func evaluationTool(ids []string) openai.FunctionDefinition {
	id := function.String("the criterion's id")
	id["enum"] = ids
	return function.Define(CommitEvaluationTool,
		"Save the evaluation of the text: one result per criterion.",
		function.Object(function.Schema{"results": function.Schema{
			"type":        "array",
			"description": "one result per criterion: " + strings.Join(ids, ", "),
			"items": function.Object(function.Schema{
				"id":     id,
				"pass":   function.Schema{"type": "boolean", "description": "true when the text clearly meets the criterion"},
				"reason": function.String("one short sentence: what meets the criterion, or what is missing"),
			}),
		}}))
}

func docsetTool() openai.FunctionDefinition {
	return function.Define(CommitDocsetTool,
		"Save the short summary posted with the final document.",
		function.Object(function.Schema{"summary": function.String("two to four sentences on what the document sets out")}))
}

// parseOptions reads commit_artifact_options' arguments: exactly len(labels) options,
// each with a text, no two alike. The options get labels by position; a title is
// made one line of at most maxOptionTitle runes, or made from the text when empty.
func parseOptions(args json.RawMessage, labels []string) ([]workflow.Option, error) {
	var in struct {
		Options function.List[struct {
			Label string `json:"label"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}] `json:"options"`
	}
	if err := function.Decode(args, &in); err != nil {
		return nil, err
	}
	if n := len(in.Options); n != len(labels) {
		return nil, fmt.Errorf("the call has %d %s; exactly %d are needed, labelled %s", n, plural(n, "option", "options"), len(labels), strings.Join(labels, ", "))
	}
	out := make([]workflow.Option, len(labels))
	seen := map[string]string{}
	for i, o := range in.Options {
		label := labels[i]
		text := strings.TrimSpace(o.Text)
		if text == "" {
			return nil, fmt.Errorf("option %s has no text", label)
		}
		key := strings.ToLower(oneLine(text))
		if prev, ok := seen[key]; ok {
			return nil, fmt.Errorf("options %s and %s have the same text; every option must be different", prev, label)
		}
		seen[key] = label
		title := oneLine(o.Title)
		for _, sep := range []string{". ", ": ", ") ", " - "} {
			title = strings.TrimPrefix(title, label+sep) // "B. Missed SLAs"
		}
		if title == "" {
			title = firstWords(text, 6)
		}
		out[i] = workflow.Option{Label: label, Title: textcut.Ellipsis(title, maxOptionTitle, spaceOrPunct), Text: text}
	}
	return out, nil
}

// parseSelection reads commit_artifact_selection's arguments against opts.
func parseSelection(args json.RawMessage, opts []workflow.Option) (conversation.Selection, error) {
	var in struct {
		Label        string        `json:"label"`
		Instructions string        `json:"instructions"`
		Regenerate   function.Bool `json:"regenerate"`
	}
	if err := function.Decode(args, &in); err != nil {
		return conversation.Selection{}, err
	}
	sel := conversation.Selection{Instructions: strings.TrimSpace(in.Instructions), Regenerate: bool(in.Regenerate)}
	switch label := strings.TrimSpace(in.Label); strings.ToLower(label) {
	case "", "none", "null", "n/a", "-":
	default:
		l, ok := resolveLabel(label, opts)
		if !ok {
			labels := make([]string, len(opts))
			for i, o := range opts {
				labels[i] = o.Label
			}
			return conversation.Selection{}, fmt.Errorf(`the label %q is not one of the options' labels (%s); use "" when the reply chooses none`, label, strings.Join(labels, ", "))
		}
		sel.Label = l
	}
	if sel.Regenerate && sel.Label != "" {
		// "Like B, but more playful" asks for new options, in the direction of B.
		sel.Instructions = strings.TrimSpace("like option " + sel.Label + "; " + sel.Instructions)
		sel.Instructions = strings.TrimSuffix(sel.Instructions, ";")
		sel.Label = ""
	}
	return sel, nil
}

// cyrillicLabels maps a Cyrillic letter (lower case) to the label it stands for: by
// look (а, в, с, е look like a, b, c, e) or by place in the alphabet (б, г, д).
var cyrillicLabels = map[rune]string{'а': "A", 'б': "B", 'в': "B", 'с': "C", 'г': "D", 'д': "E", 'е': "E"}

// resolveLabel maps s to the label of one of opts when s is nothing but a way to name
// one: its label in any case ("b", "B.", "option B", "вариант Б"), a Cyrillic letter
// (see cyrillicLabels), its position ("2"), or its title.
func resolveLabel(s string, opts []workflow.Option) (string, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) || r == '*' })
	low := strings.ToLower(s)
	for _, prefix := range []string{"option", "variant", "вариант"} {
		if rest, ok := strings.CutPrefix(low, prefix); ok && rest != "" {
			low = strings.TrimSpace(rest)
		}
	}
	if low == "" {
		return "", false
	}
	if r, size := utf8.DecodeRuneInString(low); size == len(low) {
		if l, ok := cyrillicLabels[r]; ok {
			low = strings.ToLower(l)
		}
	}
	for _, o := range opts {
		if strings.EqualFold(low, o.Label) {
			return o.Label, true
		}
	}
	if n, err := strconv.Atoi(low); err == nil && n >= 1 && n <= len(opts) {
		return opts[n-1].Label, true
	}
	for _, o := range opts {
		if t := oneLine(o.Title); t != "" && strings.EqualFold(t, oneLine(s)) {
			return o.Label, true
		}
	}
	return "", false
}

// parseEvaluation reads commit_evaluation's arguments: one result per criterion, in
// the criteria's order. Unknown ids are dropped (and repeated ones after the first);
// a criterion without a result fails with reason notEvaluated. A call without a
// single known id is rejected.
func parseEvaluation(args json.RawMessage, criteria []workflow.Criterion) ([]workflow.CriterionResult, error) {
	var in struct {
		Results function.List[struct {
			ID     string        `json:"id"`
			Pass   function.Bool `json:"pass"`
			Reason string        `json:"reason"`
		}] `json:"results"`
	}
	if err := function.Decode(args, &in); err != nil {
		return nil, err
	}
	ids := make([]string, len(criteria))
	canonical := map[string]string{}
	for i, c := range criteria {
		ids[i] = c.ID
		canonical[strings.ToLower(strings.TrimSpace(c.ID))] = c.ID
	}
	got := map[string]workflow.CriterionResult{}
	for _, r := range in.Results {
		id, ok := canonical[strings.ToLower(strings.TrimSpace(r.ID))]
		if !ok {
			continue
		}
		if _, dup := got[id]; dup {
			continue
		}
		got[id] = workflow.CriterionResult{ID: id, Pass: bool(r.Pass), Reason: textcut.BytesMark(oneLine(r.Reason), maxReason, textcut.Truncated)}
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("no result names a criterion; give one result for each of %s", strings.Join(ids, ", "))
	}
	out := make([]workflow.CriterionResult, len(criteria))
	for i, c := range criteria {
		r, ok := got[c.ID]
		if !ok {
			r = workflow.CriterionResult{ID: c.ID, Pass: false, Reason: notEvaluated}
		}
		out[i] = r
	}
	return out, nil
}

// parseText reads the string argument field of commit_artifact_final_text or
// commit_final_docset, trimmed; it must not be empty.
func parseText(args json.RawMessage, field string) (string, error) {
	var in map[string]json.RawMessage
	if err := function.Decode(args, &in); err != nil {
		return "", err
	}
	raw, ok := in[field]
	if !ok {
		return "", fmt.Errorf("the call has no %q argument", field)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q must be a string", field)
	}
	if s = strings.TrimSpace(s); s == "" {
		return "", errors.New(strconv.Quote(field) + " is empty; pass the complete text")
	}
	return s, nil
}

// finalText is commit_artifact_final_text's result: a text, or the reason the task
// cannot be done.
type finalText struct{ text, failure string }

// parseFinalText reads commit_artifact_final_text's arguments: a text that is not
// empty or, when failure is allowed, an empty text and a "failure" reason. Both set
// is rejected; "failure" is ignored when it is not allowed.
func parseFinalText(args json.RawMessage, failure bool) (finalText, error) {
	var in map[string]json.RawMessage
	if err := function.Decode(args, &in); err != nil {
		return finalText{}, err
	}
	text, hasText, err := stringArg(in, "text")
	if err != nil {
		return finalText{}, err
	}
	var reason string
	if failure {
		if reason, _, err = stringArg(in, "failure"); err != nil {
			return finalText{}, err
		}
	}
	switch {
	case text != "" && reason != "":
		return finalText{}, errors.New(`"text" and "failure" are both set; pass the complete text, or leave "text" empty and set "failure" only when the task cannot be done`)
	case text != "":
		return finalText{text: text}, nil
	case reason != "":
		return finalText{failure: reason}, nil
	case !hasText:
		return finalText{}, errors.New(`the call has no "text" argument`)
	case failure:
		return finalText{}, errors.New(`"text" is empty; pass the complete text, or set "failure" when the task cannot be done`)
	default:
		return finalText{}, errors.New(`"text" is empty; pass the complete text`)
	}
}

// stringArg returns the string argument field of in, trimmed, and whether it is
// there; null counts as absent.
func stringArg(in map[string]json.RawMessage, field string) (string, bool, error) {
	raw, ok := in[field]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Errorf("%q must be a string", field)
	}
	return strings.TrimSpace(s), true, nil
}

// parseRecovery reads commit_recovery_plan's arguments: instructions that are not
// empty, a rationale (may be empty: the new instructions are what matter), and
// queries made one line each, empty and repeated ones dropped, at most maxQueries of
// at most maxQuery bytes.
func parseRecovery(args json.RawMessage) (workflow.Recovery, error) {
	var in struct {
		Instructions string                `json:"instructions"`
		Queries      function.List[string] `json:"queries"`
		Rationale    string                `json:"rationale"`
	}
	if err := function.Decode(args, &in); err != nil {
		return workflow.Recovery{}, err
	}
	out := workflow.Recovery{Instructions: strings.TrimSpace(in.Instructions), Rationale: strings.TrimSpace(in.Rationale)}
	if out.Instructions == "" {
		return workflow.Recovery{}, errors.New(`"instructions" is empty; pass the new instructions for the last try`)
	}
	seen := map[string]bool{}
	for _, q := range in.Queries {
		q = cutQuery(q)
		if key := strings.ToLower(q); q != "" && !seen[key] && len(out.Queries) < maxQueries {
			seen[key] = true
			out.Queries = append(out.Queries, q)
		}
	}
	return out, nil
}

// firstWords returns the first n words of s.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}

// spaceOrPunct reports whether r is white space or punctuation: what a title cut
// with an ellipsis drops before the "…".
func spaceOrPunct(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }

// languages names the languages of common BCP 47 tags, in English with the
// language's own name, for the instruction "write in …".
var languages = map[string]string{
	"en": "English", "en-gb": "British English",
	"ru": "Russian (русский)", "uk": "Ukrainian (українська)", "be": "Belarusian (беларуская)",
	"kk": "Kazakh (қазақ тілі)", "uz": "Uzbek (oʻzbekcha)", "ka": "Georgian (ქართული)",
	"hy": "Armenian (հայերեն)", "az": "Azerbaijani (azərbaycan dili)",
	"de": "German (Deutsch)", "fr": "French (français)", "es": "Spanish (español)",
	"pt": "Portuguese (português)", "pt-br": "Brazilian Portuguese (português do Brasil)",
	"it": "Italian (italiano)", "nl": "Dutch (Nederlands)", "pl": "Polish (polski)",
	"cs": "Czech (čeština)", "sk": "Slovak (slovenčina)", "hu": "Hungarian (magyar)",
	"ro": "Romanian (română)", "bg": "Bulgarian (български)", "sr": "Serbian (српски)",
	"hr": "Croatian (hrvatski)", "sl": "Slovenian (slovenščina)", "el": "Greek (Ελληνικά)",
	"tr": "Turkish (Türkçe)", "sv": "Swedish (svenska)", "da": "Danish (dansk)",
	"nb": "Norwegian (norsk)", "no": "Norwegian (norsk)", "fi": "Finnish (suomi)",
	"et": "Estonian (eesti)", "lv": "Latvian (latviešu)", "lt": "Lithuanian (lietuvių)",
	"he": "Hebrew (עברית)", "ar": "Arabic (العربية)", "fa": "Persian (فارسی)",
	"hi": "Hindi (हिन्दी)", "bn": "Bengali (বাংলা)", "ja": "Japanese (日本語)",
	"ko": "Korean (한국어)", "zh": "Simplified Chinese (简体中文)", "zh-hans": "Simplified Chinese (简体中文)",
	"zh-cn": "Simplified Chinese (简体中文)", "zh-hant": "Traditional Chinese (繁體中文)",
	"zh-tw": "Traditional Chinese (繁體中文)", "zh-hk": "Traditional Chinese (繁體中文)",
	"id": "Indonesian (Bahasa Indonesia)", "ms": "Malay (Bahasa Melayu)",
	"vi": "Vietnamese (Tiếng Việt)", "th": "Thai (ไทย)",
}

// languageName returns the language of a BCP 47 tag such as "ru", "pt-BR" or Slack's
// "ru-RU" for the prompt: the longest known prefix of the tag, or a description of
// an unknown tag; "" for an empty tag.
func languageName(tag string) string {
	tag = strings.TrimSpace(tag)
	if tag == "" {
		return ""
	}
	t := strings.ToLower(strings.ReplaceAll(tag, "_", "-"))
	for {
		if name, ok := languages[t]; ok {
			return name
		}
		i := strings.LastIndexByte(t, '-')
		if i < 0 {
			return fmt.Sprintf("the language of the BCP 47 tag %q", tag)
		}
		t = t[:i]
	}
}

// oneLine collapses runs of white space, newlines included, into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
