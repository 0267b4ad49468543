package assistant

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
)

// The assistant view (docs/tools.md, "Assistant view"): Slack's split view for AI apps. When
// a person opens it, Slack starts an assistant thread in the app's DM and sends
// assistant_thread_started, with the channel the person is viewing; as they move
// around it sends assistant_thread_context_changed. Both arrive as KindAssistantThread
// inputs, stored and run in the thread's order like any other input: the first posts a
// greeting and sets the suggested prompts, both record the viewed channel in the
// conversation's state (State.Assistant), and the thread's turns then run with that
// channel's strategy and tool policy (Prompt.ContextChannelID).

// workflowPrompts returns a prompt per offered workflow that starts it.
func (s *Handler) workflowPrompts() []conversation.SuggestedPrompt {
	var out []conversation.SuggestedPrompt
	for _, d := range s.cfg.Workflows.All() {
		title := d.Title
		if title == "" {
			title = d.Name
		}
		out = append(out, conversation.SuggestedPrompt{Title: "Start: " + title, Message: conversation.CmdStart + " " + d.Name})
	}
	return out
}

// ThreadEvent runs a KindAssistantThread input: it records the channel the
// person views in the thread's state and, when the thread starts, posts the greeting
// (once) and sets the suggested prompts for that channel.
func (s *Handler) ThreadEvent(ctx context.Context, r *turns.Run) error {
	ev := r.In.Thread
	switch ev.Event {
	case conversation.AppHomeOpened, conversation.AppContextChanged, conversation.SessionTitleChanged:
		return s.agentEvent(ctx, r) // agentview.go
	}
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		cp, err = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: r.In.Key, State: conversation.State{Mode: conversation.ModeAssistant, StartedBy: ev.UserID}}}, nil
	}
	if err != nil {
		return err
	}
	started := ev.Event == conversation.AssistantThreadStarted
	e := turns.Ending{Rebase: true, Update: func(st *conversation.State) {
		v := conversation.AssistantView{}
		if st.Assistant != nil {
			v = *st.Assistant
		}
		v.ContextChannelID = ev.ContextChannelID
		v.Greeted = v.Greeted || started
		st.Assistant = &v
	}}
	if started {
		if a := cp.Conversation.State.Assistant; a == nil || !a.Greeted {
			e.Reply = s.cfg.SuggestedPrompts.GreetingText()
		}
		if s.threads != nil {
			prompts := s.cfg.SuggestedPrompts.For(ev.ContextChannelID, s.workflowPrompts())
			title := ""
			if s.cfg.SuggestedPrompts != nil {
				title = s.cfg.SuggestedPrompts.Title
			}
			if err := s.threads.SetSuggestedPrompts(ctx, r.In.Key, title, prompts); err != nil {
				r.Log.Warn("suggested prompts not set", "error", err)
			}
		}
	}
	r.Log.Info("assistant thread", "event", ev.Event, "context_channel", ev.ContextChannelID)
	fctx, cancel := r.Final(ctx)
	defer cancel()
	return r.Finish(fctx, cp.Conversation, e)
}

// titleThread sets the title of an assistant thread from its first question, once:
// it reports whether the state should record that it did (even when Slack refused,
// so that a refusal is not retried on every message).
func (s *Handler) titleThread(ctx context.Context, r *turns.Run, st conversation.State, question string) bool {
	if st.Assistant == nil || st.Assistant.Titled || s.threads == nil {
		return false
	}
	// Scrubbed before it is cut: a secret cut in two is not found.
	title := strings.Join(strings.Fields(s.cfg.redact(question)), " ")
	if utf8.RuneCountInString(title) > conversation.MaxTitleChars {
		title = string([]rune(title)[:conversation.MaxTitleChars-1]) + "…"
	}
	if title == "" {
		return false
	}
	if err := s.threads.SetTitle(ctx, r.In.Key, title); err != nil {
		r.Log.Warn("assistant thread title not set", "error", err)
	}
	return true
}

// contextChannel returns the channel whose strategy and tool policy a turn of st's
// thread uses: the channel viewed in an assistant thread, otherwise "" (the thread's
// own).
func contextChannel(st conversation.State) string {
	if st.Assistant != nil {
		return st.Assistant.ContextChannelID
	}
	return ""
}

// DirectMessage prepares the turn of a person's top-level direct message outside the
// assistant view: Slack shows a thread reply to it only behind "1 reply", so the
// turn's replies are broadcast to the DM too (and not streamed), and the person's
// very first message to the bot is greeted first, as an assistant thread is.
func (s *Handler) DirectMessage(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint) {
	msg := r.In.Message
	if msg == nil || !msg.Direct || msg.ThreadTS != msg.TS || cp.Conversation.State.Assistant != nil || s.cfg.AgentView {
		return
	}
	r.Out.SetBroadcast()
	dm, ok := s.raw.(conversation.DirectMessages)
	if cp.Conversation.Version != 0 || !ok {
		return
	}
	first, err := dm.FirstMessage(ctx, r.In.Key, msg.TS)
	if err != nil {
		r.Log.Warn("first direct message not checked; no greeting", "error", err)
		return
	}
	if !first {
		return
	}
	if _, err := r.Out.PostReply(ctx, s.cfg.SuggestedPrompts.DirectGreetingText(), false, false); err != nil {
		r.Log.Warn("greeting not posted", "error", err)
	}
}
