package workflowrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// The workflow turn (docs/architecture.md, "Workflow machine"): it decodes the input,
// applies the machine's transitions to a copy of the run's state, with the agent calls
// they wait for, and asks the scheduling rule (workflow.Next) what runs next. Only
// then, when the step held, does it render what changed (cards follow the state) and
// save. A step that fails leaves the run as it was; when a person's action held but
// what should follow it failed (the model is down), the action is kept and the thread
// is told.

// errUsage marks a problem with what a person asked (an unknown workflow, artifact or
// command); its text is shown to them as it is.
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

func (e errUsage) UserMessage() string { return e.msg }

// errTold marks a refusal the person was told about privately (an out-of-date
// click, a missing permission): the turn saves nothing else.
type errTold struct{ cause error }

func (e errTold) Error() string { return "told: " + e.cause.Error() }

// wfTurn is one workflow turn.
type wfTurn struct {
	s    *Handler
	r    *turns.Run
	log  *slog.Logger
	key  conversation.Key
	conv conversation.Conversation
	hist []conversation.Message
	// state is the conversation's state being changed: its Workflow a copy of the
	// checkpoint's.
	state conversation.State
	// m is the machine of the run's definition (m.Def nil until a run is bound).
	m    workflow.Machine
	user string
	// question is the text of a reply the "Just a question" button says the
	// assistant should answer (reply.go).
	question string
	lang     string

	appended []conversation.Message // the revisions of the step
	usage    conversation.Usage
	// reply is posted in the thread at the end, when set.
	reply string
	// retry is State.Retry as the turn found it; rerun the input it runs again
	// (a Retry click), whose failure offers Retry again.
	retry, rerun *conversation.Input
	enqueue      []conversation.Input // inputs saved with the turn (the pipeline's next part)
	// events are what the turn rendering shows, in order (render).
	events []cardEvent
	// shown holds each artifact as its message shows it now: as loaded, then as the
	// turn posts it; a message replaced is closed with its old content.
	shown map[string]workflow.ArtifactState

	// pipeline is true in a KindPipeline turn: it runs the auto artifacts it starts.
	pipeline bool
	// progressAt is when the pipeline's progress message was last shown.
	progressAt time.Time
	// enh is the pipeline's enhancement passes (enhance.go; nil until used).
	enh *enhancer
}

// cardEvent is a change render shows.
type cardEvent struct {
	kind eventKind
	// id is the artifact; why, by and label say what replaced its previous message
	// (workflow.Superseded*; the option chosen).
	id, why, by, label string
	revision           int
}

type eventKind int

const (
	evStarted  eventKind = iota // the run's first message
	evShow                      // post the artifact as it is now; close its previous message
	evApproved                  // mark the artifact's message approved, in place
	evKept                      // mark the stale artifact's message kept, in place
	evProgress                  // post the pipeline's progress message
	evInputs                    // close the message asking for inputs (by: who filled them); ask for the missing ones
)

// ws returns the run's state.
func (t *wfTurn) ws() *workflow.State { return t.state.Workflow }

// def returns the run's definition.
func (t *wfTurn) def() *workflow.Definition { return t.m.Def }

func (t *wfTurn) cards() render.Cards {
	return render.Cards{Lang: t.lang, Key: t.key, Def: t.def(), Format: t.s.cfg.Format, ProfileDefined: t.s.profileDefined}
}

// machine returns the machine of def under the service's approval policy.
func (s *Handler) machine(def *workflow.Definition) workflow.Machine {
	return workflow.Machine{Def: def, Approvers: s.cfg.Approvers, Now: s.cfg.Now}
}

// bind sets the machine and language from the conversation's run, when it has one.
func (t *wfTurn) bind() error {
	ws := t.ws()
	if ws == nil {
		return nil
	}
	def, ok := t.s.cfg.Workflows.Get(ws.Name)
	if !ok {
		return fmt.Errorf("workflow %q of this thread is no longer configured", ws.Name)
	}
	t.m, t.lang = t.s.machine(def), render.UILang(ws.Locale)
	return nil
}

