package workflowrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// decode runs the turn's input as a step: a click, a command, the pipeline's next
// part, or a person's message in the thread. It returns the person's message, to
// be saved with the turn, and handled false for a message that is not for the
// workflow, or a reply the "Just a question" button gave the assistant
// (assistant.Handler.AnswerQuestion); err is the step's.
func (t decoder) decode(ctx context.Context) (user conversation.Message, handled bool, err error) {
	in := t.r.In
	switch in.Kind {
	case conversation.KindAction:
		t.user = in.Action.UserID
		err = t.action(ctx, *in.Action)
		if err == nil && t.question != "" {
			return user, false, nil
		}
	case conversation.KindCommand:
		t.user = in.Command.UserID
		c, known := parseCommand(in.Command.Line)
		switch {
		case in.Command.Source == conversation.SourceShortcut && in.Command.Line == "":
			err = t.shortcut(ctx, in.Command.MessageTS)
		case !known:
			err = errUsage{render.Tr(t.lang, "unknown_command", c.name) + "\n" + render.CommandUsage(t.lang)}
		default:
			err = t.command(ctx, c, "")
		}
	case conversation.KindPipeline:
		err = pipelineRun(t).runPipeline(ctx)
	case conversation.KindUserMessage:
		m := in.Message
		t.user = m.UserID
		user = conversation.Message{Role: conversation.RoleUser, UserID: m.UserID, Text: m.Text, SlackTS: m.TS}
		if IsTextCommand(m.Text, t.s.cfg.Workflows) && (m.Mentioned || m.Direct) {
			c, _ := parseCommand(m.Text)
			if c.name == conversation.CmdStart {
				if files := t.fileText(ctx, m); files != "" {
					c.rest = strings.TrimSpace(c.rest + "\n\n" + files) // an attached brief
					user.Text += "\n\n" + files
				}
			}
			return user, true, t.command(ctx, c, m.Text)
		}
		if t.def() == nil {
			return user, false, nil
		}
		text := m.Text
		if len(t.def().MissingInputs(t.ws().Inputs)) > 0 {
			if files := t.fileText(ctx, m); files != "" {
				text = strings.TrimSpace(text + "\n\n" + files) // a reply to an input's question
				user.Text = text
			}
		}
		handled, err = t.message(ctx, text)
		return user, handled, err
	}
	return user, true, err
}

// command runs a parsed command in this thread.
func (t decoder) command(ctx context.Context, c command, hint string) error {
	switch c.name {
	case conversation.CmdHelp:
		t.reply = render.CommandUsage(t.lang)
		return nil
	case conversation.CmdList:
		var lines []string
		for _, d := range t.s.cfg.Workflows.All() {
			lines = append(lines, fmt.Sprintf("• `%s` — *%s*: %s", d.Name, d.Title, d.Description))
		}
		t.reply = strings.Join(lines, "\n")
		return nil
	case conversation.CmdStart:
		if c.arg == "" {
			return errUsage{render.Tr(t.lang, "unknown_workflow", "", strings.Join(t.s.cfg.Workflows.Names(), ", "))}
		}
		return t.start(ctx, c.arg, c.rest, hint)
	}
	if t.ws() == nil || t.ws().Status == workflow.RunCancelled {
		return errUsage{render.Tr(t.lang, "none_running")}
	}
	switch c.name {
	case conversation.CmdStatus:
		t.reply = "" // the status card is the answer
		card := t.cards().Status(t.ws(), t.m.Waiting(t.ws()))
		if cmd := t.r.In.Command; cmd != nil && cmd.Origin != "" {
			// Typed in a channel: answered there, to the user only, with a link to
			// the thread (docs/workflows.md, "Commands").
			link := t.s.threadLink(ctx, t.key, render.Tr(t.lang, "open_thread"))
			card.Blocks = append(card.Blocks, conversation.Block{Kind: conversation.BlockContext, Text: link})
			where := conversation.Key{TeamID: t.key.TeamID, ChannelID: cmd.Origin}
			return t.s.cfg.Messenger.PostEphemeralCard(ctx, where, t.user, card)
		}
		_, err := t.r.Out.PostCard(ctx, card)
		return err
	case conversation.CmdExport:
		return t.upload(ctx, true, render.Tr(t.lang, "export", t.def().Title))
	case conversation.CmdCancel:
		if err := t.m.Cancel(t.ws(), t.user); err != nil {
			return err
		}
		t.state.Mode = conversation.ModeAssistant
		author(t).dropAsk(render.Tr(t.lang, "write_approval.cancelled"))
		pipelineRun(t).endPipeline(ctx, "⏹ "+render.Tr(t.lang, "pipeline.cancelled")) // a pending part then finds none
		t.reply = render.Tr(t.lang, "cancelled", t.def().Title, t.user)
		return nil
	case conversation.CmdRestart, conversation.CmdEdit:
		if _, _, err := t.m.Artifact(t.ws(), c.arg); err != nil {
			return err
		}
		t.m.Reopen(t.ws())
		t.state.Mode = conversation.ModeWorkflow
		if c.name == conversation.CmdRestart {
			return t.restart(ctx, c.arg)
		}
		return t.edit(ctx, c.arg, c.rest)
	}
	return errUsage{render.Tr(t.lang, "unknown_command", c.name) + "\n" + render.CommandUsage(t.lang)}
}

