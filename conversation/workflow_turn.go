package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

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

func (e errUsage) Error() string       { return e.msg }
func (e errUsage) UserMessage() string { return e.msg }

// errTold marks a refusal the person was told about privately (an out-of-date
// click, a missing permission): the turn saves nothing else.
type errTold struct{ cause error }

func (e errTold) Error() string { return "told: " + e.cause.Error() }

// wfTurn is one workflow turn.
type wfTurn struct {
	s    *Service
	r    *run
	log  *slog.Logger
	key  Key
	conv Conversation
	hist []Message
	// state is the conversation's state being changed: its Workflow a copy of the
	// checkpoint's.
	state State
	// m is the machine of the run's definition (m.Def nil until a run is bound).
	m    workflow.Machine
	user string
	lang string

	appended []Message // the revisions of the step
	usage    Usage
	// reply is posted in the thread at the end, when set.
	reply   string
	enqueue []Input // inputs saved with the turn (the pipeline's next part)
	// events are what the turn rendering shows, in order (render).
	events []cardEvent
	// shown holds each artifact as its message shows it now: as loaded, then as the
	// turn posts it; a message replaced is closed with its old content.
	shown map[string]workflow.ArtifactState

	// pipeline is true in a KindPipeline turn: it runs the auto artifacts it starts.
	pipeline bool
	// progressAt is when the pipeline's progress message was last shown.
	progressAt time.Time
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
	evProgress                  // post the pipeline's progress message
)

// ws returns the run's state.
func (t *wfTurn) ws() *workflow.State { return t.state.Workflow }

// def returns the run's definition.
func (t *wfTurn) def() *workflow.Definition { return t.m.Def }

func (t *wfTurn) cards() cards {
	return cards{lang: t.lang, key: t.key, def: t.def(), format: t.s.cfg.Format}
}

// machine returns the machine of def under the service's approval policy.
func (s *Service) machine(def *workflow.Definition) workflow.Machine {
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
	t.m, t.lang = t.s.machine(def), uiLang(ws.Locale)
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
	t.appended = append(t.appended, Message{Role: RoleRevision, UserID: rev.By, Text: t.ws().Artifacts[rev.Artifact].Text, Meta: meta})
}

func (t *wfTurn) add(u Usage) { t.usage = t.usage.Add(u) }

// supersede says why an artifact's message is replaced (workflow.Superseded*), and
// the option chosen for supersededChosen.
type supersede struct{ why, label string }

// show asks render to show artifact id as it is now, its previous message closed
// for sup.
func (t *wfTurn) show(id string, sup supersede) {
	t.events = append(t.events, cardEvent{kind: evShow, id: id, why: sup.why, by: t.user, label: sup.label, revision: t.ws().Artifacts[id].Revisions})
}

// request builds the agent request for artifact id.
func (t *wfTurn) request(id, instructions string) ArtifactRequest {
	a, _ := t.def().Artifact(id)
	st := t.ws().Artifacts[id]
	approved := map[string]string{}
	for aid, as := range t.ws().Artifacts {
		if as.Status == workflow.StatusApproved && aid != id {
			approved[aid] = as.Text
		}
	}
	r := ArtifactRequest{
		Workflow: t.def(), Artifact: a, Locale: t.ws().Locale, Approved: approved,
		Options: st.Options, Current: st.Text, Instructions: instructions,
		History: t.hist, Summary: t.state.Summary, Profile: a.Model,
	}
	for i := range st.Options {
		if st.Options[i].Label == st.Selected {
			r.Selected = &st.Options[i]
		}
	}
	return r
}

