package turns

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Agent sessions (docs/tools.md, "Agent view"): every thread the bot answers is one.
// A turn sets it processing as it starts (sessionStart), and active, or closed once
// the thread's workflow finished, as it ends; Finish decides which, and the title,
// with the state it saves (sessionUpdate), and sets them before that save
// (endSession), which may free the lease. The person's rename
// (agent_session_title_changed) is kept in the state (State.Session.Renamed) and
// never overwritten.

// sessionPlan is what a turn's end sets on its session.
type sessionPlan struct {
	status string
	rename string // "" keeps the title
	sent   string // the status and title last set on the session (endSession)
	// native is set when sessionStart set the session processing: Slack shows the
	// session's own Stop while the turn runs (NativeStop). working is set when Slack
	// shows the session processing at all, with its Stop or, where the app hears no
	// Stop (conversation.ErrNoNativeStop), a loading indicator (ShowWorking).
	native, working bool
}

// key is what endSession sets of p.
func (p sessionPlan) key() string { return p.status + "\x00" + p.rename }

// sessionThread reports whether the turn of in works in a session: a person's work
// in a thread, not the Messages tab, a channel command or an event of the session
// itself.
func sessionThread(in conversation.Input) bool {
	if in.Key.ThreadTS == "" || in.Key.ThreadTS == conversation.MessagesTab {
		return false
	}
	if a := in.Action; a != nil && a.Action.Name == conversation.ActionStop {
		return false // a Stop ends the session's work; it does none
	}
	return in.Kind != conversation.KindAssistantThread
}

// sessionStart sets r's session processing, creating it titled with the person's
// question when it has none. A failure is logged at debug: the turn goes on.
func (e *envelope) sessionStart(ctx context.Context, r *Run) {
	if e.cfg.Sessions == nil || !sessionThread(r.In) {
		return
	}
	title := ""
	if m := r.In.Message; m != nil {
		title = sessionTitleOf(e.redactText(m.Text))
	}
	err := e.cfg.Sessions.SetSessionStatus(ctx, r.In.Key, conversation.SessionProcessing, title, r.In.User())
	logSessionError(r, "agent session status not set", err, "status", conversation.SessionProcessing)
	r.session = &sessionPlan{status: conversation.SessionActive, native: err == nil,
		working: err == nil || errors.Is(err, conversation.ErrNoNativeStop)}
}

// ShowWorking shows that r's turn works, and reports whether it set a status for it.
// Where the turn set the thread's agent session processing (sessionStart), Slack shows
// that already, with the session's loading indicator and Stop (or the indicator alone
// where the app hears no Stop: conversation.ErrNoNativeStop; docs/tools.md, "Agent
// view"), so it sets no status: it only clears StatusQueued where this process showed
// it while the input waited for a turn slot. Elsewhere it sets StatusThinking
// (assistant.threads.setStatus, through the Messenger's SetStatus). A failure is
// logged, never fatal.
func (r *Run) ShowWorking(ctx context.Context) bool {
	queued := r.takeQueued()
	switch {
	case r.session == nil || !r.session.working:
		r.SetStatus(ctx, StatusThinking)
		return true
	case queued:
		r.SetStatus(ctx, "")
	}
	return false
}

// takeQueued reports whether r's thread shows StatusQueued, set by its worker while
// the input waited for a turn slot, and forgets it: the caller replaces or clears it.
func (r *Run) takeQueued() bool { return r.th != nil && r.env.threads.takeQueued(r.th) }

// NativeStop reports whether Slack shows the Stop of the thread's agent session while
// r's turn runs: the turn set the session processing as it started (sessionStart),
// and Slack did not warn that the app hears no Stop (conversation.ErrNoNativeStop).
// A streamed answer then carries no Stop button of its own, which would stay in the
// finished message (docs/tools.md, "Agent view").
func (r *Run) NativeStop() bool { return r.session != nil && r.session.native }

// logSessionError logs err of a session call at debug, unless the Sessions logged it
// once already (conversation.LoggedBySessions).
func logSessionError(r *Run, msg string, err error, args ...any) {
	if err != nil && !conversation.LoggedBySessions(err) {
		r.Log.Debug(msg, append(args, "error", err)...)
	}
}