// shortcut answers the message shortcut on one of the bot's messages: for an
// artifact's message, a menu (only the user sees) to restart or edit it; otherwise the
// workflow's status, or help.
func (t decoder) shortcut(ctx context.Context, messageTS string) error {
	if t.def() == nil || t.m.Running(t.ws()) != nil {
		t.ephemeral(ctx, render.CommandUsage(t.lang))
		return nil
	}
	for _, a := range t.def().Artifacts {
		st := t.ws().Artifacts[a.ID]
		if st.MessageTS == messageTS {
			card := t.cards().MenuCard(&a, st)
			if err := t.s.cfg.Messenger.PostEphemeralCard(ctx, t.key, t.user, card); err != nil {
				t.log.Warn("ephemeral menu not posted", "error", err)
			}
			return nil
		}
	}
	if err := t.s.cfg.Messenger.PostEphemeralCard(ctx, t.key, t.user, t.cards().Status(t.ws(), t.m.Waiting(t.ws()))); err != nil {
		t.log.Warn("ephemeral status not posted", "error", err)
	}
	return nil
}

// action runs a click or a modal submission.
func (t decoder) action(ctx context.Context, a conversation.ActionInput) error {
	act := a.Action
	if act.Name == conversation.ActionCommand {
		c, _ := parseCommand(act.Arg)
		return t.command(ctx, c, "")
	}
	if act.Name == conversation.ActionRetry {
		return t.runRetry(ctx, a)
	}
	if t.def() == nil {
		return &workflow.Refusal{Reason: workflow.NotCurrent}
	}
	switch act.Name {
	case conversation.ActionApproveTool, conversation.ActionDenyTool: // a write's confirmation (ask.go)
		return author(t).decide(ctx, a)
	case conversation.ActionInputs: // modal.go
		return t.submitInputs(ctx, a)
	case conversation.ActionTopicKeep, conversation.ActionTopicChange:
		return t.decideTopic(ctx, a)
	case conversation.ActionStop, conversation.ActionContinue:
		return t.pipelineAction(ctx, act)
	case conversation.ActionFullText:
		return t.fullText(ctx, act.Artifact)
	case conversation.ActionKeepAll, conversation.ActionRegenerateAll:
		if err := t.m.Running(t.ws()); err != nil || t.ws().Stale == nil || t.ws().Stale.Changed != act.Arg {
			return &workflow.Refusal{Reason: workflow.NotCurrent}
		}
		if act.Name == conversation.ActionKeepAll {
			return t.keepAll(ctx)
		}
		return t.regenerateAll(ctx, a.Text)
	case conversation.ActionRestart, conversation.ActionEdit:
		t.m.Reopen(t.ws())
		t.state.Mode = conversation.ModeWorkflow
	}
	if err := t.m.Current(t.ws(), act.Artifact, act.Rev); err != nil {
		return err
	}
	return t.artifactAction(ctx, a)
}

