package bot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// MessageFiles returns the files shared in the message ts of key's thread, read back
// with conversations.replies (one page, the message alone), for a message whose
// event did not carry them (docs/architecture.md, "Files"). Files Slack shows only
// through files.info (a Slack Connect file's "file_access": "check_file_info") are
// returned without a URL.
func (m *Messenger) MessageFiles(ctx context.Context, key conversation.Key, ts string) ([]conversation.FileRef, error) {
	params := &slack.GetConversationRepliesParameters{
		ChannelID: key.ChannelID, Timestamp: key.ThreadTS, Oldest: ts, Latest: ts, Inclusive: true, Limit: 1,
	}
	msgs, _, _, err := m.api.GetConversationRepliesContext(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("conversations.replies: %w", err)
	}
	for _, msg := range msgs {
		if msg.Timestamp != ts {
			continue
		}
		return fileRefs(msg.Files), nil
	}
	return nil, nil
}

// fileRefs returns the references of Slack's file objects.
func fileRefs(files []slack.File) []conversation.FileRef {
	out := make([]conversation.FileRef, 0, len(files))
	for _, f := range files {
		out = append(out, conversation.FileRef{ID: f.ID, Name: f.Name, MIME: f.Mimetype, Size: int64(f.Size), URL: f.URLPrivate})
	}
	return out
}
