package emulator

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// The chat.* methods. Each runs with s.mu held.

// messageContent reads and checks the text, blocks, attachments and
// metadata arguments shared by chat.postMessage, chat.update and
// chat.postEphemeral.
type messageContent struct {
	text                          string
	blocks, attachments, metadata json.RawMessage
	hasText, hasBlocks            bool
}

func (s *Server) readContent(r *request) (messageContent, error) {
	c := messageContent{text: r.get("text")}
	_, c.hasText = r.params["text"]
	if raw := r.get("blocks"); raw != "" {
		if err := checkBlocks(raw); err != nil {
			return c, err
		}
		c.hasBlocks = true
		if raw != "[]" {
			c.blocks = json.RawMessage(raw)
		}
	}
	if raw := r.get("attachments"); raw != "" && raw != "[]" {
		if !json.Valid([]byte(raw)) {
			return c, errCode("invalid_attachments")
		}
		c.attachments = json.RawMessage(raw)
	}
	meta, err := readMetadata(r)
	if err != nil {
		return c, err
	}
	c.metadata = meta
	if err := s.checkText(c.text); err != nil {
		return c, err
	}
	return c, nil
}

// readMetadata reads the metadata argument of chat.postMessage, chat.update and
// chat.stopStream (https://docs.slack.dev/messaging/message-metadata): a JSON object
// with an event_type string and an event_payload object, else
// invalid_metadata_format. It answers nil when the argument is absent.
func readMetadata(r *request) (json.RawMessage, error) {
	raw := r.get("metadata")
	if raw == "" {
		return nil, nil
	}
	var meta struct {
		EventType    string          `json:"event_type"`
		EventPayload json.RawMessage `json:"event_payload"`
	}
	if err := json.Unmarshal([]byte(raw), &meta); err != nil || meta.EventType == "" {
		return nil, errCode("invalid_metadata_format")
	}
	if !strings.HasPrefix(strings.TrimSpace(string(meta.EventPayload)), "{") {
		return nil, errCode("invalid_metadata_format")
	}
	return json.RawMessage(raw), nil
}

func (c messageContent) empty() bool {
	return c.text == "" && c.blocks == nil && c.attachments == nil
}

// chatPostMessage implements chat.postMessage
// (https://docs.slack.dev/reference/methods/chat.postMessage): the bot's
// message, answered with its ts and rendering, and delivered back to the bot
// as a message event carrying bot_id, as Slack does.
func (s *Server) chatPostMessage(r *request) (object, error) {
	ch, err := s.resolveChannelLocked(r.get("channel"))
	if err != nil {
		return nil, err
	}
	c, err := s.readContent(r)
	if err != nil {
		return nil, err
	}
	if c.empty() {
		return nil, errCode("no_text")
	}
	m := &record{Message: Message{
		Channel:     ch.ID,
		TS:          s.nextTSLocked(),
		User:        s.cfg.BotUserID,
		BotID:       s.cfg.BotID,
		Text:        c.text,
		Blocks:      c.blocks,
		Attachments: c.attachments,
		Metadata:    c.metadata,
	}}
	newReplyLocked(ch, m, r.get("thread_ts"), r.bool("reply_broadcast"))
	s.insertLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS, "message": s.wireLocked(ch, m)}, nil
}

// ownMessageLocked finds a message the bot may change.
func (s *Server) ownMessageLocked(r *request, notOwned string) (*channelState, *record, error) {
	ch, err := s.resolveChannelLocked(r.get("channel"))
	if err != nil {
		return nil, nil, err
	}
	ts := r.get("ts")
	if ts == "" {
		return nil, nil, errCode("message_not_found")
	}
	m := findLocked(ch, ts)
	if m == nil {
		return nil, nil, errCode("message_not_found")
	}
	if m.BotID != s.cfg.BotID {
		return nil, nil, errCode(notOwned)
	}
	return ch, m, nil
}

