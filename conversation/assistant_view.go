package conversation

import (
	"context"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// The assistant view (README, "Assistant view"): Slack's split view for AI apps. When
// a person opens it, Slack starts an assistant thread in the app's DM and sends
// assistant_thread_started, with the channel the person is viewing; as they move
// around it sends assistant_thread_context_changed. Both arrive as KindAssistantThread
// inputs, stored and run in the thread's order like any other input: the first posts a
// greeting and sets the suggested prompts, both record the viewed channel in the
// conversation's state (State.Assistant), and the thread's turns then run with that
// channel's strategy and tool policy (Prompt.ContextChannelID).

// KindAssistantThread is an event of an assistant thread (Input.Thread):
// assistant_thread_started or assistant_thread_context_changed.
const KindAssistantThread InputKind = "assistant_thread"

// The events of an assistant thread (AssistantThreadInput.Event), named as Slack names
// them.
const (
	AssistantThreadStarted        = "assistant_thread_started"
	AssistantThreadContextChanged = "assistant_thread_context_changed"
)

// AssistantThreadInput is an assistant thread's event: the thread is the input's Key
// (the app's DM and the thread's ts).
type AssistantThreadInput struct {
	// Event is AssistantThreadStarted or AssistantThreadContextChanged.
	Event string `json:"event"`
	// UserID is the person whose thread it is.
	UserID string `json:"user_id"`
	// ContextChannelID is the channel the person is viewing ("" when none: Slack
	// sends no context outside a channel); ContextTeamID its workspace.
	ContextChannelID string `json:"context_channel_id,omitempty"`
	ContextTeamID    string `json:"context_team_id,omitempty"`
}

// AssistantView is the state of an assistant thread (State.Assistant).
type AssistantView struct {
	// ContextChannelID is the channel the person viewed last ("" for none).
	ContextChannelID string `json:"context_channel_id,omitempty"`
	// Greeted is set once the greeting was posted; Titled once the thread's title was
	// set from its first question.
	Greeted bool `json:"greeted,omitempty"`
	Titled  bool `json:"titled,omitempty"`
}

// AssistantThreads is implemented by a Messenger that can dress an assistant thread
// (bot.Messenger, with assistant.threads.setSuggestedPrompts and
// assistant.threads.setTitle). The Service uses it when the Messenger has it.
type AssistantThreads interface {
	// SetSuggestedPrompts shows prompts (at most MaxSuggestedPrompts) under title in
	// the assistant thread of key.
	SetSuggestedPrompts(ctx context.Context, key Key, title string, prompts []SuggestedPrompt) error
	// SetTitle sets the title of the assistant thread of key.
	SetTitle(ctx context.Context, key Key, title string) error
}

// SuggestedPrompt is a prompt offered in an assistant thread: Title is shown, Message
// is sent as the person's message when it is clicked.
type SuggestedPrompt struct {
	Title   string `yaml:"title" json:"title"`
	Message string `yaml:"message" json:"message"`
}

// MaxSuggestedPrompts is the most prompts Slack shows in an assistant thread
// (assistant.threads.setSuggestedPrompts: "up to four").
const MaxSuggestedPrompts = 4

// maxTitleChars bounds a thread title made from a question.
const MaxTitleChars = 80

// SuggestedPrompts are the prompts offered when an assistant thread starts
// (SUGGESTED_PROMPTS; README, "Assistant view"): those of the channel the person is
// viewing, or Default. When workflows are offered, the last slot (or slots, when the
// list is short) starts one of them.
type SuggestedPrompts struct {
	// Title heads the list ("" for Slack's default).
	Title string `yaml:"title"`
	// Greeting is the message posted when a thread starts, and in a person's first
	// DM outside the assistant view ("" for DefaultGreeting).
	Greeting string                       `yaml:"greeting"`
	Default  []SuggestedPrompt            `yaml:"default"`
	Channels map[string][]SuggestedPrompt `yaml:"channels"`
}

// DefaultGreeting is the greeting of SuggestedPrompts without one.
const DefaultGreeting = "Hi! Ask me anything, or pick a suggestion below. In a channel, mention me to bring me into a thread."

// DefaultSuggestedPrompts are the prompts offered when SUGGESTED_PROMPTS is not set;
// bot.NewManifest uses them as the manifest's default prompts too.
var DefaultSuggestedPrompts = []SuggestedPrompt{
	{Title: "What can you do?", Message: "What can you do, and which tools can you use here?"},
	{Title: "What time is it?", Message: "What time is it in Tokyo right now?"},
}

// ParseSuggestedPrompts reads SuggestedPrompts from YAML (JSON is YAML too):
//
//	title: Try asking
//	greeting: Hi! I answer questions about our runbooks.
//	default:
//	  - title: On call
//	    message: Who is on call this week?
//	channels:
//	  C0123SUPPORT:
//	    - title: Open tickets
//	      message: List my open tickets
//
// Every prompt needs a title and a message; a list holds at most MaxSuggestedPrompts.
// Errors name the list and the prompt.
func ParseSuggestedPrompts(data []byte) (*SuggestedPrompts, error) {
	var sp SuggestedPrompts
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&sp); err != nil {
		return nil, fmt.Errorf("suggested prompts: %w", err)
	}
	if err := checkPrompts("default", sp.Default); err != nil {
		return nil, err
	}
	for ch, list := range sp.Channels {
		if err := checkPrompts("channel "+ch, list); err != nil {
			return nil, err
		}
	}
	return &sp, nil
}

