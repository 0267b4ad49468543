package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The assistant view (https://docs.slack.dev/ai): a person opens the app's split view,
// Slack starts an assistant thread in the app's DM and sends assistant_thread_started
// with the channel the person views; moving to another channel sends
// assistant_thread_context_changed. The app sets the thread's suggested prompts
// (assistant.threads.setSuggestedPrompts) and title (assistant.threads.setTitle).

// MaxSuggestedPrompts is the most prompts assistant.threads.setSuggestedPrompts
// accepts ("up to four suggested prompts").
const MaxSuggestedPrompts = 4

// assistantAPI keeps the assistant threads and answers the
// assistant.threads.* methods; StartAssistantThread and
// ChangeAssistantContext act as the person in the split view.
type assistantAPI struct {
	ws *workspace
	ev *eventsAPI

	threads map[threadKey]*AssistantThread // guarded by ws.mu
}

// methods is the assistant family of the Web API.
func (a *assistantAPI) methods() map[string]method {
	return map[string]method{
		"assistant.threads.setStatus":           {handle: a.assistantThreadsSetStatus},
		"assistant.threads.setSuggestedPrompts": {handle: a.assistantThreadsSetSuggestedPrompts},
		"assistant.threads.setTitle":            {handle: a.assistantThreadsSetTitle},
	}
}

// SuggestedPrompt is a prompt of an assistant thread.
type SuggestedPrompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// AssistantThread is what the app set on an assistant thread (also the page's
// GET /ui/state "assistant" entries).
type AssistantThread struct {
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	// User is the person whose thread it is; Context the channel they view.
	User    string `json:"user"`
	Context string `json:"context,omitempty"`
	// Title is the thread's title (assistant.threads.setTitle), "" until set.
	Title string `json:"title,omitempty"`
	// PromptsTitle and Prompts are the last suggested prompts set.
	PromptsTitle string            `json:"prompts_title,omitempty"`
	Prompts      []SuggestedPrompt `json:"prompts,omitempty"`
}

// StartAssistantThread opens the assistant view for user, who views channel
// contextChannel ("" for none): it starts a thread in user's IM with the app (its
// root the person's message with subtype assistant_app_thread, "the root message of
// an assistant thread started by the end user" in Slack's reference, whose message
// event the app receives too) and sends assistant_thread_started. It returns the IM's id and the thread's ts.
func (a *assistantAPI) StartAssistantThread(user, contextChannel string) (channel, threadTS string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	im := a.ws.imLocked(user)
	if im == nil {
		return "", "", fmt.Errorf("no IM with %s: %w", user, ErrChannelNotFound)
	}
	if contextChannel != "" {
		if _, err := a.ws.findChannelLocked(contextChannel); err != nil {
			return "", "", err
		}
	}
	root := &record{Message: Message{Channel: im.ID, TS: a.ws.nextTSLocked(), User: user, Subtype: "assistant_app_thread", Text: "New chat"}}
	a.ev.postLocked(im, root)
	a.threads[threadKey{im.ID, root.TS}] = &AssistantThread{Channel: im.ID, ThreadTS: root.TS, User: user, Context: contextChannel}
	a.ev.assistantLocked(im, "assistant_thread_started", user, root.TS, contextChannel)
	return im.ID, root.TS, nil
}

// ChangeAssistantContext tells the app that the person of the assistant thread
// (channel, threadTS) now views contextChannel (assistant_thread_context_changed).
func (a *assistantAPI) ChangeAssistantContext(channel, threadTS, contextChannel string) error {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, err := a.ws.findChannelLocked(channel)
	if err != nil {
		return err
	}
	t := a.threads[threadKey{ch.ID, threadTS}]
	if t == nil {
		return fmt.Errorf("assistant thread %s/%s: %w", channel, threadTS, ErrMessageNotFound)
	}
	if _, err := a.ws.findChannelLocked(contextChannel); err != nil {
		return err
	}
	t.Context = contextChannel
	a.ev.assistantLocked(ch, "assistant_thread_context_changed", t.User, threadTS, contextChannel)
	return nil
}

// AssistantThread returns what the app set on the assistant thread (channel,
// threadTS), and whether there is such a thread.
func (a *assistantAPI) AssistantThread(channel, threadTS string) (AssistantThread, bool) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	t := a.threads[threadKey{channel, threadTS}]
	if t == nil {
		return AssistantThread{}, false
	}
	c := *t
	c.Prompts = slices.Clone(t.Prompts)
	return c, true
}