// mark is a point the turn can go back to (rollback).
type mark struct {
	ws                    *workflow.State
	mode                  string
	appended, events, enq int
	reply                 string
}

func (t *wfTurn) mark() mark {
	return mark{ws: t.ws().Clone(), mode: t.state.Mode, appended: len(t.appended), events: len(t.events), enq: len(t.enqueue), reply: t.reply}
}

// rollback undoes what the turn did since m.
func (t *wfTurn) rollback(m mark) {
	t.state.Workflow, t.state.Mode = m.ws, m.mode
	t.appended, t.events, t.enqueue, t.reply = t.appended[:m.appended], t.events[:m.events], t.enqueue[:m.enq], m.reply
}

// keep records revision rev of the step (its text is the artifact's text now).
func (t *wfTurn) keep(rev workflow.Revision) {
	meta, _ := json.Marshal(rev)
	t.appended = append(t.appended, conversation.Message{Role: conversation.RoleRevision, UserID: rev.By, Text: t.ws().Artifacts[rev.Artifact].Text, Meta: meta})
}

func (t *wfTurn) add(u conversation.Usage) { t.usage = t.usage.Add(u) }

// supersede says why an artifact's message is replaced (workflow.Superseded*), and
// the option chosen for supersededChosen.
type supersede struct{ why, label string }

// show asks render to show artifact id as it is now, its previous message closed
// for sup.
func (t *wfTurn) show(id string, sup supersede) {
	t.events = append(t.events, cardEvent{kind: evShow, id: id, why: sup.why, by: t.user, label: sup.label, revision: t.ws().Artifacts[id].Revisions})
}

// request builds the agent request for artifact id.
func (t *wfTurn) request(id, instructions string) conversation.ArtifactRequest {
	a, _ := t.def().Artifact(id)
	st := t.ws().Artifacts[id]
	approved := map[string]string{}
	for aid, as := range t.ws().Artifacts {
		if as.Status == workflow.StatusApproved && aid != id {
			approved[aid] = as.Text
		}
	}
	r := conversation.ArtifactRequest{
		Workflow: t.def(), Artifact: a, Locale: t.ws().Locale, Inputs: t.ws().Inputs, Approved: approved,
		Options: st.Options, Current: st.Text, Instructions: instructions,
		History: t.hist, Summary: t.state.Summary, Profile: a.Model, ChannelID: t.key.ChannelID,
	}
	for i := range st.Options {
		if st.Options[i].Label == st.Selected {
			r.Selected = &st.Options[i]
		}
	}
	return r
}

// ephemeral tells the acting user something only they see.
func (t *wfTurn) ephemeral(ctx context.Context, text string) {
	if err := t.s.cfg.Messenger.PostEphemeral(ctx, t.key, t.user, text); err != nil {
		t.log.Warn("ephemeral not posted", "error", err)
	}
}

