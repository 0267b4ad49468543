package emulator

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
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
	if err := checkText(c.text, s.cfg.LenientTextLimit); err != nil {
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
	ch, err := channelArg(s.workspace, r.get("channel"))
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
	ch.reply(m, r.get("thread_ts"), r.bool("reply_broadcast"))
	s.events.postLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS, "message": s.wireLocked(ch, m)}, nil
}

// chatUpdate implements chat.update
// (https://docs.slack.dev/reference/methods/chat.update): it replaces the
// given text, blocks and attachments and delivers a message_changed event.
func (s *Server) chatUpdate(r *request) (object, error) {
	ch, m, err := ownMessageArg(s.workspace, r, "cant_update_message")
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
	s.events.editLocked(ch, m, s.cfg.BotUserID, func(m *record) {
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
	ch, m, err := ownMessageArg(s.workspace, r, "cant_delete_message")
	if err != nil {
		return nil, err
	}
	s.events.deleteLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// chatPostEphemeral implements chat.postEphemeral: a message only user
// sees, answered with message_ts; Slack sends no event for it.
func (s *Server) chatPostEphemeral(r *request) (object, error) {
	ch, err := channelArg(s.workspace, r.get("channel"))
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
	ch.reply(m, r.get("thread_ts"), false)
	s.events.postLocked(ch, m)
	return object{"message_ts": m.TS}, nil
}

// chatGetPermalink implements chat.getPermalink.
func (s *Server) chatGetPermalink(r *request) (object, error) {
	ch, err := channelArg(s.workspace, r.get("channel"))
	if err != nil {
		return nil, err
	}
	m := ch.find(r.get("message_ts"))
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
	// task_update (and plan_update's Title).
	ID      string       `json:"id"`
	Title   *string      `json:"title"`
	Status  string       `json:"status"`
	Details string       `json:"details"`
	Output  string       `json:"output"`
	Sources []TaskSource `json:"sources"`
}

// Task limits the emulator enforces (Slack's SDK types document 256 characters for
// details and output).
const (
	MaxTaskTextLength = 256
	// taskStatuses are the statuses task_update accepts.
	taskStatuses = "pending in_progress complete error"
)

// streamContent is what one chat.*Stream call adds to its message.
type streamContent struct {
	text      string
	blocks    []json.RawMessage
	tasks     []Task
	planTitle *string
}

// apply adds c to m: text, blocks, and tasks (each replacing the task of its id, or
// added after the others).
func (c streamContent) apply(m *record) {
	m.Text += c.text
	m.Blocks = appendBlocks(m.Blocks, c.blocks)
	if c.planTitle != nil {
		m.PlanTitle = *c.planTitle
	}
	for _, t := range c.tasks {
		m.TaskUpdates = append(m.TaskUpdates, t)
		i := slices.IndexFunc(m.Tasks, func(o Task) bool { return o.ID == t.ID })
		if i < 0 {
			m.Tasks = append(m.Tasks, t)
			continue
		}
		m.Tasks[i] = t
	}
}

// RefuseTaskChunks makes chat.startStream refuse task_display_mode and every
// chat.*Stream call refuse task_update and plan_update chunks, with
// "invalid_chunks", as a workspace without thinking steps does; false accepts them
// again.
func (s *Server) RefuseTaskChunks(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseTasks = refuse
}

// readStreamContent reads markdown_text and chunks: the text to append, the
// blocks chunks to add, and the tasks. It refuses what Slack refuses: an unknown
// chunk type, a task without id or title or with an unknown status, a source
// that is not a URL source with both url and text, an empty plan title.
func (s *Server) readStreamContent(r *request) (streamContent, error) {
	var c streamContent
	text := r.get("markdown_text")
	if n := runes(text); n > MaxStreamTextLength {
		return c, errCode("msg_too_long", fmt.Sprintf("[ERROR] markdown_text is %d characters; the limit is %d", n, MaxStreamTextLength))
	}
	raw := r.get("chunks")
	if raw == "" {
		c.text = text
		return c, nil
	}
	var chunks []streamChunk
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil {
		return c, errCode("invalid_chunks", "[ERROR] chunks must be a JSON array of objects")
	}
	var b strings.Builder
	b.WriteString(text)
	for i, ch := range chunks {
		switch ch.Type {
		case "markdown_text":
			b.WriteString(ch.Text)
		case "blocks":
			if err := checkBlocks(string(ch.Blocks)); err != nil {
				return c, err
			}
			c.blocks = append(c.blocks, ch.Blocks)
		case "task_update":
			if s.refuseTasks {
				return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: task_update is not supported", i))
			}
			t, err := checkTask(i, ch)
			if err != nil {
				return c, err
			}
			c.tasks = append(c.tasks, t)
		case "plan_update":
			if s.refuseTasks {
				return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: plan_update is not supported", i))
			}
			if ch.Title == nil || strings.TrimSpace(*ch.Title) == "" {
				return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: plan_update needs a title", i))
			}
			c.planTitle = ch.Title
		default:
			return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] unknown chunk type %q", ch.Type))
		}
	}
	if n := runes(b.String()); n > MaxStreamTextLength {
		return c, errCode("msg_too_long", fmt.Sprintf("[ERROR] streamed text is %d characters; the limit is %d", n, MaxStreamTextLength))
	}
	c.text = b.String()
	return c, nil
}

// checkTask returns the task of task_update chunk ch (chunks[i]), or Slack's
// refusal.
func checkTask(i int, ch streamChunk) (Task, error) {
	bad := func(why string) (Task, error) {
		return Task{}, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: task_update %s", i, why))
	}
	switch {
	case strings.TrimSpace(ch.ID) == "":
		return bad("needs an id")
	case ch.Title == nil || strings.TrimSpace(*ch.Title) == "":
		return bad("needs a title")
	case !slices.Contains(strings.Fields(taskStatuses), ch.Status):
		return bad(fmt.Sprintf("has an unknown status %q (want one of %s)", ch.Status, taskStatuses))
	case runes(ch.Details) > MaxTaskTextLength || runes(ch.Output) > MaxTaskTextLength:
		return bad(fmt.Sprintf("details and output are limited to %d characters", MaxTaskTextLength))
	}
	for j, src := range ch.Sources {
		switch {
		case src.Type != "url":
			return bad(fmt.Sprintf("sources[%d] has type %q; want \"url\"", j, src.Type))
		case strings.TrimSpace(src.URL) == "":
			return bad(fmt.Sprintf("sources[%d] needs a url", j))
		case strings.TrimSpace(src.Text) == "":
			return bad(fmt.Sprintf("sources[%d] needs a text", j))
		}
	}
	return Task{ID: ch.ID, Title: *ch.Title, Status: ch.Status, Details: ch.Details, Output: ch.Output, Sources: ch.Sources}, nil
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
	ch, err := channelArg(s.workspace, r.get("channel"))
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
	mode := r.get("task_display_mode")
	switch {
	case mode != "" && s.refuseTasks:
		return nil, errCode("invalid_arguments", "[ERROR] task_display_mode is not supported")
	case mode != "" && mode != "timeline" && mode != "plan":
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] unknown task_display_mode %q", mode))
	}
	content, err := s.readStreamContent(r)
	if err != nil {
		return nil, err
	}
	m := &record{Message: Message{
		Channel:         ch.ID,
		TS:              s.nextTSLocked(),
		User:            s.cfg.BotUserID,
		BotID:           s.cfg.BotID,
		Streaming:       true,
		TaskDisplayMode: mode,
	}, streamed: true}
	content.apply(m)
	ch.reply(m, r.get("thread_ts"), false)
	s.events.postLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// streamingMessageLocked finds the bot's message that is still streaming.
func (s *Server) streamingMessageLocked(r *request) (*channelState, *record, error) {
	ch, m, err := ownMessageArg(s.workspace, r, "message_not_owned_by_app")
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
	content, err := s.readStreamContent(r)
	if err != nil {
		return nil, err
	}
	s.changeLocked(ch, m, func(m *record) {
		content.apply(m)
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
	content, err := s.readStreamContent(r)
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
		content.apply(m)
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
