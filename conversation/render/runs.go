package render

import (
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Run is one workflow run as status and list show it (docs/workflows.md,
// "Commands"): its definition and state, where it stands (Machine.Waiting) and a
// permalink to its thread (chat.getPermalink; "" when there is none).
type Run struct {
	Key     conversation.Key
	Def     *workflow.Definition
	State   *workflow.State
	Waiting workflow.Waiting
	Link    string
}

// Label names r for a button: the workflow's title and its subject, at most 75
// runes (Block Kit's button text limit).
func (r Run) Label() string {
	l := r.Def.Title
	if s := workflow.Subject(r.Def, r.State); s != "" {
		l += " — " + s
	}
	return shorten(l, 74) // with "…": at most 75
}

// RunLine is r as one line of mrkdwn in lang: "• <link|*Title*> — subject · *Step*:
// who it waits for".
func RunLine(lang string, r Run) string {
	title := "*" + r.Def.Title + "*"
	if r.Link != "" {
		title = "<" + r.Link + "|" + title + ">"
	}
	line := "• " + title
	if s := workflow.Subject(r.Def, r.State); s != "" {
		line += " — " + s
	}
	return line + " · " + Waiting(lang, r.Def, r.Waiting)
}

// Waiting says where a run stands for people, in lang: the step (an artifact's
// title) and who it waits for ("*Problem*: awaiting review by <@U1>").
func Waiting(lang string, def *workflow.Definition, w workflow.Waiting) string {
	if w.Artifact == "" {
		return Tr(lang, "run.nothing")
	}
	step := "*" + Cards{Def: def}.Title(w.Artifact) + "*: "
	switch {
	case w.Bot:
		return step + Tr(lang, "run.bot")
	case w.Action == workflow.PermRestart && w.Anyone:
		return step + Tr(lang, "run.topic_anyone")
	case w.Action == workflow.PermRestart:
		return step + Tr(lang, "run.topic", people(lang, w.People))
	case w.Status == workflow.StatusOptionsGenerated:
		return step + Tr(lang, "run.pick")
	case w.Anyone && w.Action == workflow.PermKeep:
		return step + Tr(lang, "run.stale_anyone")
	case w.Action == workflow.PermKeep:
		return step + Tr(lang, "run.stale", people(lang, w.People))
	case w.Anyone:
		return step + Tr(lang, "run.review_anyone")
	}
	return step + Tr(lang, "run.review", people(lang, w.People))
}

// people mentions user IDs: "<@U1>", "<@U1> or <@U2>", "<@U1>, <@U2> or <@U3>".
func people(lang string, ids []string) string {
	m := make([]string, len(ids))
	for i, id := range ids {
		m[i] = "<@" + id + ">"
	}
	if len(m) < 2 {
		return strings.Join(m, "")
	}
	return strings.Join(m[:len(m)-1], ", ") + Tr(lang, "run.or") + m[len(m)-1]
}

// Runs lists several runs in one message: intro, then a RunLine each.
func Runs(lang, intro string, runs []Run) string {
	lines := []string{intro}
	for _, r := range runs {
		lines = append(lines, RunLine(lang, r))
	}
	return strings.Join(lines, "\n")
}