// start begins workflow name in this thread, its locale from the workflow, the words
// of hint, or the person's Slack locale.
func (t *wfTurn) start(ctx context.Context, name, hint string) error {
	if ws := t.ws(); ws != nil && ws.Status == workflow.RunRunning {
		return errUsage{tr(t.lang, "already_running", ws.Name)}
	}
	def, ok := t.s.cfg.Workflows.Get(name)
	if !ok {
		return errUsage{tr(t.lang, "unknown_workflow", name, strings.Join(t.s.cfg.Workflows.Names(), ", "))}
	}
	locale := def.Locale
	if locale == "" {
		locale = textLocale(hint)
	}
	if locale == "" {
		if l, err := t.s.cfg.Messenger.UserLocale(ctx, t.user); err == nil && l != "" {
			locale = l
		}
	}
	if locale == "" {
		locale = "en"
	}
	t.m, t.lang = t.s.machine(def), uiLang(locale)
	t.state.Mode, t.state.Workflow = ModeWorkflow, t.m.NewRun(t.user, locale)
	t.shown = map[string]workflow.ArtifactState{}
	t.events = append(t.events, cardEvent{kind: evStarted})
	return t.then(ctx, t.advance)
}

// advance does what the scheduling rule says runs next: it starts the auto artifacts
// that can run, produces the next person's artifact, or, when every artifact is
// approved, finishes the run.
func (t *wfTurn) advance(ctx context.Context) error {
	plan := workflow.Next(t.def(), t.ws())
	switch {
	case plan.Done:
		return t.finish(ctx)
	case len(plan.Start) > 0:
		t.startAuto(ctx, plan.Start)
	}
	switch {
	case plan.Propose != "":
		return t.propose(ctx, plan.Propose, supersede{why: supersededRegenerated})
	case plan.Write != "":
		return t.write(ctx, plan.Write, "", "written", supersede{why: supersededRevised})
	case !plan.Busy() && len(plan.Stale) > 0:
		t.reply = tr(t.lang, "waiting_stale")
	}
	return nil
}

// propose asks for options for artifact id and shows them.
func (t *wfTurn) propose(ctx context.Context, id string, sup supersede) error {
	opts, u, err := t.s.cfg.Agent.ProposeOptions(ctx, t.request(id, ""))
	t.add(u)
	if err != nil {
		return fmt.Errorf("propose options for %s: %w", id, err)
	}
	if err := t.m.Proposed(t.ws(), id, opts); err != nil {
		return err
	}
	t.show(id, sup)
	return nil
}

// write writes artifact id (from its selected option, if any) and reviews it.
func (t *wfTurn) write(ctx context.Context, id, instructions, why string, sup supersede) error {
	r := t.request(id, instructions)
	text, u, err := t.s.cfg.Agent.Write(ctx, r)
	t.add(u)
	if err != nil {
		return fmt.Errorf("write %s: %w", id, err)
	}
	return t.review(ctx, id, r, text, why, sup, false)
}

// rewrite revises artifact id's text following instructions (the editor agent) and
// reviews it; edit says it is an edit (what depends on an approved text goes stale).
func (t *wfTurn) rewrite(ctx context.Context, id, instructions, why string, edit bool) error {
	r := t.request(id, instructions)
	text, u, err := t.s.cfg.Agent.Revise(ctx, r)
	t.add(u)
	if err != nil {
		return fmt.Errorf("revise %s: %w", id, err)
	}
	return t.review(ctx, id, r, text, why, supersede{why: supersededRevised}, edit)
}

// review evaluates text, records it as artifact id's new revision and shows it.
func (t *wfTurn) review(ctx context.Context, id string, r ArtifactRequest, text, why string, sup supersede, edit bool) error {
	eval, u, err := t.s.cfg.Agent.Evaluate(ctx, r, text)
	t.add(u)
	if err != nil {
		return fmt.Errorf("evaluate %s: %w", id, err)
	}
	var rev workflow.Revision
	if edit {
		rev, err = t.m.Edited(t.ws(), id, text, eval, t.user, why)
	} else {
		rev, err = t.m.Written(t.ws(), id, text, eval, t.user, why)
	}
	if err != nil {
		return err
	}
	t.keep(rev)
	t.show(id, sup)
	return nil
}

// pick chooses option label of artifact id, with optional instructions, and writes
// the artifact from it.
func (t *wfTurn) pick(ctx context.Context, id, label, instructions string) error {
	opt, err := t.m.Pick(t.ws(), id, label)
	if err != nil {
		return err
	}
	why := "written from option " + opt.Label
	if instructions != "" {
		why += ": " + instructions
	}
	return t.write(ctx, id, instructions, why, supersede{why: supersededChosen, label: opt.Label})
}