// LoadSuggestedPrompts reads the SuggestedPrompts file at path (ParseSuggestedPrompts).
func LoadSuggestedPrompts(path string) (*SuggestedPrompts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("suggested prompts: %w", err)
	}
	return ParseSuggestedPrompts(data)
}

func checkPrompts(where string, list []SuggestedPrompt) error {
	if len(list) > MaxSuggestedPrompts {
		return fmt.Errorf("suggested prompts: %s has %d prompts; Slack shows at most %d", where, len(list), MaxSuggestedPrompts)
	}
	for i, p := range list {
		if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
			return fmt.Errorf("suggested prompts: %s, prompt %d: title and message are required", where, i+1)
		}
	}
	return nil
}

// greeting returns the greeting text.
func (sp *SuggestedPrompts) GreetingText() string {
	if sp != nil && sp.Greeting != "" {
		return sp.Greeting
	}
	return DefaultGreeting
}

// For returns the prompts for a thread whose person views channelID: that channel's,
// or the default ones, then one prompt per workflow to start it (its "start <name>"
// command), at most MaxSuggestedPrompts in all and at least one of them a workflow's
// when there are workflows.
func (sp *SuggestedPrompts) For(channelID string, workflows []SuggestedPrompt) []SuggestedPrompt {
	base := DefaultSuggestedPrompts
	if sp != nil {
		if list, ok := sp.Channels[channelID]; ok && channelID != "" {
			base = list
		} else if sp.Default != nil {
			base = sp.Default
		}
	}
	keep := min(len(base), MaxSuggestedPrompts)
	if len(workflows) > 0 {
		keep = min(keep, MaxSuggestedPrompts-1)
	}
	out := append([]SuggestedPrompt(nil), base[:keep]...)
	for _, w := range workflows {
		if len(out) == MaxSuggestedPrompts {
			break
		}
		out = append(out, w)
	}
	return out
}

// PolicyChannel returns the channel whose strategy and tool policy apply to p: the
// channel the person views in the assistant view (ContextChannelID), otherwise the
// thread's own.
func (p Prompt) PolicyChannel() string {
	if p.ContextChannelID != "" {
		return p.ContextChannelID
	}
	return p.Key.ChannelID
}

// DirectMessages is implemented by a Messenger that can tell a person's first direct
// message to the bot (bot.Messenger, with conversations.history).
type DirectMessages interface {
	// FirstMessage reports whether the message ts is the first of the DM of key.
	FirstMessage(ctx context.Context, key Key, ts string) (bool, error)
}
