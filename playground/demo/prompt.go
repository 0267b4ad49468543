package demo

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Reading the workflow prompts (prompts/templates): the system prompt's
// sections, the blocks quoted with "> ", the options, criteria and items
// they list, the team's inputs, and the notes the demo added to a text that
// comes back in a later prompt.

var (
	documentRe = regexp.MustCompile(`(?m)^## The document: (.+)$`)
	artifactRe = regexp.MustCompile("(?m)^## The artifact now: (.+) \\(`([^`]+)`\\)$")
	depRe      = regexp.MustCompile("^### (.+) \\(`([^`]+)`\\)$")
	otherRe    = regexp.MustCompile("^- (.+) \\(`([^`]+)`\\): (.*)$")
)

// promptSections are the headings of the workflow_system template's sections. Inside
// "## Approved artifacts to build on" any other "## " line belongs to an artifact's
// text (the blog outline's sections, the items of a foreach artifact).
var promptSections = []string{
	"## The document:", "## The artifact now:", "## Approved artifacts", "## Other approved artifacts",
	"## Earlier in the thread", "## Recent messages", "## Language", "## Format", "## Saving",
}

func isPromptSection(line string) bool {
	return slices.ContainsFunc(promptSections, func(p string) bool { return strings.HasPrefix(line, p) })
}

// artifactDescription reads the artifact's description: the lines after its heading,
// up to "How it is made".
func artifactDescription(rest string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimLeft(rest, "\n"), "\n") {
		if strings.HasPrefix(l, "How it is made") || strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			break
		}
		lines = append(lines, l)
	}
	return oneLine(strings.Join(lines, " "))
}

// quotedAfter returns the block quoted with "> " (the templates' quote function)
// on the lines right after the line that starts with marker, or "".
func quotedAfter(text, marker string) string {
	i := strings.Index(text, marker)
	if i < 0 {
		return ""
	}
	rest := text[i:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(rest[nl+1:], "\n") {
		if !strings.HasPrefix(l, ">") {
			break
		}
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, ">"), " "))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

var (
	listedOptionRe = regexp.MustCompile(`^([A-Z])\. (.*?): (.*)$`)
	selectedRe     = regexp.MustCompile(`(?m)^The team chose option ([A-Z]), "(.*)":$`)
	criterionRe    = regexp.MustCompile(`^- ([^:\s]+): (.*)$`)
)

// listedOptions reads the lines "A. Title: text" that follow the line starting with
// marker, up to a blank line.
func listedOptions(text, marker string) []workflow.Option {
	i := strings.Index(text, marker)
	if i < 0 {
		return nil
	}
	var out []workflow.Option
	for _, l := range strings.Split(text[i:], "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		if m := listedOptionRe.FindStringSubmatch(l); m != nil {
			out = append(out, workflow.Option{Label: m[1], Title: m[2], Text: m[3]})
		}
	}
	return out
}

// selectedOption reads the option the team chose from a write task.
func selectedOption(text string) (option, bool) {
	m := selectedRe.FindStringSubmatchIndex(text)
	if m == nil {
		return option{}, false
	}
	title := text[m[4]:m[5]]
	body := quotedAfter(text[m[0]:], "The team chose option")
	return option{Title: title, Text: body}, true
}

type criterion struct{ ID, Description string }

// listedCriteria reads the "- id: description" lines after "Criteria:".
func listedCriteria(text string) []criterion {
	i := strings.Index(text, "Criteria:")
	if i < 0 {
		return nil
	}
	var out []criterion
	for _, l := range strings.Split(text[i:], "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		if m := criterionRe.FindStringSubmatch(l); m != nil {
			// A critical criterion ends with the evaluation prompt's mark.
			out = append(out, criterion{ID: m[1], Description: strings.TrimSuffix(m[2], " (critical: must pass)")})
		}
	}
	return out
}

