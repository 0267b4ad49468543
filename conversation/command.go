package conversation

import (
	"fmt"
	"regexp"
	"strings"
)

// The subcommands of /threadwright, of an @mention text command in a thread, and of the
// shortcut menu (docs/architecture.md, "Commands").
const (
	CmdStart   = "start"   // start <workflow> [text]: the text fills the first required input
	CmdList    = "list"    // the workflows there are
	CmdStatus  = "status"  // the artifacts and their statuses
	CmdRestart = "restart" // restart <artifact>: back to options, dependents stale
	CmdEdit    = "edit"    // edit <artifact> <instructions>
	CmdExport  = "export"  // render the report now, unapproved parts marked
	CmdCancel  = "cancel"  // cancel the workflow
	CmdHelp    = "help"
)

// commands are the subcommands in the order help lists them: how each is typed, what
// it does (one line, in each supported language: whatRu is the Russian) and an example.
var commands = []struct{ usage, what, whatRu, example string }{
	{"start <workflow> [text]", "start a workflow in a new thread; the text says what it is about", "начать процесс в новой ветке; текст говорит, о чём он", "start blog Go generics for data engineers"},
	{"list", "the workflows there are, and yours running here with links", "какие процессы есть и ваши запущенные здесь, со ссылками", "list"},
	{"status", "the artifacts of your workflow and where each stands, with a link to its thread", "артефакты вашего процесса и их состояние, со ссылкой на ветку", "status"},
	{"restart <artifact>", "new options for an artifact; the ones that depend on it go stale", "новые варианты для артефакта; зависящие от него устаревают", "restart audience"},
	{"edit <artifact> <instructions>", "rewrite an artifact as asked", "переписать артефакт по указаниям", "edit name make it shorter"},
	{"export", "the report now, unapproved parts marked", "отчёт сейчас, неутверждённые части помечены", "export"},
	{"cancel", "stop the workflow", "остановить процесс", "cancel"},
	{"help", "this list", "этот список", "help"},
}

// CommandUsageHint is the usage hint of the /threadwright slash command (the app
// manifest's usage_hint): every subcommand, as typed.
var CommandUsageHint = func() string {
	var us []string
	for _, c := range commands {
		us = append(us, c.usage)
	}
	return strings.Join(us, " | ")
}()

// commandUsage lists the subcommands in lang ("en" or "ru"), each with what it does
// and an example, for help and for an unknown subcommand.
func commandUsage(lang string) string {
	var b strings.Builder
	for _, c := range commands {
		what := c.what
		if lang == "ru" {
			what = c.whatRu
		}
		fmt.Fprintf(&b, "• `%s` — %s. %s `/threadwright %s`\n", c.usage, what, tr(lang, "help.example"), c.example)
	}
	b.WriteString(tr(lang, "help.where"))
	return b.String()
}

// command is a parsed command line.
type command struct {
	name string
	// arg is the first argument (a workflow or artifact id), rest what follows it.
	arg, rest string
	// thread is a thread named by a link in the line ("" when none).
	thread Key
}

// threadLink matches a Slack message link, as pasted (optionally in <…|…>):
// https://team.slack.com/archives/C123/p1700000000000100?thread_ts=1700000000.000100
var threadLink = regexp.MustCompile(`<?https?://[^\s/]+/archives/([A-Z0-9]+)/p(\d{10})(\d{6})(?:\?[^\s>|]*?thread_ts=(\d{10}\.\d{6}))?[^\s>|]*(?:\|[^>]*)?>?`)

// parseCommand reads line ("restart budget", "edit budget make it shorter"). known
// reports whether its first word is a subcommand; an empty line is help.
func parseCommand(line string) (c command, known bool) {
	if m := threadLink.FindStringSubmatch(line); m != nil {
		ts := m[2] + "." + m[3]
		if m[4] != "" {
			ts = m[4]
		}
		c.thread = Key{ChannelID: m[1], ThreadTS: ts}
		line = strings.Replace(line, m[0], " ", 1)
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return command{name: CmdHelp, thread: c.thread}, true
	}
	c.name = strings.ToLower(fields[0])
	switch c.name {
	case CmdStart, CmdList, CmdStatus, CmdRestart, CmdEdit, CmdExport, CmdCancel, CmdHelp:
		known = true
	}
	if len(fields) > 1 {
		c.arg = strings.ToLower(strings.Trim(fields[1], "`*_"))
		c.rest = strings.TrimSpace(strings.Join(fields[2:], " "))
	}
	return c, known
}

// isTextCommand reports whether a mention's text is a command rather than a question:
// its first word is a subcommand and it has the shape that subcommand takes. "help me
// write a haiku" is a question; "help" is a command; "start blog about X" is a command
// when wfs has a workflow named blog.
func isTextCommand(text string, wfs Workflows) bool {
	c, known := parseCommand(text)
	if !known || strings.TrimSpace(text) == "" {
		return false
	}
	switch c.name {
	case CmdList, CmdStatus, CmdExport, CmdCancel, CmdHelp:
		return c.arg == ""
	case CmdStart:
		if c.arg == "" {
			return false
		}
		if c.rest == "" {
			return true
		}
		_, ok := wfs.Get(c.arg)
		return ok
	case CmdRestart:
		return c.arg != "" && c.rest == ""
	case CmdEdit:
		return c.arg != ""
	}
	return false
}