// chatUpdate implements chat.update
// (https://docs.slack.dev/reference/methods/chat.update): it replaces the
// given text, blocks and attachments and delivers a message_changed event.
func (s *Server) chatUpdate(r *request) (object, error) {
	ch, m, err := s.ownMessageLocked(r, "cant_update_message")
	if err != nil {
		return nil, err
	}
	c, err := s.readContent(r)
	if err != nil {
		return nil, err
	}
	if c.empty() && !c.hasBlocks {
		return nil, errCode("no_text")
	}
	s.editLocked(ch, m, s.cfg.BotUserID, func(m *record) {
		if c.hasText {
			m.Text = c.text
		}
		if c.hasBlocks {
			m.Blocks = c.blocks
		}
		if c.attachments != nil {
			m.Attachments = c.attachments
		}
		if c.metadata != nil {
			m.Metadata = c.metadata
		}
	})
	return object{"channel": ch.ID, "ts": m.TS, "text": m.Text, "message": s.wireLocked(ch, m)}, nil
}

// chatDelete implements chat.delete: the bot may delete its own messages.
func (s *Server) chatDelete(r *request) (object, error) {
	ch, m, err := s.ownMessageLocked(r, "cant_delete_message")
	if err != nil {
		return nil, err
	}
	s.deleteLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// chatPostEphemeral implements chat.postEphemeral: a message only user
// sees, answered with message_ts; Slack sends no event for it.
func (s *Server) chatPostEphemeral(r *request) (object, error) {
	ch, err := s.resolveChannelLocked(r.get("channel"))
	if err != nil {
		return nil, err
	}
	user := r.get("user")
	if _, ok := s.users[user]; !ok {
		return nil, errCode("user_not_found")
	}
	c, err := s.readContent(r)
	if err != nil {
		return nil, err
	}
	if c.empty() {
		return nil, errCode("no_text")
	}
	m := &record{Message: Message{
		Channel:     ch.ID,
		TS:          s.nextTSLocked(),
		User:        s.cfg.BotUserID,
		BotID:       s.cfg.BotID,
		Text:        c.text,
		Blocks:      c.blocks,
		Attachments: c.attachments,
		Ephemeral:   true,
		Recipient:   user,
	}}
	newReplyLocked(ch, m, r.get("thread_ts"), false)
	s.insertLocked(ch, m)
	return object{"message_ts": m.TS}, nil
}

// chatGetPermalink implements chat.getPermalink.
func (s *Server) chatGetPermalink(r *request) (object, error) {
	ch, err := s.resolveChannelLocked(r.get("channel"))
	if err != nil {
		return nil, err
	}
	m := findLocked(ch, r.get("message_ts"))
	if m == nil {
		return nil, errCode("message_not_found")
	}
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", s.cfg.TeamDomain, ch.ID, strings.ReplaceAll(m.TS, ".", ""))
	if m.ThreadTS != "" {
		link += "?" + url.Values{"thread_ts": {m.ThreadTS}, "cid": {ch.ID}}.Encode()
	}
	return object{"channel": ch.ID, "permalink": link}, nil
}

// streamChunk is an element of the chunks argument of the chat.*Stream methods.
type streamChunk struct {
	Type   string          `json:"type"`
	Text   string          `json:"text"`
	Blocks json.RawMessage `json:"blocks"`
}

// readStreamContent reads markdown_text and chunks: the text to append and
// the blocks chunks to add.
func readStreamContent(r *request) (text string, blocks []json.RawMessage, err error) {
	text = r.get("markdown_text")
	if n := runes(text); n > MaxStreamTextLength {
		return "", nil, errCode("msg_too_long", fmt.Sprintf("[ERROR] markdown_text is %d characters; the limit is %d", n, MaxStreamTextLength))
	}
	raw := r.get("chunks")
	if raw == "" {
		return text, nil, nil
	}
	var chunks []streamChunk
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil {
		return "", nil, errCode("invalid_chunks", "[ERROR] chunks must be a JSON array of objects")
	}
	var b strings.Builder
	b.WriteString(text)
	for _, c := range chunks {
		switch c.Type {
		case "markdown_text":
			b.WriteString(c.Text)
		case "blocks":
			if err := checkBlocks(string(c.Blocks)); err != nil {
				return "", nil, err
			}
			blocks = append(blocks, c.Blocks)
		case "task_update", "plan_update":
			// Rendered by Slack as task cards; the emulator keeps the text only.
		default:
			return "", nil, errCode("invalid_chunks", fmt.Sprintf("[ERROR] unknown chunk type %q", c.Type))
		}
	}
	if n := runes(b.String()); n > MaxStreamTextLength {
		return "", nil, errCode("msg_too_long", fmt.Sprintf("[ERROR] streamed text is %d characters; the limit is %d", n, MaxStreamTextLength))
	}
	return b.String(), blocks, nil
}

// appendBlocks concatenates JSON arrays of blocks.
func appendBlocks(current json.RawMessage, more []json.RawMessage) json.RawMessage {
	if len(more) == 0 {
		return current
	}
	var all []json.RawMessage
	_ = json.Unmarshal(current, &all) // current was validated when stored
	for _, m := range more {
		var bs []json.RawMessage
		_ = json.Unmarshal(m, &bs) // validated by checkBlocks
		all = append(all, bs...)
	}
	out, _ := json.Marshal(all)
	return out
}

// chatStartStream implements chat.startStream
// (https://docs.slack.dev/reference/methods/chat.startStream): a bot message
// that grows with chat.appendStream until chat.stopStream. Outside IMs it
// requires recipient_user_id and recipient_team_id. It takes no metadata (that
// comes with chat.stopStream). Starting a stream delivers a message event like
// chat.postMessage; appends do not.
func (s *Server) chatStartStream(r *request) (object, error) {
	ch, err := s.resolveChannelLocked(r.get("channel"))
	if err != nil {
		return nil, err
	}
	if ch.Type != ChannelTypeIM {
		if r.get("recipient_user_id") == "" {
			return nil, errCode("missing_recipient_user_id")
		}
		if r.get("recipient_team_id") == "" {
			return nil, errCode("missing_recipient_team_id")
		}
	}
	text, blocks, err := readStreamContent(r)
	if err != nil {
		return nil, err
	}
	m := &record{Message: Message{
		Channel:   ch.ID,
		TS:        s.nextTSLocked(),
		User:      s.cfg.BotUserID,
		BotID:     s.cfg.BotID,
		Text:      text,
		Blocks:    appendBlocks(nil, blocks),
		Streaming: true,
	}, streamed: true}
	newReplyLocked(ch, m, r.get("thread_ts"), false)
	s.insertLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// streamingMessageLocked finds the bot's message that is still streaming.
func (s *Server) streamingMessageLocked(r *request) (*channelState, *record, error) {
	ch, m, err := s.ownMessageLocked(r, "message_not_owned_by_app")
	if err != nil {
		return nil, nil, err
	}
	if !m.Streaming {
		return nil, nil, errCode("message_not_in_streaming_state")
	}
	return ch, m, nil
}

// chatAppendStream implements chat.appendStream: markdown_text (and chunks)
// are appended to the streaming message.
func (s *Server) chatAppendStream(r *request) (object, error) {
	ch, m, err := s.streamingMessageLocked(r)
	if err != nil {
		return nil, err
	}
	if r.get("markdown_text") == "" && r.get("chunks") == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: markdown_text")
	}
	text, blocks, err := readStreamContent(r)
	if err != nil {
		return nil, err
	}
	s.changeLocked(ch, m, func(m *record) {
		m.Text += text
		m.Blocks = appendBlocks(m.Blocks, blocks)
		m.streamAppends++
	})
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// chatStopStream implements chat.stopStream
// (https://docs.slack.dev/reference/methods/chat.stopStream): optional last
// markdown_text, chunks or blocks, and the message's metadata, then the message is
// final.
func (s *Server) chatStopStream(r *request) (object, error) {
	ch, m, err := s.streamingMessageLocked(r)
	if err != nil {
		return nil, err
	}
	text, blocks, err := readStreamContent(r)
	if err != nil {
		return nil, err
	}
	meta, err := readMetadata(r)
	if err != nil {
		return nil, err
	}
	var final json.RawMessage
	if raw := r.get("blocks"); raw != "" {
		if err := checkBlocks(raw); err != nil {
			return nil, err
		}
		final = json.RawMessage(raw)
	}
	s.changeLocked(ch, m, func(m *record) {
		m.Text += text
		m.Blocks = appendBlocks(m.Blocks, blocks)
		if final != nil {
			m.Blocks = appendBlocks(m.Blocks, []json.RawMessage{final})
		}
		if meta != nil {
			m.Metadata = meta
		}
		m.Streaming = false
	})
	return object{"channel": ch.ID, "ts": m.TS, "message": s.wireLocked(ch, m)}, nil
}

// changeLocked applies change to m without an event (streaming, reactions).
func (s *Server) changeLocked(ch *channelState, m *record, change func(*record)) {
	change(m)
	snap := snapshotLocked(ch, m)
	s.notifyLocked(Update{Kind: UpdateMessageChanged, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
}