// approve approves artifact id, then goes on (advance): a failure there keeps the
// approval.
func (t *wfTurn) approve(ctx context.Context, id string) error {
	rev, err := t.m.Approve(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	t.keep(rev)
	t.events = append(t.events, cardEvent{kind: evApproved, id: id, by: t.user})
	return t.then(ctx, t.advance)
}

// then runs next after a person's action that held: when next fails, what it did is
// undone but the action is kept, and the thread is told why.
func (t *wfTurn) then(ctx context.Context, next func(context.Context) error) error {
	m := t.mark()
	err := next(ctx)
	if err == nil || ctx.Err() != nil || errors.Is(err, ErrLeaseLost) {
		return err
	}
	t.rollback(m)
	var r *workflow.Refusal
	if errors.As(err, &r) {
		err = t.refusal(ctx, r)
	}
	var u errUsage
	switch {
	case errors.As(err, new(errTold)):
	case errors.As(err, &u):
		t.reply = u.msg
	default:
		t.log.Error("workflow step after an action failed; the action is kept", "error", err)
		t.reply = ErrorReply(err)
	}
	return nil
}

// keepStale keeps stale artifact id as it is, then goes on.
func (t *wfTurn) keepStale(ctx context.Context, id string) error {
	rev, err := t.m.Keep(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	t.keep(rev)
	return t.then(ctx, t.advance)
}

// keepAll keeps every stale artifact as it is, then goes on.
func (t *wfTurn) keepAll(ctx context.Context) error {
	revs, err := t.m.KeepAll(t.ws(), t.user)
	if err != nil {
		return err
	}
	for _, rev := range revs {
		t.keep(rev)
	}
	return t.then(ctx, t.advance)
}

// regenerate writes stale artifact id again from the current texts of what it
// depends on, following guidance: an auto artifact runs through the pipeline again
// (waiting, and saying so, for what it depends on), another is revised for review.
func (t *wfTurn) regenerate(ctx context.Context, id, guidance string) error {
	rev, err := t.m.Regenerate(t.ws(), id, t.user, guidance)
	if err != nil {
		return err
	}
	if rev == nil {
		why := "regenerated after a change of a dependency"
		if guidance != "" {
			why += ": " + guidance
		}
		return t.rewrite(ctx, id, guidance, why, false)
	}
	t.keep(*rev)
	plan := workflow.Next(t.def(), t.ws())
	if waits := plan.Waits[id]; len(waits) > 0 {
		a, _ := t.def().Artifact(id)
		t.reply = tr(t.lang, "rerun_waits", a.Title, t.titles(waits))
		return nil
	}
	return t.advance(ctx)
}

// regenerateAll regenerates every stale artifact, following guidance.
func (t *wfTurn) regenerateAll(ctx context.Context, guidance string) error {
	ids, err := t.m.Handleable(t.ws())
	if err != nil {
		return err
	}
	for _, id := range ids {
		if t.ws().Artifacts[id].Status != workflow.StatusStale {
			continue // an earlier one's pipeline took it
		}
		if err := t.regenerate(ctx, id, guidance); err != nil {
			return err
		}
	}
	return nil
}

// titles renders artifact ids as their titles, in bold.
func (t *wfTurn) titles(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		a, _ := t.def().Artifact(id)
		out = append(out, "*"+a.Title+"*")
	}
	return strings.Join(out, ", ")
}

// restart sends artifact id back to its start and produces it anew: new options, a
// new text, or a pipeline run; what depends on it goes stale (listed once it is
// approved again). A failure undoes the whole restart.
func (t *wfTurn) restart(ctx context.Context, id string) error {
	rev, err := t.m.Restart(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	t.keep(rev)
	a, _ := t.def().Artifact(id)
	switch a.Mode {
	case workflow.ModeChoice:
		return t.propose(ctx, id, supersede{why: supersededRestarted})
	case workflow.ModeAuto:
		t.startAuto(ctx, []string{id})
		return nil
	}
	return t.write(ctx, id, "", "rewritten", supersede{why: supersededRestarted})
}

// edit revises artifact id following instructions; what depends on it goes stale.
func (t *wfTurn) edit(ctx context.Context, id, instructions string) error {
	if err := t.m.CheckEdit(t.ws(), id); err != nil {
		return err
	}
	return t.rewrite(ctx, id, instructions, "edited: "+instructions, true)
}

// finish writes the summary, uploads the report and completes the run.
func (t *wfTurn) finish(ctx context.Context) error {
	summary, u, err := t.s.cfg.Agent.Summarize(ctx, ArtifactRequest{Workflow: t.def(), Locale: t.ws().Locale, Approved: t.texts(), History: t.hist})
	t.add(u)
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	if err := t.upload(ctx, false, tr(t.lang, "done", t.def().Title)+"\n\n"+t.s.cfg.Format(summary)); err != nil {
		return err
	}
	if err := t.m.Complete(t.ws()); err != nil {
		return err
	}
	t.state.Mode = ModeAssistant
	return nil
}

// texts returns every artifact's current text.
func (t *wfTurn) texts() map[string]string {
	out := map[string]string{}
	for id, st := range t.ws().Artifacts {
		out[id] = st.Text
	}
	return out
}

// upload renders the report (a draft marks unapproved artifacts) and uploads it.
func (t *wfTurn) upload(ctx context.Context, draft bool, comment string) error {
	approved := map[string]bool{}
	for id, st := range t.ws().Artifacts {
		approved[id] = st.Status == workflow.StatusApproved
	}
	report, err := t.def().RenderReport(workflow.ReportData{Workflow: t.def(), Artifacts: t.texts(), Approved: approved, Draft: draft})
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	name := t.def().Name + ".md"
	if draft {
		name = t.def().Name + "-draft.md"
	}
	if err := t.r.out.Upload(ctx, File{Name: name, Title: t.def().Title, Content: []byte(report), Comment: comment}); err != nil {
		return fmt.Errorf("upload report: %w", err)
	}
	return nil
}

// command runs a parsed command in this thread.
func (t *wfTurn) command(ctx context.Context, c command, hint string) error {
	switch c.name {
	case CmdHelp:
		t.reply = commandUsage
		return nil
	case CmdList:
		var lines []string
		for _, d := range t.s.cfg.Workflows.All() {
			lines = append(lines, fmt.Sprintf("• `%s` — *%s*: %s", d.Name, d.Title, d.Description))
		}
		t.reply = strings.Join(lines, "\n")
		return nil
	case CmdStart:
		if c.arg == "" {
			return errUsage{tr(t.lang, "unknown_workflow", "", strings.Join(t.s.cfg.Workflows.Names(), ", "))}
		}
		return t.start(ctx, c.arg, hint)
	}
	if t.ws() == nil || t.ws().Status == workflow.RunCancelled {
		return errUsage{tr(t.lang, "none_running")}
	}
	switch c.name {
	case CmdStatus:
		t.reply = "" // the status card is the answer
		_, err := t.r.out.PostCard(ctx, t.cards().status(t.ws()))
		return err
	case CmdExport:
		return t.upload(ctx, true, tr(t.lang, "export", t.def().Title))
	case CmdCancel:
		if err := t.m.Cancel(t.ws()); err != nil {
			return err
		}
		t.state.Mode = ModeAssistant
		t.endPipeline(ctx, "⏹ "+tr(t.lang, "pipeline.cancelled")) // a pending part then finds none
		t.reply = tr(t.lang, "cancelled", t.def().Title, t.user)
		return nil
	case CmdRestart, CmdEdit:
		if _, _, err := t.m.Artifact(t.ws(), c.arg); err != nil {
			return err
		}
		t.m.Reopen(t.ws())
		t.state.Mode = ModeWorkflow
		if c.name == CmdRestart {
			return t.restart(ctx, c.arg)
		}
		return t.edit(ctx, c.arg, c.rest)
	}
	return errUsage{tr(t.lang, "unknown_command", c.name) + "\n" + commandUsage}
}

// shortcut answers the message shortcut on one of the bot's messages: for an
// artifact's message, a menu (only the user sees) to restart or edit it; otherwise the
// workflow's status, or help.
func (t *wfTurn) shortcut(ctx context.Context, messageTS string) error {
	if t.def() == nil || t.m.Running(t.ws()) != nil {
		t.ephemeral(ctx, commandUsage)
		return nil
	}
	for _, a := range t.def().Artifacts {
		st := t.ws().Artifacts[a.ID]
		if st.MessageTS == messageTS {
			card := Card{Text: a.Title, Blocks: []Block{
				{Kind: BlockSection, Text: "*" + a.Title + "*"},
				{Kind: BlockActions, Buttons: t.cards().menu(&a, st)},
			}}
			if err := t.s.cfg.Messenger.PostEphemeralCard(ctx, t.key, t.user, card); err != nil {
				t.log.Warn("ephemeral menu not posted", "error", err)
			}
			return nil
		}
	}
	if err := t.s.cfg.Messenger.PostEphemeralCard(ctx, t.key, t.user, t.cards().status(t.ws())); err != nil {
		t.log.Warn("ephemeral status not posted", "error", err)
	}
	return nil
}

// ephemeral tells the acting user something only they see.
func (t *wfTurn) ephemeral(ctx context.Context, text string) {
	if err := t.s.cfg.Messenger.PostEphemeral(ctx, t.key, t.user, text); err != nil {
		t.log.Warn("ephemeral not posted", "error", err)
	}
}

// action runs a click or a modal submission.
func (t *wfTurn) action(ctx context.Context, a ActionInput) error {
	act := a.Action
	if act.Name == ActionCommand {
		c, _ := parseCommand(act.Arg)
		return t.command(ctx, c, "")
	}
	if t.def() == nil {
		return &workflow.Refusal{Reason: workflow.NotCurrent}
	}
	switch act.Name {
	case ActionStop: // a pipeline's Stop, clicked between its turns
		if t.m.Running(t.ws()) != nil {
			return nil
		}
		if err := t.m.Stop(t.ws(), strings.TrimPrefix(act.Arg, runStopPrefix), t.user); err != nil {
			return err
		}
		t.showProgress(ctx, true)
		return nil
	case ActionContinue:
		if err := t.m.Running(t.ws()); err != nil {
			return &workflow.Refusal{Reason: workflow.NotCurrent}
		}
		if err := t.m.Continue(t.ws(), act.Arg); err != nil {
			return err
		}
		t.showProgress(ctx, true)
		t.continuePipeline()
		return nil
	case ActionKeepAll, ActionRegenerateAll:
		if err := t.m.Running(t.ws()); err != nil || t.ws().Stale == nil || t.ws().Stale.Changed != act.Arg {
			return &workflow.Refusal{Reason: workflow.NotCurrent}
		}
		if act.Name == ActionKeepAll {
			return t.keepAll(ctx)
		}
		return t.regenerateAll(ctx, a.Text)
	case ActionRestart, ActionEdit:
		t.m.Reopen(t.ws())
		t.state.Mode = ModeWorkflow
	}
	id := act.Artifact
	if err := t.m.Current(t.ws(), id, act.Rev); err != nil {
		return err
	}
	switch act.Name {
	case ActionPick:
		return t.pick(ctx, id, act.Arg, "")
	case ActionRegenerate:
		if st := t.ws().Artifacts[id]; st.Status != workflow.StatusOptionsGenerated {
			return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
		}
		return t.propose(ctx, id, supersede{why: supersededRegenerated})
	case ActionApprove:
		return t.approve(ctx, id)
	case ActionRequestChanges:
		if st := t.ws().Artifacts[id]; st.Status != workflow.StatusGenerated {
			return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
		}
		return t.rewrite(ctx, id, a.Text, "changes requested: "+a.Text, false)
	case ActionKeep:
		return t.keepStale(ctx, id)
	case ActionRegenerateStale:
		return t.regenerate(ctx, id, a.Text)
	case ActionRestart:
		return t.restart(ctx, id)
	case ActionEdit:
		return t.edit(ctx, id, a.Text)
	}
	return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
}

// message handles a person's reply in a workflow thread: a choice among the options
// shown, or a change request for the artifact under review. handled is false when
// nothing awaits a reply (the assistant answers it then).
func (t *wfTurn) message(ctx context.Context, text string) (handled bool, err error) {
	if t.m.Running(t.ws()) != nil {
		return false, nil
	}
	plan := workflow.Next(t.def(), t.ws())
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
			return true, t.propose(ctx, id, supersede{why: supersededRegenerated})
		case sel.Label != "":
			return true, t.pick(ctx, id, sel.Label, sel.Instructions)
		}
		t.reply = tr(t.lang, "reply_unclear")
		return true, nil
	case workflow.StatusGenerated:
		return true, t.rewrite(ctx, id, text, "changes requested: "+text, false)
	}
	return false, nil
}

