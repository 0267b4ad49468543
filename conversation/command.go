package conversation

import (
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

// Commands are the subcommands in the order help lists them: how each is typed, what
// it does (one line, in each supported language: whatRu is the Russian) and an example.
var Commands = []struct{ Usage, What, WhatRu, Example string }{
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
	for _, c := range Commands {
		us = append(us, c.Usage)
	}
	return strings.Join(us, " | ")
}()