// refusal turns a workflow.Refusal into what the person is told: an out-of-date
// click or a missing permission only to them (errTold), the rest as a usage error
// in the thread.
func (t *wfTurn) refusal(ctx context.Context, r *workflow.Refusal) error {
	switch r.Reason {
	case workflow.NotCurrent:
		t.ephemeral(ctx, render.Tr(t.lang, "not_current"))
		return errTold{r}
	case workflow.NotAllowed:
		var who []string
		if r.StartedBy != "" {
			who = append(who, render.Tr(t.lang, "the_starter", r.StartedBy))
		}
		if len(r.Approvers) > 0 {
			names := make([]string, 0, len(r.Approvers))
			for _, id := range r.Approvers {
				names = append(names, "<@"+id+">")
			}
			who = append(who, render.Tr(t.lang, "approvers", strings.Join(names, ", ")))
		}
		key := "not_allowed" // approve and keep
		switch r.Action {
		case workflow.PermRestart, workflow.PermEdit, workflow.PermCancel:
			key += "." + string(r.Action)
		}
		t.ephemeral(ctx, render.Tr(t.lang, key, strings.Join(who, render.Tr(t.lang, "or"))))
		return errTold{r}
	case workflow.NotRunning:
		return errUsage{render.Tr(t.lang, "none_running")}
	case workflow.UnknownArtifact:
		ids := make([]string, 0, len(t.def().Artifacts))
		for _, a := range t.def().Artifacts {
			ids = append(ids, "`"+a.ID+"`")
		}
		return errUsage{render.Tr(t.lang, "unknown_artifact", t.def().Title, r.Artifact, strings.Join(ids, ", "))}
	case workflow.NoSuchOption:
		return errUsage{render.Tr(t.lang, "reply_unclear")}
	case workflow.NoText, workflow.BeingWritten:
		a, _ := t.def().Artifact(r.Artifact)
		if r.Reason == workflow.NoText {
			return errUsage{render.Tr(t.lang, "no_text", a.Title)}
		}
		return errUsage{render.Tr(t.lang, "being_written", a.Title, a.ID)}
	case workflow.NoItems, workflow.TooManyItems:
		return errUsage{t.cards().ItemsProblem(t.ws(), r)}
	case workflow.ChangePending:
		a, _ := t.def().Artifact(r.Artifact)
		src, _ := t.def().Artifact(r.Source)
		return errUsage{render.Tr(t.lang, "change_pending", src.Title, a.Title)}
	}
	return errUsage{render.Tr(t.lang, "not_current")}
}

