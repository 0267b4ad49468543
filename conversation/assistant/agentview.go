package assistant

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// The agent view (docs/tools.md, "Agent view"): Slack's agent messaging experience.
// Opening the Messages tab (app_home_opened) and what the person views
// (app_context_changed) arrive as KindAssistantThread inputs of the DM's Messages tab
// (conversation.MessagesTabKey), stored and run in order like any input: the first
// open is greeted, once, with the suggested prompts; every change records what the
// person views in the tab's state. A turn of a thread in that DM then runs with the
// viewed channel's strategy and tool policy, and the model is told what the person
// looks at (viewing). A person's rename of a session (agent_session_title_changed)
// is kept in its thread's state, and the bot never renames it again.

// viewingTimeout bounds reading what the person views (ReadViewing).
const viewingTimeout = 10 * time.Second

// agentEvent runs a KindAssistantThread input of the agent view.
func (s *Handler) agentEvent(ctx context.Context, r *turns.Run) error {
	ev := r.In.Thread
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		cp, err = &conversation.Checkpoint{Conversation: conversation.Conversation{Key: r.In.Key, State: conversation.State{Mode: conversation.ModeAssistant, StartedBy: ev.UserID}}}, nil
	}
	if err != nil {
		return err
	}
	e := turns.Ending{Rebase: true}
	switch ev.Event {
	case conversation.SessionTitleChanged:
		e.Update = func(st *conversation.State) {
			ses := conversation.Session{}
			if st.Session != nil {
				ses = *st.Session
			}
			ses.Title, ses.Renamed = ev.Title, true
			st.Session = &ses
		}
		r.Log.Info("agent session renamed by the person; the bot keeps the title", "by", ev.UserID)
	default:
		opened := ev.Event == conversation.AppHomeOpened
		if a := cp.Conversation.State.Assistant; opened && (a == nil || !a.Greeted) {
			prompts := s.cfg.SuggestedPrompts.For(conversation.ViewedChannelID(ev.Viewed), s.workflowPrompts())
			e.Reply = render.MessagesTabGreeting(s.cfg.SuggestedPrompts.GreetingText(), prompts)
		}
		e.Update = func(st *conversation.State) {
			v := conversation.AssistantView{}
			if st.Assistant != nil {
				v = *st.Assistant
			}
			if !opened || len(ev.Viewed) > 0 {
				v.Viewed = slices.Clone(ev.Viewed)
				v.ContextChannelID = conversation.ViewedChannelID(ev.Viewed)
			}
			v.Greeted = v.Greeted || opened
			st.Assistant = &v
		}
		r.Log.Info("agent view", "event", ev.Event, "viewed", len(ev.Viewed))
	}
	fctx, cancel := r.Final(ctx)
	defer cancel()
	return r.Finish(fctx, cp.Conversation, e)
}

// viewing returns what the model is told of what the person views, for the turn of
// a thread in the agent view's Messages tab (a DM), nil elsewhere or when nothing is
// known. It records the viewed channel in cp's state, whose strategy and tool policy
// then apply (contextChannel), and which the turn saves. A turn of a click (a tool's
// approval resumes the turn it paused) is told too, read afresh from the Messages
// tab's state, which is stored: after a restart as well.
func (s *Handler) viewing(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint) *conversation.Viewing {
	if !s.cfg.AgentView {
		return nil
	}
	switch msg := r.In.Message; {
	case msg != nil && !msg.Direct:
		return nil
	case msg == nil && cp.Conversation.State.Assistant == nil:
		return nil // a thread whose messages were never in the Messages tab
	}
	tab, ok := r.MessagesTab(ctx)
	if !ok || tab.Assistant == nil {
		return nil
	}
	viewed := tab.Assistant.Viewed
	a := conversation.AssistantView{Titled: true} // the session's title is set instead (conversation/turns/session.go)
	if cur := cp.Conversation.State.Assistant; cur != nil {
		a = *cur
	}
	a.ContextChannelID = conversation.ViewedChannelID(viewed)
	cp.Conversation.State.Assistant = &a
	if s.cfg.Viewing == nil || len(viewed) == 0 {
		return nil
	}
	vctx, cancel := context.WithTimeout(ctx, viewingTimeout)
	defer cancel()
	v, err := s.cfg.Viewing.ReadViewing(vctx, r.In.Key.TeamID, viewed)
	if err != nil {
		r.Log.Info("part of what the person views was not read", "error", err)
	}
	if v.Empty() {
		return nil
	}
	return &v
}
