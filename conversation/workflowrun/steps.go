package workflowrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// start begins workflow name in this thread, its locale from the workflow, the words
// of hint (or of text), or the person's Slack locale. text, the start command's words
// after the name, fills the first required input; when it is empty, the thread's
// earlier messages do (docs/workflows.md, "Workflows").
func (t *wfTurn) start(ctx context.Context, name, text, hint string) error {
	if ws := t.ws(); ws != nil && ws.Status == workflow.RunRunning {
		return errUsage{render.Tr(t.lang, "already_running", ws.Name)}
	}
	if ws := t.ws(); ws != nil && ws.Status == workflow.RunCompleted && t.def() != nil {
		// A new run replaces the completed one, whose edits and restarts would reopen
		// it: that is cancelling it.
		if err := t.m.May(ws, workflow.PermCancel, t.user); err != nil {
			return err
		}
	}
	def, ok := t.s.cfg.Workflows.Get(name)
	if !ok {
		return errUsage{render.Tr(t.lang, "unknown_workflow", name, strings.Join(t.s.cfg.Workflows.Names(), ", "))}
	}
	topicFrom := ""
	if text == "" {
		text, topicFrom = t.earlierSubject()
	}
	locale := def.Locale
	if locale == "" {
		locale = render.TextLocale(hint)
	}
	if locale == "" {
		locale = render.TextLocale(text)
	}
	if locale == "" {
		if l, err := t.s.cfg.Messenger.UserLocale(ctx, t.user); err == nil && l != "" {
			locale = l
		}
	}
	if locale == "" {
		locale = "en"
	}
	t.m, t.lang = t.s.machine(def), render.UILang(locale)
	t.state.Mode, t.state.Workflow = conversation.ModeWorkflow, t.m.NewRun(t.user, locale)
	t.ws().Inputs = def.FillInputs(text)
	t.ws().TopicFrom = topicFrom
	if cmd := t.r.In.Command; cmd != nil {
		maps.Copy(t.ws().Inputs, cmd.Inputs) // the HTTP API's inputs
		if in := def.TopicInput(); in != nil && cmd.Inputs[in.ID] != "" {
			t.ws().TopicFrom = "" // the API gave the topic
		}
	}
	t.shown = map[string]workflow.ArtifactState{}
	t.events = append(t.events, cardEvent{kind: evStarted})
	if t.askInput() {
		return nil
	}
	if t.ws().TopicFrom != "" {
		// A topic nobody gave with the start: the start card asks to keep or
		// change it before anything is written (decideTopic).
		t.ws().TopicHeld = true
		return nil
	}
	return t.then(ctx, t.advance)
}

// decideTopic runs a click on the start card of a run that holds its topic
// (State.TopicHeld): keep it, or change it to a.Text (ActionTopicChange); then the
// run goes on to its first artifact. Who may decide is who may restart an artifact
// (workflow.PermRestart). A run that holds no topic refuses it as out of date.
func (t *wfTurn) decideTopic(ctx context.Context, a conversation.ActionInput) error {
	ws := t.ws()
	if ws.Status != workflow.RunRunning || !ws.TopicHeld {
		return &workflow.Refusal{Reason: workflow.NotCurrent}
	}
	if err := t.m.May(ws, workflow.PermRestart, t.user); err != nil {
		var r *workflow.Refusal
		if errors.As(err, &r) {
			t.ephemeral(ctx, render.Tr(t.lang, "not_allowed.topic", t.whoMay(r)))
			return errTold{r}
		}
		return err
	}
	changed := a.Action.Name == conversation.ActionTopicChange
	if changed {
		topic := strings.TrimSpace(a.Text)
		if topic == "" {
			return errUsage{render.Tr(t.lang, "topic.empty")}
		}
		for id, v := range t.def().FillInputs(topic) {
			if in, ok := t.def().Input(id); ok && v != in.Default {
				ws.Inputs[id] = v // the topic's input; the others keep their values
			}
		}
		ws.TopicFrom = ""
	}
	ws.TopicHeld = false
	t.events = append(t.events, cardEvent{kind: evTopic, by: t.user, why: map[bool]string{true: "changed", false: "kept"}[changed]})
	return t.then(ctx, t.advance)
}

// askInput asks in the thread for the inputs the run lacks (renderInputs: the first
// one in words, all with a button that opens their modal) and reports whether it
// asked: the run waits for a reply (fillInput) or the modal (submitInputs).
func (t *wfTurn) askInput() bool {
	if len(t.def().MissingInputs(t.ws().Inputs)) == 0 {
		return false
	}
	t.events = append(t.events, cardEvent{kind: evInputs})
	return true
}

