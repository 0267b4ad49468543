package turns

import (
	"context"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// cardRecorder is a Messenger that keeps the last card posted.
type cardRecorder struct {
	conversation.Messenger
	got conversation.Card
}

func (r *cardRecorder) PostCard(_ context.Context, _ conversation.Key, c conversation.Card, _ conversation.Tag) (string, error) {
	r.got = c
	return "1.0", nil
}

// TestRedactingMessengerScrubsModals: a button's modal (an artifact's Edit opens one
// with the artifact's text as its initial value) is sent to Slack too, inside the
// button's value: its texts are scrubbed like the card's.
func TestRedactingMessengerScrubsModals(t *testing.T) {
	const secret = "sk-modal-secret-1234"
	rec := &cardRecorder{}
	m := redactMessenger(rec, strings.NewReplacer(secret, "[REDACTED]").Replace)
	modal := &conversation.Modal{Title: "Edit " + secret, Label: "Label " + secret, Placeholder: "Hint " + secret, Submit: "Go", Initial: "Text: " + secret}
	card := conversation.Card{Text: "t", Blocks: []conversation.Block{{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: "Edit", Modal: modal}}, Menu: []conversation.Button{{Label: "Edit", Modal: modal}}}}}
	if _, err := m.PostCard(context.Background(), conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.0"}, card, conversation.Tag{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(rec.got.Blocks[0].Buttons, rec.got.Blocks[0].Menu...) {
		if m := *b.Modal; strings.Contains(m.Title+m.Label+m.Placeholder+m.Submit+m.Initial, secret) {
			t.Errorf("the modal sent holds the secret: %+v", m)
		}
	}
	if !strings.Contains(modal.Initial, secret) {
		t.Error("the caller's modal was changed")
	}
}

// statusRecorder is a Messenger that keeps the last status set.
type statusRecorder struct {
	conversation.Messenger
	got string
}

func (r *statusRecorder) SetStatus(_ context.Context, _ conversation.Key, status string) error {
	r.got = status
	return nil
}

// TestRedactingMessengerScrubsStatus: the thread's status (assistant.threads.setStatus)
// is text sent to Slack too: a progress line names the tools the model called, as
// the model wrote their names.
func TestRedactingMessengerScrubsStatus(t *testing.T) {
	const secret = "sk-status-secret-1234"
	rec := &statusRecorder{}
	m := redactMessenger(rec, strings.NewReplacer(secret, "[REDACTED]").Replace)
	if err := m.SetStatus(context.Background(), conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.0"}, "Running "+secret+"…"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rec.got, secret) {
		t.Errorf("status sent %q", rec.got)
	}
}
