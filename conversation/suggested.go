package conversation

import (
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// SuggestedPrompt is a prompt offered in an assistant thread: Title is shown, Message
// is sent as the person's message when it is clicked.
type SuggestedPrompt struct {
	Title   string `yaml:"title" json:"title"`
	Message string `yaml:"message" json:"message"`
}

// MaxSuggestedPrompts is the most prompts Slack shows in an assistant thread
// (assistant.threads.setSuggestedPrompts: "up to four").
const MaxSuggestedPrompts = 4

// MaxTitleChars bounds a thread title made from a question.
const MaxTitleChars = 80

// SuggestedPrompts are the prompts offered when an assistant thread starts
// (SUGGESTED_PROMPTS; docs/tools.md, "Assistant view"): those of the channel the person is
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

// DefaultDirectGreeting greets a first direct message outside the assistant view,
// where no suggestions are shown, so it points at none.
const DefaultDirectGreeting = "Hi! Ask me anything here. In a channel, mention me to bring me into a thread."

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

// DirectGreetingText returns the greeting of a first direct message outside the
// assistant view: the configured greeting, or DefaultDirectGreeting.
func (sp *SuggestedPrompts) DirectGreetingText() string {
	if sp != nil && sp.Greeting != "" {
		return sp.Greeting
	}
	return DefaultDirectGreeting
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
