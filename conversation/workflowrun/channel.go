package workflowrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Retry of a channel command (docs/workflows.md, "Failures and Retry"): a /threadwright command
// typed in a channel that fails for good is answered, only to the person who typed
// it, with what failed and a Retry button. A click on it is a new command input with
// the same line, as the person who clicks (the only one who sees the ephemeral), in
// the same channel; its id is derived from the failed command's, so a second click,
// or a redelivered one, is the same input and runs nothing more.

// NoWorkflows is the empty set.
type NoWorkflows struct{}

func (NoWorkflows) Get(string) (*workflow.Definition, bool) { return nil, false }

func (NoWorkflows) All() []*workflow.Definition { return nil }

func (NoWorkflows) Names() []string { return nil }

// ChannelCommand runs a /threadwright command typed in a channel (Slack does not
// deliver slash commands typed in threads): start posts a new thread for the workflow;
// the others act on the user's running workflow in the channel, the one a thread link
// names, or ask with a menu when there are several. A command that fails is tried
// again (the input stays pending) until its last attempt, which tells the user, in
// their language, what failed, with a Retry button (conversation/render/commands.go).
func (s *Handler) ChannelCommand(ctx context.Context, r *turns.Run) error {
	in := r.In
	lang := "en"
	if l, err := s.cfg.Messenger.UserLocale(ctx, in.Command.UserID); err == nil {
		lang = render.UILang(l)
	}
	err := s.runChannelCommand(ctx, r, lang)
	switch {
	case err == nil:
		return r.Drop(ctx, conversation.InputDone)
	case errors.Is(err, conversation.ErrLeaseLost) || errors.Is(err, conversation.ErrClosed) || r.ShuttingDown():
		return err // the input stays pending: the thread is handed over
	case in.Attempts < s.cfg.MaxAttempts:
		return err // tried again after a backoff
	}
	r.Log.Error("channel command failed", "error", err)
	fctx, cancel := r.Final(ctx)
	defer cancel()
	card := render.CommandFailedCard(lang, s.channelCommandFailed(lang, err), in) // conversation/render/commands.go
	if perr := s.cfg.Messenger.PostEphemeralCard(fctx, in.Key, in.Command.UserID, card); perr != nil {
		r.Log.Warn("ephemeral not posted", "error", perr)
	}
	return r.Drop(ctx, conversation.InputFailed)
}

// channelCommandFailed is the message of a channel command that failed for good, in
// lang: what failed (failureMessage: the model, a tool, Slack or the database) and
// what its Retry button does (docs/workflows.md, "Failures and Retry").
func (s *Handler) channelCommandFailed(lang string, err error) string {
	return s.failureMessage(lang, err, "retry.command")
}

// runChannelCommand runs ChannelCommand's command.
func (s *Handler) runChannelCommand(ctx context.Context, r *turns.Run, lang string) error {
	cr := channelRun{s: s, r: r, lang: lang}
	c, known := parseCommand(r.In.Command.Line)
	switch {
	case !known:
		cr.tell(ctx, render.Tr(lang, "unknown_command", c.name)+"\n"+render.CommandUsage(lang))
		return nil
	case c.name == conversation.CmdHelp:
		cr.tell(ctx, render.CommandUsage(lang))
		return nil
	case c.name == conversation.CmdList:
		return cr.list(ctx, c)
	case c.name == conversation.CmdStart:
		return cr.start(ctx, c)
	}
	return cr.toRun(ctx, c)
}

// channelRun is a /threadwright command typed in a channel, being run: r's input,
// answered in lang.
type channelRun struct {
	s    *Handler
	r    *turns.Run
	lang string
}

// tell answers the command's author with text only they see.
func (c channelRun) tell(ctx context.Context, text string) {
	in := c.r.In
	if err := c.s.cfg.Messenger.PostEphemeral(ctx, in.Key, in.Command.UserID, text); err != nil {
		c.r.Log.Warn("ephemeral not posted", "error", err)
	}
}

// forward hands the command to the thread key it is for. The forward is the command
// itself, which the flood limits admitted: it is not counted again (the command is
// still pending while it runs).
func (c channelRun) forward(ctx context.Context, key conversation.Key) error {
	in := c.r.In
	// Origin tells the thread's turn where the command was typed: status answers
	// there, only to the user.
	fc := *in.Command
	fc.Origin = in.Key.ChannelID
	fwd := conversation.Input{ID: in.ID + ">" + key.ThreadTS, EventID: in.EventID, Key: key, Kind: conversation.KindCommand, Command: &fc}
	if _, err := c.r.Forward(ctx, fwd); err != nil {
		return fmt.Errorf("forward command to %s: %w", key, err)
	}
	return nil
}

// list answers list: the workflows there are, and the author's running here, with
// links to their threads.
func (c channelRun) list(ctx context.Context, cmd command) error {
	in := c.r.In
	t := &wfTurn{s: c.s, r: c.r, lang: c.lang}
	if err := (decoder{t}).command(ctx, cmd, ""); err != nil {
		return err
	}
	runs, err := c.s.userRuns(ctx, c.r, in.Key, in.Command.UserID)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		t.reply += "\n\n" + render.Runs(c.lang, render.Tr(c.lang, "yours_here"), runs)
	}
	c.tell(ctx, t.reply)
	return nil
}

