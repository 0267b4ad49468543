package bot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// The assistant view (docs/tools.md, "Assistant view"): the Messenger sets a thread's
// suggested prompts and title (Slack's events of an assistant thread become
// conversation inputs in events.go, inputFromAssistantThread).

var _ conversation.AssistantThreads = (*Messenger)(nil)

// SetSuggestedPrompts shows prompts under title in the assistant thread of key
// (assistant.threads.setSuggestedPrompts, scope assistant:write). Errors: Slack's,
// wrapped with the method's name.
func (m *Messenger) SetSuggestedPrompts(ctx context.Context, key conversation.Key, title string, prompts []conversation.SuggestedPrompt) error {
	p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: key.ChannelID, ThreadTS: key.ThreadTS, Title: title}
	for _, sp := range prompts {
		p.AddPrompt(sp.Title, sp.Message)
	}
	if err := m.api.SetAssistantThreadsSuggestedPromptsContext(ctx, p); err != nil {
		return fmt.Errorf("assistant.threads.setSuggestedPrompts: %w", err)
	}
	return nil
}

// SetTitle sets the title of the assistant thread of key (assistant.threads.setTitle,
// scope assistant:write). Errors: Slack's, wrapped with the method's name.
func (m *Messenger) SetTitle(ctx context.Context, key conversation.Key, title string) error {
	err := m.api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: key.ChannelID, ThreadTS: key.ThreadTS, Title: title})
	if err != nil {
		return fmt.Errorf("assistant.threads.setTitle: %w", err)
	}
	return nil
}

var _ conversation.DirectMessages = (*Messenger)(nil)

// FirstMessage reports whether ts is the first message of the DM of key: its
// conversations.history holds nothing older (scope im:history).
func (m *Messenger) FirstMessage(ctx context.Context, key conversation.Key, ts string) (bool, error) {
	h, err := m.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: key.ChannelID, Latest: ts, Inclusive: false, Limit: 1})
	if err != nil {
		return false, fmt.Errorf("conversations.history: %w", err)
	}
	return len(h.Messages) == 0, nil
}
