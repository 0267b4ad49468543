package workflowrun

import (
	"context"
	"errors"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// render shows what the turn changed (cards follow the state): each event in order
// (the run's first message, an artifact's new options or text, an approval), every
// message an artifact's new one replaced closed with what replaced it, and the stale
// list, shown once the artifact whose change made it is approved again, its rows
// updated as they are handled. ctx is the final writes' context.
func (t poster) render(ctx context.Context) error {
	for _, e := range t.events {
		switch e.kind {
		case evStarted:
			card := t.cards().Started(t.ws())
			if t.startedInChannel() {
				// The thread's first message is the run's header: it becomes this card
				// rather than getting a second header under it.
				t.update(ctx, t.key.ThreadTS, card)
			} else if err := t.postCard(ctx, card, &t.ws().TopicTS); err != nil {
				return err
			}
			if !t.ws().TopicHeld {
				t.ws().TopicTS = ""
			}
		case evTopic:
			// The start card loses its buttons and says who decided.
			card := t.cards().Started(t.ws())
			card.Blocks = append(card.Blocks, conversation.Block{Kind: conversation.BlockContext, Text: "✓ " + render.Tr(t.lang, "topic."+e.why, e.by)})
			t.update(ctx, t.ws().TopicTS, card)
			t.ws().TopicTS = ""
		case evInputs:
			t.renderInputs(ctx, e.by) // modal.go
		case evProgress:
			if t.ws().Pipeline != nil {
				t.showProgress(ctx, true)
			}
		case evApproved, evKept:
			a, _ := t.def().Artifact(e.id)
			st := t.ws().Artifacts[e.id]
			note := "✓ " + render.Tr(t.lang, "approved_by", e.by)
			if e.kind == evKept {
				note = "✓ " + render.Tr(t.lang, "superseded.kept", e.by)
			}
			if st.MessageTS != "" {
				t.update(ctx, st.MessageTS, t.cards().Closed(a, st, note))
			}
			t.shown[e.id] = *st
		case evShow:
			if err := t.renderShow(ctx, e); err != nil {
				return err
			}
		case evAsk:
			if err := t.renderAsk(ctx); err != nil { // ask.go
				return err
			}
		case evDecided:
			t.renderDecided(ctx, e)
		}
	}
	t.events = nil
	t.renderMoved(ctx)
	return t.renderStale(ctx)
}

// renderMoved brings every artifact message that shows an earlier revision, and that
// no event of the turn replaced, in line with the state: an artifact that went stale,
// or back to pending, or that the pipeline writes again, loses its buttons and says
// why; one still awaiting people is drawn again with buttons for its current revision.
func (t poster) renderMoved(ctx context.Context) {
	if t.ws() == nil || t.def() == nil {
		return
	}
	for _, id := range t.def().Order() {
		st, old := t.ws().Artifacts[id], t.shown[id]
		if st == nil || st.MessageTS == "" || st.MessageTS != old.MessageTS || st.Rev == old.Rev {
			continue
		}
		a, _ := t.def().Artifact(id)
		var card conversation.Card
		switch st.Status {
		case workflow.StatusStale:
			card = t.cards().Closed(a, &old, "⚠ "+render.Tr(t.lang, "superseded.stale", t.cards().Title(st.StaleBecause)))
		case workflow.StatusPending:
			card = t.cards().Closed(a, &old, "↻ "+render.Tr(t.lang, "superseded.withdrawn"))
		case workflow.StatusRunning:
			card = t.cards().Closed(a, &old, "↻ "+render.Tr(t.lang, "superseded.rewriting"))
		default:
			card = t.cards().Live(a, st)
		}
		t.update(ctx, st.MessageTS, card)
		t.shown[id] = *st
	}
}

// renderShow posts artifact e.id as it is now and closes the message that showed it
// before.
func (t poster) renderShow(ctx context.Context, e cardEvent) error {
	a, _ := t.def().Artifact(e.id)
	st := t.ws().Artifacts[e.id]
	old, oldTS := t.shown[e.id], st.MessageTS
	if err := t.postCard(ctx, t.cards().Live(a, st), &st.MessageTS); err != nil {
		return err
	}
	if oldTS != "" && oldTS != st.MessageTS {
		note := ""
		switch e.why {
		case supersededChosen:
			note = "✓ " + render.Tr(t.lang, "chosen", e.label, e.by)
		case supersededRegenerated:
			note = "↻ " + render.Tr(t.lang, "superseded.regenerated")
		case supersededRestarted:
			note = "↻ " + render.Tr(t.lang, "superseded.restarted", e.by)
		case supersededRewritten:
			note = "↻ " + render.Tr(t.lang, "superseded.rewriting")
		default:
			note = "✎ " + render.Tr(t.lang, "superseded.revised", e.revision)
		}
		t.update(ctx, oldTS, t.cards().Closed(a, &old, note))
	}
	t.shown[e.id] = *st
	return nil
}

// renderStale posts the stale list once it is shown, or updates it; a list whose rows
// are all handled is closed and forgotten.
func (t poster) renderStale(ctx context.Context) error {
	if t.ws() == nil {
		return nil
	}
	l := t.ws().Stale
	if l == nil {
		return nil
	}
	if l.Replaces != "" {
		t.update(ctx, l.Replaces, t.cards().StaleReplaced(l))
		l.Replaces = ""
	}
	if !l.Shown {
		return nil
	}
	card := t.cards().Stale(l, t.ws())
	if l.TS == "" {
		if err := t.postCard(ctx, card, &l.TS); err != nil {
			return err
		}
	} else {
		t.update(ctx, l.TS, card)
	}
	t.m.Staleness().ForgetList(t.ws())
	return nil
}

// postCard posts c in the thread and stores its ts in ts, when given. A post that
// Slack refused is logged and shows nothing; a lost lease ends the turn.
func (t poster) postCard(ctx context.Context, c conversation.Card, ts *string) error {
	posted, err := t.r.Out.PostCard(ctx, c)
	if errors.Is(err, conversation.ErrLeaseLost) {
		return err
	}
	if err != nil {
		t.log.Error("card not posted", "error", err)
	}
	if ts != nil {
		*ts = posted
	}
	return nil
}

// startedInChannel reports whether the turn runs a start typed in a channel, whose
// turn began in the thread the channel command opened with a header message.
func (t poster) startedInChannel() bool {
	cmd := t.r.In.Command
	if t.r.In.Kind != conversation.KindCommand || cmd == nil || cmd.Origin != t.key.ChannelID || cmd.Source == conversation.SourceShortcut {
		return false
	}
	c, _ := parseCommand(cmd.Line)
	return c.name == conversation.CmdStart
}

// post posts c in the thread now and returns its ts ("" when posting failed; logged).
func (t poster) post(ctx context.Context, c conversation.Card) string {
	var ts string
	_ = t.postCard(ctx, c, &ts)
	return ts
}

// update replaces the message ts with c, when there is one; a failure is logged.
func (t poster) update(ctx context.Context, ts string, c conversation.Card) {
	if ts == "" || t.r.Out.Lost() {
		return
	}
	if err := t.s.cfg.Messenger.UpdateCard(ctx, t.key, ts, c); err != nil {
		t.log.Warn("card not updated", "ts", ts, "error", err)
	}
}

// renderInputs shows an evInputs event: the message that asked for inputs is closed,
// saying who gave them (by, "" when nobody did), and when inputs are still missing
// and no message asks for them, one is posted (State.InputsTS).
func (t poster) renderInputs(ctx context.Context, by string) {
	ws := t.ws()
	if ws == nil || t.def() == nil {
		return
	}
	if by != "" && ws.InputsTS != "" {
		text := "✓ " + render.Tr(t.lang, "inputs.given", by)
		t.update(ctx, ws.InputsTS, render.NoteCard(text))
		ws.InputsTS = ""
	}
	missing := t.def().MissingInputs(ws.Inputs)
	if len(missing) == 0 || ws.InputsTS != "" {
		return
	}
	card := t.cards().AskInputs(missing)
	if ws.InputsTS = t.post(ctx, card); ws.InputsTS == "" && !t.r.Out.Lost() {
		t.reply = card.Text // the card was refused: the question alone, as the turn's reply
	}
}

// showProgress posts or updates the pipeline's progress message: the phase (the
// artifacts running), items done / total, failures, elapsed time, and Stop (Continue
// once stopped). Updates come at most once per turns.StatusInterval unless force is set.
func (t poster) showProgress(ctx context.Context, force bool) {
	p := t.ws().Pipeline
	now := t.s.cfg.Now()
	if !force && p.ProgressTS != "" && now.Sub(t.progressAt) < turns.StatusInterval {
		return
	}
	t.progressAt = now
	c := t.cards().Progress(t.ws(), now)
	if p.ProgressTS == "" {
		p.ProgressTS = t.post(ctx, c)
		return
	}
	t.update(ctx, p.ProgressTS, c)
}

// closeMeaning replaces the card of askMeaning at ts with what was chosen (choice,
// its button's label) and by whom.
func (t poster) closeMeaning(ctx context.Context, ts, choice string) {
	note := render.Tr(t.lang, "reply_read", t.user, choice)
	t.update(ctx, ts, render.NoteCard(note))
}

// closeRetried takes the Retry button off the failure message clicked, saying who
// retried: the step runs again below it.
func (t poster) closeRetried(ctx context.Context, a conversation.ActionInput) {
	if a.MessageTS == "" {
		return
	}
	note := "↻ " + render.Tr(t.lang, "retried_by", a.UserID)
	t.update(ctx, a.MessageTS, render.NoteCard(note))
}