// assistantThreadLocked resolves the thread of an assistant.threads.* call: the
// channel must exist and thread_ts name an assistant thread in it.
func (a *assistantAPI) assistantThreadLocked(r *request) (*AssistantThread, error) {
	ch, err := channelArg(a.ws, r.get("channel_id"))
	if err != nil {
		return nil, err
	}
	t := a.threads[threadKey{ch.ID, r.get("thread_ts")}]
	if t == nil {
		return nil, errCode("invalid_thread_ts")
	}
	return t, nil
}

// assistantThreadsSetSuggestedPrompts implements assistant.threads.setSuggestedPrompts
// (https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts):
// channel_id and prompts are required, prompts a JSON array of up to four prompts,
// each with a title and a message; title is optional. The emulator asks for thread_ts
// too (Slack's default, the channel's latest message, is not emulated).
func (a *assistantAPI) assistantThreadsSetSuggestedPrompts(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts", "prompts"); err != nil {
		return nil, err
	}
	t, err := a.assistantThreadLocked(r)
	if err != nil {
		return nil, err
	}
	var prompts []SuggestedPrompt
	if err := json.Unmarshal([]byte(r.get("prompts")), &prompts); err != nil {
		return nil, errCode("invalid_arguments", "[ERROR] prompts must be a JSON array of {title, message}")
	}
	if len(prompts) == 0 || len(prompts) > MaxSuggestedPrompts {
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] %d prompts: between 1 and %d are allowed", len(prompts), MaxSuggestedPrompts))
	}
	for i, p := range prompts {
		if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
			return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] prompt %d: title and message are required", i+1))
		}
	}
	t.PromptsTitle, t.Prompts = r.get("title"), prompts
	a.ws.notifyLocked(Update{Kind: UpdateAssistant, Channel: t.Channel, ThreadTS: t.ThreadTS})
	return nil, nil
}

// assistantThreadsSetTitle implements assistant.threads.setTitle
// (https://docs.slack.dev/reference/methods/assistant.threads.setTitle): channel_id,
// thread_ts and title are required.
func (a *assistantAPI) assistantThreadsSetTitle(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts", "title"); err != nil {
		return nil, err
	}
	t, err := a.assistantThreadLocked(r)
	if err != nil {
		return nil, err
	}
	t.Title = r.get("title")
	a.ws.notifyLocked(Update{Kind: UpdateAssistant, Channel: t.Channel, ThreadTS: t.ThreadTS})
	return nil, nil
}

// assistantThreadsLocked returns user's assistant threads, oldest first.
func (a *assistantAPI) assistantThreadsLocked(user string) []AssistantThread {
	var out []AssistantThread
	for _, t := range a.threads {
		if t.User == user {
			c := *t
			c.Prompts = slices.Clone(t.Prompts)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b AssistantThread) int {
		return cmp.Or(cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.ThreadTS, b.ThreadTS))
	})
	return out
}

// assistantThreadsSetStatus implements assistant.threads.setStatus
// (https://docs.slack.dev/reference/methods/assistant.threads.setStatus):
// channel_id and thread_ts are required; an empty status clears it.
func (a *assistantAPI) assistantThreadsSetStatus(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts"); err != nil {
		return nil, err
	}
	ch, err := channelArg(a.ws, r.get("channel_id"))
	if err != nil {
		return nil, err
	}
	threadTS := r.get("thread_ts")
	if ch.find(threadTS) == nil {
		return nil, errCode("invalid_thread_ts")
	}
	a.ws.setStatusLocked(threadKey{ch.ID, threadTS}, r.get("status"))
	return nil, nil
}
