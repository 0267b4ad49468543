package bot

import (
	"context"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
)

var (
	_ conversation.ModalOpener = (*Messenger)(nil)
	_ conversation.ModalOpener = (*SigningMessenger)(nil)
)

// OpenModal opens m (modalView: one text input, or an input per field) for
// triggerID with views.open; its submission carries a as private_metadata, as the
// modals of buttons do. Slack accepts a trigger_id once, within 3 seconds of the
// slash command or click that issued it. Errors: a cannot be encoded; Slack's
// (expired_trigger_id, invalid_trigger_id, …).
func (m *Messenger) OpenModal(ctx context.Context, triggerID string, a conversation.Action, modal conversation.Modal) error {
	view, err := modalView(a, modal)
	if err != nil {
		return err
	}
	if _, err := m.api.OpenViewContext(ctx, triggerID, view); err != nil {
		return fmt.Errorf("views.open: %w", err)
	}
	return nil
}

// OpenModal is Messenger.OpenModal with a signed, as the Bot requires of a modal's
// submission.
func (m *SigningMessenger) OpenModal(ctx context.Context, triggerID string, a conversation.Action, modal conversation.Modal) error {
	signed, err := m.signer.Sign(a)
	if err != nil {
		return err
	}
	return m.Messenger.OpenModal(ctx, triggerID, signed, modal)
}