// pipelineAction runs a click on the pipeline's progress message: its Stop, clicked
// between two of its turns, or Continue after a stop.
func (t decoder) pipelineAction(ctx context.Context, act conversation.Action) error {
	if act.Name == conversation.ActionStop {
		if t.m.Running(t.ws()) != nil {
			return nil
		}
		id := strings.TrimPrefix(act.Arg, conversation.RunStopPrefix)
		if act.Arg == conversation.SessionStop && t.ws().Pipeline != nil {
			id = t.ws().Pipeline.ID // the session's native Stop names no run: the one under way
		}
		if err := t.m.Pipeline().Stop(t.ws(), id, t.user); err != nil {
			return err
		}
		poster(t).showProgress(ctx, true)
		return nil
	}
	if err := t.m.Running(t.ws()); err != nil {
		return &workflow.Refusal{Reason: workflow.NotCurrent}
	}
	if err := t.m.Pipeline().Continue(t.ws(), act.Arg); err != nil {
		return err
	}
	poster(t).showProgress(ctx, true)
	pipelineRun(t).continuePipeline()
	return nil
}

// artifactAction runs a click on an artifact's message, current for its revision.
func (t decoder) artifactAction(ctx context.Context, a conversation.ActionInput) error {
	act, id := a.Action, a.Action.Artifact
	switch act.Name {
	case conversation.ActionPick:
		return author(t).pick(ctx, id, act.Arg, "")
	case conversation.ActionRegenerate:
		if st := t.ws().Artifacts[id]; st.Status != workflow.StatusOptionsGenerated {
			return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
		}
		return author(t).propose(ctx, id, supersede{why: supersededRegenerated})
	case conversation.ActionApprove:
		if act.Arg == render.MeaningArg {
			// The Approve of the card that asked what a reply meant: it is answered.
			poster(t).closeMeaning(ctx, a.MessageTS, render.Tr(t.lang, "approve"))
		}
		return t.approve(ctx, id)
	case conversation.ActionRequestChanges:
		if st := t.ws().Artifacts[id]; st.Status != workflow.StatusGenerated {
			return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
		}
		return author(t).rewrite(ctx, id, a.Text, "changes requested: "+a.Text, false)
	case conversation.ActionReplyChange, conversation.ActionReplyQuestion:
		return t.replyAction(ctx, id, a)
	case conversation.ActionKeep:
		return t.keepStale(ctx, id)
	case conversation.ActionRegenerateStale:
		return t.regenerate(ctx, id, a.Text)
	case conversation.ActionRestart:
		return t.restart(ctx, id)
	case conversation.ActionEdit:
		return t.edit(ctx, id, a.Text)
	}
	return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
}

// message handles a person's reply in a workflow thread: a choice among the options
// shown, or a decision on the artifact under review (decide); when the next artifact
// should be produced but is not (producing it failed after an action that was kept),
// any reply tries that again. handled is false when nothing awaits a reply (the
// assistant answers it then).
func (t decoder) message(ctx context.Context, text string) (handled bool, err error) {
	if t.m.Running(t.ws()) != nil || t.ws().TopicHeld {
		return false, nil // a held topic waits for the start card's buttons
	}
	if handled, err := t.fillInput(ctx, text); handled {
		return true, err
	}
	plan := workflow.Next(t.def(), t.ws())
	if plan.Propose != "" || plan.Write != "" {
		return true, t.advance(ctx)
	}
	id := plan.Review
	if id == "" {
		return false, nil
	}
	st := t.ws().Artifacts[id]
	switch st.Status {
	case workflow.StatusOptionsGenerated:
		sel, u, err := t.s.cfg.Agent.InterpretReply(ctx, t.request(id, ""), text)
		t.add(u)
		if err != nil {
			return true, fmt.Errorf("interpret reply: %w", err)
		}
		switch {
		case sel.Regenerate:
			return true, author(t).propose(ctx, id, supersede{why: supersededRegenerated})
		case sel.Label != "":
			return true, author(t).pick(ctx, id, sel.Label, sel.Instructions)
		}
		t.reply = render.Tr(t.lang, "reply_unclear")
		return true, nil
	case workflow.StatusGenerated:
		return t.decide(ctx, id, text) // reply.go
	}
	return false, nil
}