// start starts a workflow in a new thread: its header message opens the thread, the
// command goes on there, and the inputs modal opens at once when the command brought
// a trigger_id.
func (c channelRun) start(ctx context.Context, cmd command) error {
	in := c.r.In
	def, ok := c.s.cfg.Workflows.Get(cmd.arg)
	if !ok {
		c.tell(ctx, render.Tr(c.lang, "unknown_workflow", cmd.arg, joinCode(c.s.cfg.Workflows.Names())))
		return nil
	}
	root, err := c.r.Out.PostCard(ctx, render.RunHeader(def, in.Command.UserID))
	if err != nil {
		return fmt.Errorf("post the workflow's first message: %w", err)
	}
	key := conversation.Key{TeamID: in.Key.TeamID, ChannelID: in.Key.ChannelID, ThreadTS: root}
	if err := c.forward(ctx, key); err != nil {
		return err
	}
	// After the forward: a submission of the modal runs after the start.
	c.s.openStartModal(ctx, c.r, def, cmd.rest, key, c.lang) // modal.go
	return nil
}

// toRun hands any other command to the run it is for: the thread it names, the
// author's one run in the channel, or, with several, the one the author picks on a
// menu.
func (c channelRun) toRun(ctx context.Context, cmd command) error {
	in := c.r.In
	if cmd.thread.ThreadTS != "" {
		// The thread's turn checks that a thread of another channel is the user's
		// (ForeignCommand): it knows who started the thread's workflow.
		return c.forward(ctx, conversation.Key{TeamID: in.Key.TeamID, ChannelID: cmd.thread.ChannelID, ThreadTS: cmd.thread.ThreadTS})
	}
	runs, err := c.s.userRuns(ctx, c.r, in.Key, in.Command.UserID)
	if err != nil {
		return err
	}
	switch {
	case len(runs) == 0:
		c.tell(ctx, render.Tr(c.lang, "none_running"))
		return nil
	case len(runs) == 1:
		return c.forward(ctx, runs[0].Key)
	case cmd.name == conversation.CmdStatus:
		// Status of several runs: every one, titled and linked, at once.
		c.tell(ctx, render.Runs(c.lang, render.Tr(c.lang, "runs.status", len(runs)), runs))
		return nil
	}
	if err := c.s.cfg.Messenger.PostEphemeralCard(ctx, in.Key, in.Command.UserID, render.Which(c.lang, runs, cmd.name, in.Command.Line)); err != nil {
		c.r.Log.Warn("menu not posted", "error", err)
	}
	return nil
}

// userRuns returns up to 10 running workflows userID started in key's channel,
// each with its state, where it stands and a permalink to its thread
// (docs/workflows.md, "Commands"). A run whose definition this deployment no
// longer has is left out.
func (s *Handler) userRuns(ctx context.Context, r *turns.Run, key conversation.Key, userID string) ([]render.Run, error) {
	var refs []conversation.WorkflowRef
	if err := r.RetryStore(ctx, "find the user's workflows", func(ctx context.Context) error {
		var err error
		refs, err = s.cfg.Store.Workflows(ctx, key.TeamID, key.ChannelID, userID, 10)
		return err
	}); err != nil {
		return nil, fmt.Errorf("find the user's workflows: %w", err)
	}
	runs := make([]render.Run, 0, len(refs))
	for _, ref := range refs {
		def, ok := s.cfg.Workflows.Get(ref.Name)
		if !ok {
			continue
		}
		var cp *conversation.Checkpoint
		if err := r.RetryStore(ctx, "load a workflow's thread", func(ctx context.Context) error {
			var err error
			cp, err = s.cfg.Store.Load(ctx, ref.Key, 0)
			return err
		}); err != nil {
			return nil, fmt.Errorf("load the workflow of %s: %w", ref.Key, err)
		}
		ws := cp.Conversation.State.Workflow
		run := render.Run{Key: ref.Key, Def: def, State: ws, Waiting: s.machine(def).Waiting(ws)}
		run.Link = s.permalink(ctx, ref.Key)
		runs = append(runs, run)
	}
	return runs, nil
}

func joinCode(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += "`" + n + "`"
	}
	return out
}

// ForeignCommand reports whether cmd, typed in another channel than the thread of
// key (CommandInput.Origin), may not act on it: a command acts on a thread of the
// channel where it was typed, or on a workflow the user started (ws, the thread's
// run), in any channel.
func ForeignCommand(key conversation.Key, cmd *conversation.CommandInput, ws *workflow.State) bool {
	if cmd == nil || cmd.Origin == "" || cmd.Origin == key.ChannelID {
		return false
	}
	return ws == nil || ws.StartedBy == "" || ws.StartedBy != cmd.UserID
}

// RefuseForeign tells the user, in the channel where they typed the command, that it
// cannot act on the thread they linked. It names nothing of that thread or its
// channel (not even whether it has a workflow), and says what to do instead.
func (s *Handler) RefuseForeign(ctx context.Context, r *turns.Run) {
	cmd := r.In.Command
	lang := "en"
	if l, err := s.cfg.Messenger.UserLocale(ctx, cmd.UserID); err == nil {
		lang = render.UILang(l)
	}
	r.Log.Info("command on another channel's thread refused", "origin", cmd.Origin, "user", cmd.UserID)
	fctx, cancel := r.Final(ctx)
	defer cancel()
	where := conversation.Key{TeamID: r.In.Key.TeamID, ChannelID: cmd.Origin}
	if err := s.cfg.Messenger.PostEphemeral(fctx, where, cmd.UserID, render.Tr(lang, "other_channel")); err != nil {
		r.Log.Warn("ephemeral not posted", "error", err)
	}
}