// endSession sets r's session to what its end planned (active when the turn saved
// nothing), on a bounded context of its own, unless that is set already. Finish calls it before the turn's last save, which
// may free the lease: once it is free, another turn of the thread may start (here or
// on another replica) and set the session processing, which this turn's status must
// not overwrite; nor may a turn whose lease is no longer its own (Outbox.check, as
// for its posts). A failure is logged at debug.
func (r *Run) endSession() {
	p := r.session
	if p == nil || p.sent == p.key() {
		return
	}
	ctx, cancel := r.env.final(context.Background())
	defer cancel()
	if r.Out != nil {
		if err := r.Out.check(ctx); err != nil {
			r.Log.Debug("agent session status not set: the lease is not confirmed", "status", p.status, "error", err)
			return
		}
	}
	if p.rename != "" {
		logSessionError(r, "agent session not renamed", r.env.cfg.Sessions.RenameSession(ctx, r.In.Key, p.rename))
	}
	logSessionError(r, "agent session status not set", r.env.cfg.Sessions.SetSessionStatus(ctx, r.In.Key, p.status, "", ""), "status", p.status)
	p.sent = p.key()
}

// sessionUpdate records in st the session r's turn leaves: its title (the first
// question, then the workflow's name and subject, unless the person renamed it) and
// its status (closed once the workflow finished, processing while more follows, else
// active), and plans the calls that set them.
func (r *Run) sessionUpdate(st *conversation.State, more bool) {
	if r.session == nil {
		return
	}
	s := conversation.Session{}
	if st.Session != nil {
		s = *st.Session
	}
	title := s.Title
	if m := r.In.Message; title == "" && m != nil {
		title = sessionTitleOf(r.env.redactText(m.Text))
	}
	if wf := st.Workflow; wf != nil {
		title = workflowTitle(wf)
	}
	r.session.rename = ""
	if !s.Renamed && title != s.Title {
		if s.Title != "" || r.In.Message == nil {
			r.session.rename = title // a session created with the question is titled already
		}
		s.Title = title
	}
	r.session.status = conversation.SessionActive
	if more {
		r.session.status = conversation.SessionProcessing
	}
	if wf := st.Workflow; wf != nil && (wf.Status == workflow.RunCompleted || wf.Status == workflow.RunCancelled) {
		r.session.status = conversation.SessionClosed
	}
	s.Status = r.session.status
	st.Session = &s
}

// sessionTitleOf makes a session's title of a question: its words, cut to
// conversation.MaxTitleChars.
func sessionTitleOf(text string) string {
	title := strings.Join(strings.Fields(text), " ")
	if r := []rune(title); len(r) > conversation.MaxTitleChars {
		title = string(r[:conversation.MaxTitleChars-1]) + "…"
	}
	return title
}

// workflowTitle is the title of a workflow run's session: its name and subject (the
// input named subject or topic, else the first input by name).
func workflowTitle(wf *workflow.State) string {
	subject := cmp.Or(wf.Inputs["subject"], wf.Inputs["topic"])
	if subject == "" {
		keys := make([]string, 0, len(wf.Inputs))
		for k := range wf.Inputs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if subject = strings.TrimSpace(wf.Inputs[k]); subject != "" {
				break
			}
		}
	}
	if subject == "" {
		return sessionTitleOf(wf.Name)
	}
	return sessionTitleOf(wf.Name + ": " + subject)
}

// redactText scrubs configured secrets out of text (Config.Redact), for a title.
func (e *env) redactText(text string) string {
	if e.cfg.Redact == nil {
		return text
	}
	return e.cfg.Redact(text)
}

// MessagesTab loads the state of the Messages tab of the DM r's thread is in
// (conversation.MessagesTabKey): what the person views, in the agent view. ok is false
// when there is none, or r's thread is not in a DM's Messages tab; a store error is
// logged and reported as none.
func (r *Run) MessagesTab(ctx context.Context) (st conversation.State, ok bool) {
	key := conversation.MessagesTabKey(r.In.Key.TeamID, r.In.Key.ChannelID)
	var cp *conversation.Checkpoint
	err := r.env.retryStore(ctx, "load the Messages tab", func(ctx context.Context) error {
		var err error
		cp, err = r.env.cfg.Store.Load(ctx, key, 0)
		return err
	})
	if err != nil {
		if !errors.Is(err, conversation.ErrNotFound) {
			r.Log.Warn("what the person views is unknown: the Messages tab did not load", "error", err)
		}
		return st, false
	}
	return cp.Conversation.State, true
}