// Turn runs a workflow turn for r's input and saves it. It returns handled
// false for a person's message that is not for the workflow (the assistant answers
// it). The step runs on ctx; rendering and the save are final writes, on a context
// that neither a stop nor the turn's timeout cancelled. err is not nil when the input
// stays pending (see Service.turn).
func (s *Handler) Turn(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, earlier []conversation.Message) (handled bool, err error) {
	in, log := r.In, r.Log
	state := cp.Conversation.State
	state.Workflow = state.Workflow.Clone()
	t := &wfTurn{s: s, r: r, log: log, key: in.Key, conv: cp.Conversation, hist: s.clipAll(history.Dialogue(append(slices.Clone(cp.Messages), earlier...))), state: state, lang: "en"}
	if err := t.bind(); err != nil {
		log.Error("workflow turn dropped", "error", err)
		return true, r.Drop(ctx, conversation.InputFailed)
	}
	t.shown = map[string]workflow.ArtifactState{}
	if ws := t.ws(); ws != nil {
		for id, st := range ws.Artifacts {
			t.shown[id] = *st
		}
	}
	// A Retry button is for the step that failed last, until a person's next turn
	// (a pipeline's parts run in between).
	t.retry = t.state.Retry
	if in.Kind != conversation.KindPipeline {
		t.state.Retry = nil
	}
	before := t.mark()
	var user conversation.Message
	switch in.Kind {
	case conversation.KindAction:
		t.user = in.Action.UserID
		err = t.action(ctx, *in.Action)
		if err == nil && t.question != "" {
			return false, nil // the assistant answers it (assistant.Handler.AnswerQuestion)
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
		err = t.runPipeline(ctx)
	case conversation.KindUserMessage:
		m := in.Message
		t.user = m.UserID
		user = conversation.Message{Role: conversation.RoleUser, UserID: m.UserID, Text: m.Text, SlackTS: m.TS}
		if IsTextCommand(m.Text, t.s.cfg.Workflows) && (m.Mentioned || m.Direct) {
			c, _ := parseCommand(m.Text)
			err = t.command(ctx, c, m.Text)
			break
		}
		if t.def() == nil {
			return false, nil
		}
		handled, err = t.message(ctx, m.Text)
		if !handled {
			return false, nil
		}
	}
	fctx, cancel := r.Final(ctx)
	defer cancel()
	var refused *workflow.Refusal
	if errors.As(err, &refused) {
		err = t.refusal(fctx, refused)
	}
	if err != nil {
		var u errUsage
		switch {
		case errors.Is(err, conversation.ErrLeaseLost) || errors.Is(context.Cause(ctx), conversation.ErrLeaseLost):
			return true, conversation.ErrLeaseLost
		case r.ShuttingDown():
			return true, err // shutting down: the input stays pending
		case in.Kind == conversation.KindPipeline:
			// The pipeline's own checkpoints are kept; only its failure is told.
			log.Error("pipeline turn failed", "error", err)
			t.reply = s.failureMessage(t.lang, err, "")
		case errors.As(err, new(errTold)):
			t.rollback(before)
			t.state.Retry = t.retry // a refused click changes nothing, the Retry offered included
		case errors.As(err, &u):
			t.rollback(before)
			t.reply = u.msg
		default:
			log.Error("workflow step failed; nothing of it is kept", "error", err)
			t.rollback(before)
			t.reply = s.failureMessage(t.lang, err, "")
			if failed := t.failedInput(); failed != nil {
				// The step can run again as it was: the failure offers Retry.
				t.state.Retry = failed
				t.reply = ""
				if perr := t.postCard(fctx, t.cards().Failed("⚠️ "+s.failureMessage(t.lang, err, "retry.step"), failed.ID), nil); perr != nil {
					return true, perr
				}
			}
		}
	}
	if err := t.render(fctx); err != nil {
		return true, err
	}
	msgs := earlier
	if user.Text != "" {
		msgs = append(msgs, user)
	}
	s.observeWorkflow(cp.Conversation.State.Workflow, t.state.Workflow)
	return true, r.Finish(fctx, t.conv, turns.Ending{Msgs: append(msgs, t.appended...), Reply: t.reply, Usage: t.usage,
		Update: func(st *conversation.State) { *st = t.state }, Enqueue: t.enqueue})
}

// failedInput returns the input whose step failed, to be run again by Retry: the one
// a Retry click ran again, or the turn's click, command or message (a typed command,
// decision or choice); nil for what cannot run again as it was (a shortcut). The
// step a Retry click ran again is offered under the click's id, so the older
// failure's button is out of date.
func (t *wfTurn) failedInput() *conversation.Input {
	if t.rerun != nil {
		again := *t.rerun
		again.ID = t.r.In.ID
		return &again
	}
	in := t.r.In
	if in.Kind == conversation.KindUserMessage && in.Message != nil {
		// Kept as a pseudo-click (actionTyped) that holds the message: a Retry of
		// a failed assistant answer is the message itself (conversation/assistant/retry.go).
		in.Kind = conversation.KindAction
		in.Action = &conversation.ActionInput{Action: conversation.Action{Name: actionTyped}, UserID: in.Message.UserID}
		return &in
	}
	if (in.Kind == conversation.KindAction && in.Action != nil) || (in.Kind == conversation.KindCommand && in.Command != nil && in.Command.Source != conversation.SourceShortcut) {
		return &in
	}
	return nil
}

// runRetry runs again the step of State.Retry, as the person who clicked Retry, through
// the same code as its first run; a button of an older failure is out of date.
func (t *wfTurn) runRetry(ctx context.Context, a conversation.ActionInput) error {
	if a.Action.Artifact != "" {
		return t.retryItems(ctx, a) // a pipeline artifact's failed items (pipeline_retry.go)
	}
	orig := t.retry
	if orig == nil || orig.ID != a.Action.Arg {
		t.ephemeral(ctx, render.Tr(t.lang, "retry.gone"))
		return errTold{&workflow.Refusal{Reason: workflow.NotCurrent}}
	}
	t.rerun = orig
	t.closeRetried(ctx, a)
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

// closeRetried takes the Retry button off the failure message clicked, saying who
// retried: the step runs again below it.
func (t *wfTurn) closeRetried(ctx context.Context, a conversation.ActionInput) {
	if a.MessageTS == "" {
		return
	}
	note := "↻ " + render.Tr(t.lang, "retried_by", a.UserID)
	t.update(ctx, a.MessageTS, render.NoteCard(note))
}