// item is the item a request is about: the line "Item <n> of <total>: <title>" of
// the task (prompts.Item), and the brief quoted under it.
type item struct {
	N, Total     int
	Title, Brief string
}

var itemRe = regexp.MustCompile(`Item (\d+) of (\d+): (.+)`)

// readItem reads the item line of a task (the user message; the system prompt's
// history may quote such lines from the thread), or returns nil.
func readItem(text string) *item {
	m := itemRe.FindStringSubmatchIndex(text)
	if m == nil {
		return nil
	}
	n, _ := strconv.Atoi(text[m[2]:m[3]])
	total, _ := strconv.Atoi(text[m[4]:m[5]])
	title := strings.Trim(strings.TrimSpace(text[m[6]:m[7]]), "*“”\"")
	return &item{N: n, Total: total, Title: title, Brief: quotedAfter(text[m[0]:], "Item ")}
}

var (
	// batchRe is the first line of a batch write's items
	// (prompts/templates/artifact_write.tmpl).
	batchRe = regexp.MustCompile(`Write all (\d+) items in one text, one "## " section per item, titled exactly as below:`)
	// batchItemRe is an item line of a batch write.
	batchItemRe = regexp.MustCompile(`^[\s*_>-]*Item (\d+) of (\d+):[*_]*\s*(.+?)\s*$`)
)

// readBatch reads the items of a batch write: the lines "Item <n> of <total>: <title>"
// after batchRe's line, each with the lines indented under it as its brief; nil when
// the task is no batch write.
func readBatch(text string) []item {
	loc := batchRe.FindStringIndex(text)
	if loc == nil {
		return nil
	}
	var out []item
	var brief []string
	flush := func() {
		if len(out) > 0 && len(brief) > 0 {
			out[len(out)-1].Brief = strings.TrimSpace(strings.Join(brief, "\n"))
		}
		brief = nil
	}
	for _, l := range strings.Split(text[loc[1]:], "\n") {
		if m := batchItemRe.FindStringSubmatch(l); m != nil {
			flush()
			n, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			out = append(out, item{N: n, Total: total, Title: m[3]})
			continue
		}
		indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, ">")
		switch {
		case len(out) > 0 && indented && strings.TrimSpace(l) != "":
			brief = append(brief, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), ">")))
		case strings.TrimSpace(l) == "":
		default: // the brief ends; the items may go on after other lines
			flush()
		}
	}
	flush()
	return out
}

// numberRe reads the first number of an input's value: "1500", "1,500 words".
var numberRe = regexp.MustCompile(`\d[\d,]*`)

// readInput returns the input id's value in the system prompt's "## What the team
// asked for" ("- Label (`id`): value"), one line, or "".
func readInput(system, id string) string {
	re := regexp.MustCompile("(?m)^- .+ \\(`" + regexp.QuoteMeta(id) + "`\\): (.+)$")
	if m := re.FindStringSubmatch(system); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

var (
	// notesRe matches the notes apply adds, removed before a revision adds its own.
	notesRe = regexp.MustCompile(`(?m)^_(Written|Revised) as asked: .*_\s*$`)
	// asAskedRe matches the sentence options adds for the team's instructions.
	asAskedRe = regexp.MustCompile(` As asked: .*$`)
)

// failedCriteria returns the criteria an automatic revision's request lists after
// "The evaluation failed" (lines "- description (critical): reason"), each as
// “description”, or nil when instr is no such request.
func failedCriteria(instr string) []string {
	_, list, ok := strings.Cut(instr, "The evaluation failed")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(list, "\n") {
		desc, found := strings.CutPrefix(strings.TrimSpace(l), "- ")
		if !found {
			continue
		}
		if i := strings.Index(desc, ": "); i >= 0 {
			desc = desc[:i]
		}
		desc = strings.TrimSuffix(desc, " (critical)")
		out = append(out, "“"+trimEnd(desc)+"”")
	}
	return out
}