// refusal turns a workflow.Refusal into what the person is told: an out-of-date
// click or a missing permission only to them (errTold), the rest as a usage error
// in the thread.
func (t *wfTurn) refusal(ctx context.Context, r *workflow.Refusal) error {
	switch r.Reason {
	case workflow.NotCurrent:
		t.ephemeral(ctx, tr(t.lang, "not_current"))
		return errTold{r}
	case workflow.NotAllowed:
		who := tr(t.lang, "the_starter", r.StartedBy)
		if len(r.Approvers) > 0 {
			names := make([]string, 0, len(r.Approvers))
			for _, id := range r.Approvers {
				names = append(names, "<@"+id+">")
			}
			who = tr(t.lang, "approvers", strings.Join(names, ", "))
		}
		t.ephemeral(ctx, tr(t.lang, "not_allowed", who))
		return errTold{r}
	case workflow.NotRunning:
		return errUsage{tr(t.lang, "none_running")}
	case workflow.UnknownArtifact:
		ids := make([]string, 0, len(t.def().Artifacts))
		for _, a := range t.def().Artifacts {
			ids = append(ids, "`"+a.ID+"`")
		}
		return errUsage{tr(t.lang, "unknown_artifact", t.def().Title, r.Artifact, strings.Join(ids, ", "))}
	case workflow.NoSuchOption:
		return errUsage{tr(t.lang, "reply_unclear")}
	case workflow.NoText, workflow.BeingWritten:
		a, _ := t.def().Artifact(r.Artifact)
		if r.Reason == workflow.NoText {
			return errUsage{tr(t.lang, "no_text", a.Title)}
		}
		return errUsage{tr(t.lang, "being_written", a.Title, a.ID)}
	case workflow.NoItems, workflow.TooManyItems:
		return errUsage{t.itemsProblem(r)}
	case workflow.ChangePending:
		a, _ := t.def().Artifact(r.Artifact)
		src, _ := t.def().Artifact(r.Source)
		return errUsage{tr(t.lang, "change_pending", src.Title, a.Title)}
	}
	return errUsage{tr(t.lang, "not_current")}
}

