package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// errUsage marks a problem with what a person asked (an unknown workflow, artifact or
// command); its text is shown to them as it is.
type errUsage struct{ msg string }

func (e errUsage) Error() string       { return e.msg }
func (e errUsage) UserMessage() string { return e.msg }

// wfTurn is one workflow turn: the loaded checkpoint, the state being changed, and what
// the turn will append. Changes are made to state only after the agent calls they
// depend on succeeded, so a failed step leaves the artifact as it was.
type wfTurn struct {
	s     *Service
	r     *run
	log   *slog.Logger
	in    Input
	key   Key
	conv  Conversation
	hist  []Message
	state State
	user  string

	def  *workflow.Definition // nil until a workflow runs
	lang string

	appended []Message
	usage    Usage
	// reply is posted in the thread at the end, when set (for text commands).
	reply string

	// enqueue are inputs saved with the turn (the pipeline's next part).
	enqueue []Input
	// pipeline is true in a KindPipeline turn: it runs the auto artifacts it starts.
	pipeline bool
	// progressAt is when the pipeline's progress message was last shown.
	progressAt time.Time
}

// ws returns the running workflow's state.
func (t *wfTurn) ws() *WorkflowState { return t.state.Workflow }

func (t *wfTurn) cards() cards {
	return cards{lang: t.lang, key: t.key, def: t.def, format: t.s.cfg.Format}
}

// bind sets def and lang from the conversation's workflow state.
func (t *wfTurn) bind() error {
	ws := t.ws()
	if ws == nil {
		return nil
	}
	def, ok := t.s.cfg.Workflows.Get(ws.Name)
	if !ok {
		return fmt.Errorf("workflow %q of this thread is no longer configured", ws.Name)
	}
	t.def, t.lang = def, uiLang(ws.Locale)
	return nil
}

// cloneState deep-copies s, so that a failed turn leaves the loaded state untouched.
func cloneState(s State) State {
	if s.Workflow == nil {
		return s
	}
	ws := *s.Workflow
	ws.Artifacts = make(map[string]*ArtifactState, len(s.Workflow.Artifacts))
	for id, a := range s.Workflow.Artifacts {
		c := *a
		c.Options = slices.Clone(a.Options)
		c.Eval = slices.Clone(a.Eval)
		c.Items = slices.Clone(a.Items)
		ws.Artifacts[id] = &c
	}
	if p := s.Workflow.Pipeline; p != nil {
		c := *p
		c.Artifacts = slices.Clone(p.Artifacts)
		ws.Pipeline = &c
	}
	s.Workflow = &ws
	return s
}