// fillInput takes text, a reply in the thread, as the first required input the run
// lacks, then asks for the next one or starts the work. handled is false when no
// input is missing.
func (t *wfTurn) fillInput(ctx context.Context, text string) (handled bool, err error) {
	missing := t.def().MissingInputs(t.ws().Inputs)
	if len(missing) == 0 || strings.TrimSpace(text) == "" {
		return false, nil
	}
	if t.ws().Inputs == nil {
		t.ws().Inputs = map[string]string{}
	}
	t.ws().Inputs[missing[0].ID] = strings.TrimSpace(text)
	t.events = append(t.events, cardEvent{kind: evInputs, by: t.user})
	if len(t.def().MissingInputs(t.ws().Inputs)) > 0 {
		return true, nil
	}
	return true, t.then(ctx, t.advance)
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
		pipelineRun{t}.startAuto(ctx, plan.Start)
	}
	switch {
	case plan.Propose != "":
		return author{t}.propose(ctx, plan.Propose, supersede{why: supersededRegenerated})
	case plan.Write != "":
		return author{t}.write(ctx, plan.Write, "", "written", supersede{why: supersededRevised})
	case !plan.Busy() && len(plan.Stale) > 0:
		t.reply = render.Tr(t.lang, "waiting_stale")
	}
	return nil
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
	if err == nil || t.r.ShuttingDown() || errors.Is(err, conversation.ErrLeaseLost) || errors.Is(context.Cause(ctx), conversation.ErrLeaseLost) {
		return err // shutting down or handed over: the whole input runs again
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
		// The action is kept (a timeout too); the failure offers Retry, which
		// runs the next step again (actionAdvance), as does the next reply in the
		// thread (message).
		t.log.Error("workflow step after an action failed; the action is kept", "error", err)
		again := t.r.In
		again.Attempts, again.Status = 0, ""
		again.Kind, again.Message, again.Command = conversation.KindAction, nil, nil
		again.Action = &conversation.ActionInput{Action: conversation.Action{Name: actionAdvance}, UserID: t.user}
		fctx, cancel := t.r.Final(ctx)
		defer cancel()
		card := t.cards().Failed("⚠️ "+t.s.failureMessage(t.lang, err, "retry.step"), again.ID)
		if perr := (poster{t}).postCard(fctx, card, nil); perr != nil {
			if errors.Is(perr, conversation.ErrLeaseLost) {
				return perr
			}
			t.log.Error("failure message with Retry not posted", "error", perr)
			t.reply = t.s.failureMessage(t.lang, err, "") + " " + render.Tr(t.lang, "followup_retry")
			return nil
		}
		t.state.Retry = &again
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
	t.events = append(t.events, cardEvent{kind: evKept, id: id, by: t.user})
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
		t.events = append(t.events, cardEvent{kind: evKept, id: rev.Artifact, by: t.user})
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
		return author{t}.revise(ctx, id, guidance, why, false, true)
	}
	t.keep(*rev)
	plan := workflow.Next(t.def(), t.ws())
	if waits := plan.Waits[id]; len(waits) > 0 {
		a, _ := t.def().Artifact(id)
		t.reply = render.Tr(t.lang, "rerun_waits", a.Title, t.cards().Titles(waits))
		return nil
	}
	return t.advance(ctx)
}

// regenerateAll regenerates every stale artifact, following guidance.
func (t *wfTurn) regenerateAll(ctx context.Context, guidance string) error {
	ids, err := t.m.Staleness().Handleable(t.ws(), false)
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

// restart sends artifact id back to its start and produces it anew: new options, a
// new text, or a pipeline run; what depends on it goes stale (listed once it is
// approved again). A restart while the run holds its topic (State.TopicHeld) keeps
// the topic, as Keep would: who may restart may decide it. A failure undoes the
// whole restart.
func (t *wfTurn) restart(ctx context.Context, id string) error {
	rev, err := t.m.Restart(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	if t.ws().TopicHeld {
		t.ws().TopicHeld = false
		t.events = append(t.events, cardEvent{kind: evTopic, by: t.user, why: "kept"})
	}
	t.keep(rev)
	a, _ := t.def().Artifact(id)
	switch a.Mode {
	case workflow.ModeChoice:
		return author{t}.propose(ctx, id, supersede{why: supersededRestarted})
	case workflow.ModeAuto:
		pipelineRun{t}.startAuto(ctx, []string{id})
		return nil
	}
	return author{t}.write(ctx, id, "", "rewritten", supersede{why: supersededRestarted})
}

// edit revises artifact id following instructions; what depends on it goes stale.
func (t *wfTurn) edit(ctx context.Context, id, instructions string) error {
	if err := t.m.CheckEdit(t.ws(), id, t.user); err != nil {
		return err
	}
	return author{t}.rewrite(ctx, id, instructions, "edited: "+instructions, true)
}

// finish writes the summary, uploads the report and completes the run.
func (t *wfTurn) finish(ctx context.Context) error {
	summary, u, err := t.s.cfg.Agent.Summarize(ctx, conversation.ArtifactRequest{Workflow: t.def(), Locale: t.ws().Locale, Inputs: t.ws().Inputs, Approved: texts(t.ws()), History: t.hist})
	t.add(u)
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	if err := t.upload(ctx, false, render.Tr(t.lang, "done", t.def().Title)+"\n\n"+t.s.cfg.Format(summary)); err != nil {
		return err
	}
	if err := t.m.Complete(t.ws()); err != nil {
		return err
	}
	t.state.Mode = conversation.ModeAssistant
	return nil
}

// texts returns every artifact's current text in ws.
func texts(ws *workflow.State) map[string]string {
	out := map[string]string{}
	for id, st := range ws.Artifacts {
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
	report, err := t.def().RenderReport(workflow.ReportData{Workflow: t.def(), Artifacts: texts(t.ws()), Approved: approved, Draft: draft, Inputs: t.ws().Inputs})
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	name := t.def().Name + ".md"
	if draft {
		name = t.def().Name + "-draft.md"
	}
	if err := t.r.Out.Upload(ctx, conversation.File{Name: name, Title: t.def().Title, Content: []byte(report), Comment: comment}); err != nil {
		return conversation.FailedAt(conversation.CauseSlack, fmt.Errorf("upload report: %w", err))
	}
	return nil
}

// earlierSubject returns the subject that the newest earlier message of the thread
// states (workflow.StatedSubject: "we need a post on X"), with its author, to fill
// the first required input of a start command without text; "", "" when none states
// one. A question asked of the bot (the assistant view's earlier question) never does.
func (t *wfTurn) earlierSubject() (subject, user string) {
	for _, m := range slices.Backward(t.hist) {
		if m.Role == conversation.RoleContext || m.Role == conversation.RoleUser {
			if s := workflow.StatedSubject(m.Text); s != "" {
				return s, m.UserID
			}
		}
	}
	return "", ""
}
