package workflowrun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
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
	// ask is the confirmation an evDecided event closes.
	ask *conversation.WriteApproval
}

type eventKind int

const (
	evStarted  eventKind = iota // the run's first message
	evShow                      // post the artifact as it is now; close its previous message
	evApproved                  // mark the artifact's message approved, in place
	evKept                      // mark the stale artifact's message kept, in place
	evProgress                  // post the pipeline's progress message
	evInputs                    // close the message asking for inputs (by: who filled them); ask for the missing ones
	evTopic                     // the start card's held topic was decided (by: who; why: "kept" or "changed")
	evAsk                       // post the confirmation card of State.WriteApproval
	evDecided                   // close the confirmation card of ask, saying why (who decided)
)

// ws returns the run's state.
func (t *wfTurn) ws() *workflow.State { return t.state.Workflow }

// def returns the run's definition.
func (t *wfTurn) def() *workflow.Definition { return t.m.Def }

func (t *wfTurn) cards() render.Cards {
	c := render.Cards{Lang: t.lang, Key: t.key, Def: t.def(), Format: t.s.cfg.Format, ProfileDefined: t.s.profileDefined}
	if avail := t.s.cfg.ToolAvailable; avail != nil {
		c.ToolAvailable = func(name string) bool { return avail(t.key.ChannelID, name) }
	}
	return c
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
	ask                   *conversation.WriteApproval
	mode                  string
	appended, events, enq int
	reply                 string
}

func (t *wfTurn) mark() mark {
	return mark{ws: t.ws().Clone(), ask: t.state.WriteApproval, mode: t.state.Mode, appended: len(t.appended), events: len(t.events), enq: len(t.enqueue), reply: t.reply}
}

// rollback undoes what the turn did since m.
func (t *wfTurn) rollback(m mark) {
	t.state.Workflow, t.state.WriteApproval, t.state.Mode = m.ws, m.ask, m.mode
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
		History: t.hist, Summary: t.state.Summary, Profile: a.WritingProfile(t.s.profileDefined), ChannelID: t.key.ChannelID,
		Tainted: t.ws().ReadsTainted(id),
	}
	if a.PreferModel != "" && r.Profile == "" {
		t.log.Debug("artifact written on the main model: the deployment defines no such model profile (MODEL_PROFILES)", "artifact", id, "prefer_model", a.PreferModel)
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
		key := "not_allowed" // approve and keep
		switch r.Action {
		case workflow.PermRestart, workflow.PermEdit, workflow.PermCancel:
			key += "." + string(r.Action)
		}
		t.ephemeral(ctx, render.Tr(t.lang, key, t.whoMay(r)))
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

// The roles of a workflow turn, each a view of the same turn with the methods of
// one job: author asks the workflow agent for options and texts and judges them
// (author.go, enhance.go, verdict.go); poster shows what the turn
// changed in the thread (cards.go); decoder reads the input into steps (input.go,
// reply.go, modal.go); pipelineRun runs the auto artifacts
// (pipeline*.go).
type (
	author      struct{ *wfTurn }
	poster      struct{ *wfTurn }
	decoder     struct{ *wfTurn }
	pipelineRun struct{ *wfTurn }
)

// Why an artifact's message was replaced by a newer one (cardEvent.why): the old one
// is closed, its buttons gone, saying so.
const (
	supersededRevised     = "revised"     // a new text replaced the one under review
	supersededChosen      = "chosen"      // an option was chosen
	supersededRegenerated = "regenerated" // new options replaced these
	supersededRestarted   = "restarted"   // the artifact went back to its start
	supersededRewritten   = "rewritten"   // the pipeline wrote it again
)

// enhancer is what a pipeline's workers need for the enhancement pass: which profiles
// the deployment defines, and, per auto artifact, how many items' passes failed in
// this turn (read when the artifact completes: enhancedAuto).
type enhancer struct {
	defined func(string) bool
	mu      sync.Mutex
	failed  map[string]int
}

// actionAdvance is the step a Retry runs again when what failed is the step after a
// person's action that was kept (then): the workflow goes on (advance). It is never a
// button's action; only State.Retry holds it.
const actionAdvance conversation.ActionName = "advance"

// actionTyped is the step a Retry runs again when what failed is a person's typed
// message in a workflow thread (a typed command, decision or choice): the message,
// which the State.Retry input holds, is read again. Only State.Retry holds it.
const actionTyped conversation.ActionName = "typed"

// whoMay names, in the turn's language, who may do what a NotAllowed refusal r
// refused: the starter, the approvers, or both.
func (t *wfTurn) whoMay(r *workflow.Refusal) string {
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
	return strings.Join(who, render.Tr(t.lang, "or"))
}