// request builds the agent request for artifact id.
func (t *wfTurn) request(id, instructions string) ArtifactRequest {
	a, _ := t.def.Artifact(id)
	st := t.ws().Artifacts[id]
	approved := map[string]string{}
	for aid, as := range t.ws().Artifacts {
		if as.Status == StatusApproved && aid != id {
			approved[aid] = as.Text
		}
	}
	r := ArtifactRequest{
		Workflow: t.def, Artifact: a, Locale: t.ws().Locale, Approved: approved,
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

// revise records a revision of artifact id (kept as a RoleRevision message).
func (t *wfTurn) revise(id, why string) {
	st := t.ws().Artifacts[id]
	st.Revisions++
	rev := Revision{Artifact: id, Number: st.Revisions, Status: st.Status, By: t.user, Why: why, At: t.s.cfg.Now().UTC()}
	meta, _ := json.Marshal(rev)
	t.appended = append(t.appended, Message{Role: RoleRevision, UserID: t.user, Text: st.Text, Meta: meta})
}

// touch marks a change of artifact id: its buttons drawn before are out of date.
func (t *wfTurn) touch(id string) *ArtifactState {
	st := t.ws().Artifacts[id]
	st.Rev++
	return st
}

// post posts c in the thread and returns its ts ("" when posting failed; logged).
func (t *wfTurn) post(ctx context.Context, c Card) string {
	ts, err := t.r.out.PostCard(ctx, c)
	if err != nil {
		t.log.Error("card not posted", "error", err)
	}
	return ts
}

// update replaces the message ts with c, when there is one.
func (t *wfTurn) update(ctx context.Context, ts string, c Card) {
	if ts == "" {
		return
	}
	if err := t.s.cfg.Messenger.UpdateCard(ctx, t.key, ts, c); err != nil {
		t.log.Warn("card not updated", "ts", ts, "error", err)
	}
}

// ephemeral tells the acting user something only they see.
func (t *wfTurn) ephemeral(ctx context.Context, text string) {
	if err := t.s.cfg.Messenger.PostEphemeral(ctx, t.key, t.user, text); err != nil {
		t.log.Warn("ephemeral not posted", "error", err)
	}
}

func (t *wfTurn) add(u Usage) { t.usage = t.usage.Add(u) }

// start begins workflow name in this thread.
func (t *wfTurn) start(ctx context.Context, name, localeHint string) error {
	if ws := t.ws(); ws != nil && ws.Status == WorkflowRunning {
		return errUsage{tr(t.lang, "already_running", ws.Name)}
	}
	def, ok := t.s.cfg.Workflows.Get(name)
	if !ok {
		return errUsage{tr(t.lang, "unknown_workflow", name, strings.Join(t.s.cfg.Workflows.Names(), ", "))}
	}
	locale := def.Locale
	if locale == "" {
		locale = textLocale(localeHint)
	}
	if locale == "" {
		if l, err := t.s.cfg.Messenger.UserLocale(ctx, t.user); err == nil && l != "" {
			locale = l
		}
	}
	if locale == "" {
		locale = "en"
	}
	arts := map[string]*ArtifactState{}
	for _, a := range def.Artifacts {
		arts[a.ID] = &ArtifactState{Status: StatusPending}
	}
	t.state.Mode = ModeWorkflow
	t.state.Workflow = &WorkflowState{Name: def.Name, StartedBy: t.user, Locale: locale, Status: WorkflowRunning, Artifacts: arts}
	t.def, t.lang = def, uiLang(locale)
	t.post(ctx, t.cards().started(t.user))
	return t.advance(ctx)
}

// next returns the first artifact, in workflow order, that is neither approved nor
// stale and whose dependencies are all approved; "" when there is none.
func (t *wfTurn) next() string {
	for _, id := range t.def.Order() {
		st := t.ws().Artifacts[id]
		if st.Status == StatusApproved || st.Status == StatusStale {
			continue
		}
		ready := true
		for _, dep := range t.def.Dependencies(id) {
			if t.ws().Artifacts[dep].Status != StatusApproved {
				ready = false
			}
		}
		if ready {
			return id
		}
		return "" // an earlier artifact must be approved first
	}
	return ""
}

// advance produces artifacts until one waits for people, or finishes the workflow
// when all are approved.
func (t *wfTurn) advance(ctx context.Context) error {
	for {
		id := t.next()
		if id == "" {
			break
		}
		a, _ := t.def.Artifact(id)
		st := t.ws().Artifacts[id]
		switch {
		case st.Status != StatusPending:
			return nil // waiting for a choice or a review
		case a.Mode == workflow.ModeChoice:
			return t.propose(ctx, id)
		case a.Mode == workflow.ModeAuto:
			return t.startAuto(ctx)
		default:
			return t.write(ctx, id, "", "written")
		}
	}
	for _, st := range t.ws().Artifacts {
		if st.Status != StatusApproved {
			if st.Status == StatusStale {
				t.reply = tr(t.lang, "waiting_stale")
			}
			return nil
		}
	}
	return t.finish(ctx)
}

// propose asks for options for artifact id and posts them.
func (t *wfTurn) propose(ctx context.Context, id string) error {
	opts, u, err := t.s.cfg.Agent.ProposeOptions(ctx, t.request(id, ""))
	t.add(u)
	if err != nil {
		return fmt.Errorf("propose options for %s: %w", id, err)
	}
	a, _ := t.def.Artifact(id)
	st := t.touch(id)
	st.Status, st.Options, st.Selected = StatusOptionsGenerated, opts, ""
	st.MessageTS = t.post(ctx, t.cards().options(a, st, ""))
	return nil
}

// write writes artifact id (from its selected option, if any), evaluates it and posts
// it for review.
func (t *wfTurn) write(ctx context.Context, id, instructions, why string) error {
	r := t.request(id, instructions)
	text, u, err := t.s.cfg.Agent.Write(ctx, r)
	t.add(u)
	if err != nil {
		return fmt.Errorf("write %s: %w", id, err)
	}
	return t.review(ctx, id, r, text, why)
}

// rewrite revises artifact id's text following instructions (the editor agent),
// evaluates it and posts it for review.
func (t *wfTurn) rewrite(ctx context.Context, id, instructions, why string) error {
	r := t.request(id, instructions)
	text, u, err := t.s.cfg.Agent.Revise(ctx, r)
	t.add(u)
	if err != nil {
		return fmt.Errorf("revise %s: %w", id, err)
	}
	return t.review(ctx, id, r, text, why)
}

// review evaluates text, stores it as artifact id's new revision and posts it.
func (t *wfTurn) review(ctx context.Context, id string, r ArtifactRequest, text, why string) error {
	eval, u, err := t.s.cfg.Agent.Evaluate(ctx, r, text)
	t.add(u)
	if err != nil {
		return fmt.Errorf("evaluate %s: %w", id, err)
	}
	a, _ := t.def.Artifact(id)
	st := t.touch(id)
	oldTS := st.MessageTS
	st.Status, st.Text, st.Eval, st.StaleBecause = StatusGenerated, text, eval, ""
	if a.Mode == workflow.ModeAuto {
		st.Status = StatusApproved // auto: no review
	}
	t.revise(id, why)
	if a.Mode == workflow.ModeAuto {
		st.MessageTS = t.post(ctx, t.cards().artifact(a, st, "🤖"))
	} else {
		st.MessageTS = t.post(ctx, t.cards().artifact(a, st, ""))
	}
	if oldTS != "" && oldTS != st.MessageTS && len(st.Options) == 0 {
		t.update(ctx, oldTS, t.cards().artifact(a, &ArtifactState{Text: st.Text, Eval: st.Eval}, "↓"))
	}
	return nil
}

// pick chooses option label of artifact id, with optional instructions, and writes
// the artifact from it.
func (t *wfTurn) pick(ctx context.Context, id, label, instructions string) error {
	st := t.ws().Artifacts[id]
	var opt *Option
	for i := range st.Options {
		if strings.EqualFold(st.Options[i].Label, label) {
			opt = &st.Options[i]
		}
	}
	if opt == nil {
		return errUsage{tr(t.lang, "reply_unclear")}
	}
	optionsTS := st.MessageTS
	prev := *st
	st.Selected, st.Status = opt.Label, StatusOptionSelected
	why := "written from option " + opt.Label
	if instructions != "" {
		why += ": " + instructions
	}
	if err := t.write(ctx, id, instructions, why); err != nil {
		*t.ws().Artifacts[id] = prev // nothing half-committed
		return err
	}
	a, _ := t.def.Artifact(id)
	t.update(ctx, optionsTS, t.cards().options(a, &prev, tr(t.lang, "chosen", opt.Label, t.user)))
	return nil
}

// approve approves artifact id and moves on.
func (t *wfTurn) approve(ctx context.Context, id string) error {
	if who := t.approvers(); who != "" {
		t.ephemeral(ctx, tr(t.lang, "not_allowed", who))
		return nil
	}
	a, _ := t.def.Artifact(id)
	st := t.touch(id)
	st.Status = StatusApproved
	t.revise(id, "approved")
	t.update(ctx, st.MessageTS, t.cards().artifact(a, st, tr(t.lang, "approved_by", t.user)))
	return t.advance(ctx)
}

// approvers returns who may approve when the acting user may not ("" when they may).
func (t *wfTurn) approvers() string {
	if ids := t.s.cfg.Approvers; len(ids) > 0 {
		if slices.Contains(ids, t.user) {
			return ""
		}
		var names []string
		for _, id := range ids {
			names = append(names, "<@"+id+">")
		}
		return tr(t.lang, "approvers", strings.Join(names, ", "))
	}
	if t.def.Approvers == "starter" && t.user != t.ws().StartedBy {
		return tr(t.lang, "the_starter", t.ws().StartedBy)
	}
	return ""
}

// markStale marks every artifact that depends on id, transitively, and has been
// written, stale, and posts the list with Keep and Regenerate with guidance.
func (t *wfTurn) markStale(ctx context.Context, id string) {
	var stale []string
	for _, dep := range t.def.Dependents(id) {
		st := t.ws().Artifacts[dep]
		if st.Status == StatusGenerated || st.Status == StatusApproved || st.Status == StatusStale {
			st = t.touch(dep)
			st.Status, st.StaleBecause = StatusStale, id
			stale = append(stale, dep)
		} else if st.Status != StatusPending {
			// options were drawn from the old text: start them again
			st = t.touch(dep)
			st.Status, st.Options, st.Selected = StatusPending, nil, ""
		}
	}
	if len(stale) > 0 {
		t.post(ctx, t.cards().stale(id, stale, t.ws().Artifacts))
	}
}

// restart sends artifact id back to its start (new options for a choice artifact, a
// new text otherwise); its dependents go stale.
func (t *wfTurn) restart(ctx context.Context, id string) error {
	st := t.ws().Artifacts[id]
	prev := *st
	st = t.touch(id)
	st.Status, st.Options, st.Selected = StatusPending, nil, ""
	if prev.Text != "" {
		t.markStale(ctx, id)
	}
	if err := t.produce(ctx, id); err != nil {
		return err
	}
	t.revise(id, "restarted")
	return nil
}

// produce makes artifact id anew, whatever the order: options for a choice artifact,
// a written text otherwise.
func (t *wfTurn) produce(ctx context.Context, id string) error {
	a, _ := t.def.Artifact(id)
	switch a.Mode {
	case workflow.ModeChoice:
		return t.propose(ctx, id)
	case workflow.ModeAuto:
		st := t.ws().Artifacts[id]
		st.Items, st.Instructions = nil, ""
		return t.startAuto(ctx)
	}
	return t.write(ctx, id, "", "rewritten")
}

// edit revises artifact id following instructions; its dependents go stale.
func (t *wfTurn) edit(ctx context.Context, id, instructions string) error {
	st := t.ws().Artifacts[id]
	if st.Status == StatusRunning { // its text is the previous run's; the run would be lost
		a, _ := t.def.Artifact(id)
		return errUsage{tr(t.lang, "being_written", a.Title, id)}
	}
	if st.Text == "" {
		a, _ := t.def.Artifact(id)
		return errUsage{tr(t.lang, "no_text", a.Title)}
	}
	wasApproved := st.Status == StatusApproved
	if err := t.rewrite(ctx, id, instructions, "edited: "+instructions); err != nil {
		return err
	}
	if wasApproved {
		t.markStale(ctx, id)
	}
	return nil
}

// keep keeps a stale artifact as it is (approved again) and moves on.
func (t *wfTurn) keep(ctx context.Context, id string) error {
	a, _ := t.def.Artifact(id)
	st := t.touch(id)
	st.Status, st.StaleBecause = StatusApproved, ""
	t.revise(id, "kept after a change of a dependency")
	t.post(ctx, Card{Text: tr(t.lang, "kept", a.Title, t.user), Blocks: []Block{{Kind: BlockContext, Text: tr(t.lang, "kept", a.Title, t.user)}}})
	return t.advance(ctx)
}

// regenerateStale rewrites a stale artifact from the current texts of what it depends
// on, following guidance.
func (t *wfTurn) regenerateStale(ctx context.Context, id, guidance string) error {
	why := "regenerated after a change of a dependency"
	if guidance != "" {
		why += ": " + guidance
	}
	if a, _ := t.def.Artifact(id); a.Mode == workflow.ModeAuto {
		return t.rerun(ctx, a, guidance, why)
	}
	return t.rewrite(ctx, id, guidance, why)
}

// finish renders the report, uploads it and posts the summary.
func (t *wfTurn) finish(ctx context.Context) error {
	summary, u, err := t.s.cfg.Agent.Summarize(ctx, ArtifactRequest{Workflow: t.def, Locale: t.ws().Locale, Approved: t.texts(), History: t.hist})
	t.add(u)
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	if err := t.upload(ctx, false, tr(t.lang, "done", t.def.Title)+"\n\n"+t.s.cfg.Format(summary)); err != nil {
		return err
	}
	t.ws().Status = WorkflowCompleted
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
		approved[id] = st.Status == StatusApproved
	}
	report, err := t.def.RenderReport(workflow.ReportData{Workflow: t.def, Artifacts: t.texts(), Approved: approved, Draft: draft})
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	name := t.def.Name + ".md"
	if draft {
		name = t.def.Name + "-draft.md"
	}
	if err := t.r.out.Upload(ctx, File{Name: name, Title: t.def.Title, Content: []byte(report), Comment: comment}); err != nil {
		return fmt.Errorf("upload report: %w", err)
	}
	return nil
}

// artifactArg resolves an artifact id argument.
func (t *wfTurn) artifactArg(id string) (string, error) {
	if _, ok := t.def.Artifact(id); ok {
		return id, nil
	}
	ids := make([]string, 0, len(t.def.Artifacts))
	for _, a := range t.def.Artifacts {
		ids = append(ids, "`"+a.ID+"`")
	}
	return "", errUsage{tr(t.lang, "unknown_artifact", t.def.Title, id, strings.Join(ids, ", "))}
}

// running checks that the thread has a running workflow.
func (t *wfTurn) running() error {
	if ws := t.ws(); ws == nil || ws.Status != WorkflowRunning {
		return errUsage{tr(t.lang, "none_running")}
	}
	return nil
}

// reopen runs a completed workflow again, for an edit or a restart after its report:
// it finishes again, with a new report, once everything is approved again.
func (t *wfTurn) reopen() {
	if ws := t.ws(); ws != nil && ws.Status == WorkflowCompleted {
		ws.Status = WorkflowRunning
		t.state.Mode = ModeWorkflow
	}
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
	if t.ws() == nil || t.ws().Status == WorkflowCancelled {
		return errUsage{tr(t.lang, "none_running")}
	}
	if c.name == CmdRestart || c.name == CmdEdit {
		t.reopen()
	}
	switch c.name {
	case CmdStatus:
		t.post(ctx, t.cards().status(t.ws()))
		return nil
	case CmdExport:
		return t.upload(ctx, true, tr(t.lang, "export", t.def.Title))
	case CmdCancel:
		if err := t.running(); err != nil {
			return err
		}
		t.ws().Status = WorkflowCancelled
		t.state.Mode = ModeAssistant
		t.endPipeline(ctx, "⏹ "+tr(t.lang, "pipeline.cancelled")) // a pending part then finds none
		t.reply = tr(t.lang, "cancelled", t.def.Title, t.user)
		return nil
	case CmdRestart, CmdEdit:
		id, err := t.artifactArg(c.arg)
		if err != nil {
			return err
		}
		if c.name == CmdRestart {
			return t.restart(ctx, id)
		}
		return t.edit(ctx, id, c.rest)
	}
	return errUsage{tr(t.lang, "unknown_command", c.name) + "\n" + commandUsage}
}

// shortcut answers the message shortcut on one of the bot's messages: for an
// artifact's message, a menu (only the user sees) to restart or edit it; otherwise the
// workflow's status, or help.
func (t *wfTurn) shortcut(ctx context.Context, messageTS string) error {
	if t.def == nil || t.running() != nil {
		t.ephemeral(ctx, commandUsage)
		return nil
	}
	for _, a := range t.def.Artifacts {
		st := t.ws().Artifacts[a.ID]
		if st.MessageTS == messageTS {
			c := t.cards()
			card := Card{Text: a.Title, Blocks: []Block{
				{Kind: BlockSection, Text: "*" + a.Title + "*"},
				{Kind: BlockActions, Buttons: c.menu(&a, st)},
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

// action runs a click or a modal submission.
func (t *wfTurn) action(ctx context.Context, a ActionInput) error {
	if a.Action.Name == ActionCommand {
		c, _ := parseCommand(a.Action.Arg)
		return t.command(ctx, c, "")
	}
	if a.Action.Name == ActionRestart || a.Action.Name == ActionEdit {
		t.reopen()
	}
	switch a.Action.Name {
	case ActionStop: // a pipeline's Stop, clicked between its turns
		if t.running() == nil {
			t.stopRun(ctx, strings.TrimPrefix(a.Action.Arg, runStopPrefix))
		}
		return nil
	case ActionContinue:
		if t.running() != nil {
			t.ephemeral(ctx, tr(t.lang, "not_current"))
			return nil
		}
		t.continueRun(ctx, a.Action.Arg)
		return nil
	}
	if err := t.running(); err != nil {
		t.ephemeral(ctx, tr(t.lang, "not_current"))
		return nil
	}
	id := a.Action.Artifact
	st, ok := t.ws().Artifacts[id]
	if !ok || st.Rev != a.Action.Rev {
		t.ephemeral(ctx, tr(t.lang, "not_current"))
		return nil
	}
	switch a.Action.Name {
	case ActionPick:
		if st.Status != StatusOptionsGenerated {
			break
		}
		return t.pick(ctx, id, a.Action.Arg, "")
	case ActionRegenerate:
		if st.Status != StatusOptionsGenerated {
			break
		}
		a2, _ := t.def.Artifact(id)
		oldTS := st.MessageTS
		prev := *st
		if err := t.propose(ctx, id); err != nil {
			return err
		}
		t.update(ctx, oldTS, t.cards().options(a2, &prev, "↻"))
		return nil
	case ActionApprove:
		if st.Status != StatusGenerated {
			break
		}
		return t.approve(ctx, id)
	case ActionRequestChanges:
		if st.Status != StatusGenerated {
			break
		}
		return t.rewrite(ctx, id, a.Text, "changes requested: "+a.Text)
	case ActionKeep:
		if st.Status != StatusStale {
			break
		}
		return t.keep(ctx, id)
	case ActionRegenerateStale:
		if st.Status != StatusStale {
			break
		}
		return t.regenerateStale(ctx, id, a.Text)
	case ActionRestart:
		return t.restart(ctx, id)
	case ActionEdit:
		return t.edit(ctx, id, a.Text)
	}
	t.ephemeral(ctx, tr(t.lang, "not_current"))
	return nil
}

// message handles a person's reply in a workflow thread: a text command, a choice
// among the options shown, or a change request for the artifact under review.
// handled is false when nothing awaits a reply (the assistant answers it then).
func (t *wfTurn) message(ctx context.Context, text string) (handled bool, err error) {
	for _, id := range t.def.Order() {
		st := t.ws().Artifacts[id]
		switch st.Status {
		case StatusOptionsGenerated:
			sel, u, err := t.s.cfg.Agent.InterpretReply(ctx, t.request(id, ""), text)
			t.add(u)
			if err != nil {
				return true, fmt.Errorf("interpret reply: %w", err)
			}
			switch {
			case sel.Regenerate:
				return true, t.action(ctx, ActionInput{Action: t.cards().action(ActionRegenerate, id, st.Rev, ""), UserID: t.user})
			case sel.Label != "":
				return true, t.pick(ctx, id, sel.Label, sel.Instructions)
			default:
				t.reply = tr(t.lang, "reply_unclear")
				return true, nil
			}
		case StatusGenerated:
			return true, t.rewrite(ctx, id, text, "changes requested: "+text)
		}
	}
	return false, nil
}

// runWorkflow runs a workflow turn for r's input and saves it. It returns handled
// false for a user message that is not for the workflow (the assistant answers it).
// The step runs on ctx; its reply and save are final writes, on a context that
// neither a stop nor the turn's timeout cancelled. err is not nil when the input stays
// pending (see Service.turn).
func (s *Service) runWorkflow(ctx context.Context, r *run, cp *Checkpoint, earlier []Message) (handled bool, err error) {
	in, log := r.in, r.log
	t := &wfTurn{s: s, r: r, log: log, in: in, key: in.Key, conv: cp.Conversation, hist: s.clipAll(dialogue(cp.Messages)), state: cloneState(cp.Conversation.State), lang: "en"}
	if err := t.bind(); err != nil {
		log.Error("workflow turn dropped", "error", err)
		return true, s.finish(ctx, r, InputFailed)
	}
	var user Message
	switch in.Kind {
	case KindAction:
		t.user = in.Action.UserID
		err = t.action(ctx, *in.Action)
	case KindCommand:
		t.user = in.Command.UserID
		c, known := parseCommand(in.Command.Line)
		if in.Command.Source == SourceShortcut && in.Command.Line == "" {
			err = t.shortcut(ctx, in.Command.MessageTS)
			break
		}
		if !known {
			err = errUsage{tr(t.lang, "unknown_command", c.name) + "\n" + commandUsage}
		} else {
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
		if t.def == nil {
			return false, nil
		}
		handled, err = t.message(ctx, m.Text)
		if !handled {
			return false, nil
		}
	}
	fctx, cancel := s.final(ctx)
	defer cancel()
	if err != nil {
		var u errUsage
		switch {
		case errors.Is(err, ErrLeaseLost) || errors.Is(context.Cause(ctx), ErrLeaseLost):
			return true, ErrLeaseLost
		case s.ctx.Err() != nil:
			return true, err // shutting down: the input stays pending
		case errors.As(err, &u):
			t.reply = u.msg
		default:
			log.Error("workflow step failed", "error", err)
			t.reply = ErrorReply(err)
		}
	}
	msgs := earlier
	if user.Text != "" {
		msgs = append(msgs, user)
	}
	msgs = append(msgs, t.appended...)
	if t.reply != "" {
		ts, perr := r.out.PostReply(fctx, t.reply, false, false)
		if errors.Is(perr, ErrLeaseLost) {
			return true, perr
		}
		if perr != nil {
			log.Error("reply not posted", "error", perr)
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Text: t.reply, SlackTS: ts})
	}
	if err := s.saveState(fctx, r, t.conv, t.state, msgs, t.usage, t.enqueue); err != nil {
		return true, err
	}
	return true, nil
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