// runWorkflow runs a workflow turn for r's input and saves it. It returns handled
// false for a person's message that is not for the workflow (the assistant answers
// it). The step runs on ctx; rendering and the save are final writes, on a context
// that neither a stop nor the turn's timeout cancelled. err is not nil when the input
// stays pending (see Service.turn).
func (s *Service) runWorkflow(ctx context.Context, r *run, cp *Checkpoint, earlier []Message) (handled bool, err error) {
	in, log := r.in, r.log
	state := cp.Conversation.State
	state.Workflow = state.Workflow.Clone()
	t := &wfTurn{s: s, r: r, log: log, key: in.Key, conv: cp.Conversation, hist: s.clipAll(dialogue(cp.Messages)), state: state, lang: "en"}
	if err := t.bind(); err != nil {
		log.Error("workflow turn dropped", "error", err)
		return true, s.finish(ctx, r, InputFailed)
	}
	t.shown = map[string]workflow.ArtifactState{}
	if ws := t.ws(); ws != nil {
		for id, st := range ws.Artifacts {
			t.shown[id] = *st
		}
	}
	before := t.mark()
	var user Message
	switch in.Kind {
	case KindAction:
		t.user = in.Action.UserID
		err = t.action(ctx, *in.Action)
	case KindCommand:
		t.user = in.Command.UserID
		c, known := parseCommand(in.Command.Line)
		switch {
		case in.Command.Source == SourceShortcut && in.Command.Line == "":
			err = t.shortcut(ctx, in.Command.MessageTS)
		case !known:
			err = errUsage{tr(t.lang, "unknown_command", c.name) + "\n" + commandUsage}
		default:
			err = t.command(ctx, c, "")
		}
	case KindPipeline:
		err = t.runPipeline(ctx)
	case KindUserMessage:
		m := in.Message
		t.user = m.UserID
		user = Message{Role: RoleUser, UserID: m.UserID, Text: m.Text, SlackTS: m.TS}
		if isTextCommand(m.Text) && (m.Mentioned || m.Direct) {
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
	fctx, cancel := s.final(ctx)
	defer cancel()
	var refused *workflow.Refusal
	if errors.As(err, &refused) {
		err = t.refusal(fctx, refused)
	}
	if err != nil {
		var u errUsage
		switch {
		case errors.Is(err, ErrLeaseLost) || errors.Is(context.Cause(ctx), ErrLeaseLost):
			return true, ErrLeaseLost
		case s.ctx.Err() != nil:
			return true, err // shutting down: the input stays pending
		case in.Kind == KindPipeline:
			// The pipeline's own checkpoints are kept; only its failure is told.
			log.Error("pipeline turn failed", "error", err)
			t.reply = ErrorReply(err)
		case errors.As(err, new(errTold)):
			t.rollback(before)
		case errors.As(err, &u):
			t.rollback(before)
			t.reply = u.msg
		default:
			log.Error("workflow step failed; nothing of it is kept", "error", err)
			t.rollback(before)
			t.reply = ErrorReply(err)
		}
	}
	return true, t.finishTurn(fctx, earlier, user)
}

// finishTurn renders what the turn changed, posts its reply and saves it: the new
// messages (earlier thread context, the person's message, revisions, the reply) and
// the state, marking the input done and enqueuing what follows. ctx is the final
// writes' context.
func (t *wfTurn) finishTurn(ctx context.Context, earlier []Message, user Message) error {
	if err := t.render(ctx); err != nil {
		return err
	}
	msgs := earlier
	if user.Text != "" {
		msgs = append(msgs, user)
	}
	msgs = append(msgs, t.appended...)
	if t.reply != "" {
		ts, err := t.r.out.PostReply(ctx, t.reply, false, false)
		if errors.Is(err, ErrLeaseLost) {
			return err
		}
		if err != nil {
			t.log.Error("reply not posted", "error", err)
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Text: t.reply, SlackTS: ts})
	}
	return t.s.saveState(ctx, t.r, t.conv, t.state, msgs, t.usage, t.enqueue)
}

// saveState saves a workflow turn: its new state (no rebase: the turn was computed
// from the version it loaded) and messages, marking the input done and enqueuing
// enqueue (the pipeline's next part, which this worker begins next).
func (s *Service) saveState(ctx context.Context, r *run, conv Conversation, st State, msgs []Message, usage Usage, enqueue []Input) error {
	r.out.cleanup(ctx, r.log)
	st.Turns++
	st.PromptTokens += usage.PromptTokens
	st.CompletionTokens += usage.CompletionTokens
	if _, err := s.storeSave(ctx, r, Turn{Key: r.in.Key, Version: conv.Version, State: st, Append: msgs, InputID: r.in.ID, Enqueue: enqueue}); err != nil {
		return fmt.Errorf("save workflow turn: %w", err)
	}
	return nil
}