// runRetry runs again the step of State.Retry, as the person who clicked Retry, through
// the same code as its first run; a button of an older failure is out of date.
func (t decoder) runRetry(ctx context.Context, a conversation.ActionInput) error {
	if a.Action.Artifact != "" {
		return pipelineRun(t).retryItems(ctx, a) // a pipeline artifact's failed items (pipeline.go)
	}
	orig := t.retry
	if orig == nil || orig.ID != a.Action.Arg {
		t.ephemeral(ctx, render.Tr(t.lang, "retry.gone"))
		return errTold{&workflow.Refusal{Reason: workflow.NotCurrent}}
	}
	t.rerun = orig
	poster(t).closeRetried(ctx, a)
	switch {
	case orig.Kind == conversation.KindAction && orig.Action != nil && orig.Action.Action.Name == actionAdvance:
		return t.advance(ctx) // the step after a kept action (then)
	case orig.Kind == conversation.KindAction && orig.Action != nil && orig.Action.Action.Name == actionTyped && orig.Message != nil:
		// A typed command, decision or choice: read again as the turn first did.
		m := orig.Message
		if IsTextCommand(m.Text, t.s.cfg.Workflows) && (m.Mentioned || m.Direct) {
			c, _ := parseCommand(m.Text)
			return t.command(ctx, c, m.Text)
		}
		handled, err := t.message(ctx, m.Text)
		if err == nil && !handled {
			return &workflow.Refusal{Reason: workflow.NotCurrent} // nothing awaits it now
		}
		return err
	case orig.Kind == conversation.KindAction && orig.Action != nil:
		again := *orig.Action
		again.UserID = a.UserID
		return t.action(ctx, again)
	case orig.Kind == conversation.KindCommand && orig.Command != nil:
		c, _ := parseCommand(orig.Command.Line)
		return t.command(ctx, c, "")
	}
	return &workflow.Refusal{Reason: workflow.NotCurrent}
}

// fullText posts artifact id's current text (a foreach artifact's items joined) to the
// person who clicked, split over messages when it is long.
func (t decoder) fullText(ctx context.Context, id string) error {
	a, ok := t.def().Artifact(id)
	st := t.ws().Artifacts[id]
	if !ok || st == nil {
		return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
	}
	text := st.Text
	if strings.TrimSpace(text) == "" && len(st.Items) > 0 {
		text = workflow.JoinItems(a, st.Items)
	}
	t.ephemeral(ctx, "*"+a.Title+"*\n\n"+t.s.cfg.Format(workflow.StripNotes(text)))
	return nil
}

// fileText returns the text of the files of a person's message (Config.Files),
// fenced as untrusted content, or "" when it has none or none could be read.
func (t decoder) fileText(ctx context.Context, m *conversation.UserMessage) string {
	if t.s.cfg.Files == nil || (len(m.Files) == 0 && !m.FileShare) {
		return ""
	}
	files, err := t.s.cfg.Files.ReadFiles(ctx, t.r.In.Key, m)
	if err != nil {
		t.log.WarnContext(ctx, "could not read the message's files", "error", err)
		return ""
	}
	var parts []string
	for _, f := range files {
		if f.Refused == "" && f.Image == nil && f.Text != "" {
			parts = append(parts, f.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
