package workflowrun

import (
	"regexp"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// FreeCommand reports whether command line only reads or ends a workflow (cancel,
// help, list, status): it asks a model for nothing, and a person past a budget can
// still cancel a run whose pipeline goes on spending.
func FreeCommand(line string) bool {
	c, _ := parseCommand(line)
	switch c.name {
	case conversation.CmdCancel, conversation.CmdHelp, conversation.CmdList, conversation.CmdStatus:
		return true
	}
	return false
}

// command is a parsed command line.
type command struct {
	name string
	// arg is the first argument (a workflow or artifact id), rest what follows it.
	arg, rest string
	// thread is a thread named by a link in the line ("" when none).
	thread conversation.Key
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
		c.thread = conversation.Key{ChannelID: m[1], ThreadTS: ts}
		line = strings.Replace(line, m[0], " ", 1)
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return command{name: conversation.CmdHelp, thread: c.thread}, true
	}
	c.name = strings.ToLower(fields[0])
	switch c.name {
	case conversation.CmdStart, conversation.CmdList, conversation.CmdStatus, conversation.CmdRestart, conversation.CmdEdit, conversation.CmdExport, conversation.CmdCancel, conversation.CmdHelp:
		known = true
	}
	if len(fields) > 1 {
		c.arg = strings.ToLower(strings.Trim(fields[1], "`*_"))
		c.rest = strings.TrimSpace(strings.Join(fields[2:], " "))
	}
	return c, known
}

// IsTextCommand reports whether a mention's text is a command rather than a question:
// its first word is a subcommand and it has the shape that subcommand takes. "help me
// write a haiku" is a question; "help" is a command; "start blog about X" is a command
// when wfs has a workflow named blog.
func IsTextCommand(text string, wfs conversation.Workflows) bool {
	c, known := parseCommand(text)
	if !known || strings.TrimSpace(text) == "" {
		return false
	}
	switch c.name {
	case conversation.CmdList, conversation.CmdStatus, conversation.CmdExport, conversation.CmdCancel, conversation.CmdHelp:
		return c.arg == ""
	case conversation.CmdStart:
		if c.arg == "" {
			return false
		}
		if c.rest == "" {
			return true
		}
		_, ok := wfs.Get(c.arg)
		return ok
	case conversation.CmdRestart:
		return c.arg != "" && c.rest == ""
	case conversation.CmdEdit:
		return c.arg != ""
	}
	return false
}
