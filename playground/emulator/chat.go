package emulator

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// chatAPI answers the chat.* methods that post, change and delete the bot's
// messages, and reactions.add and reactions.remove. Each runs with the lock
// held. (The chat.*Stream methods are streamAPI's.)
type chatAPI struct {
	ws *workspace
	ev *eventsAPI
}

// methods is the chat family of the Web API.
func (a *chatAPI) methods() map[string]method {
	return map[string]method{
		"chat.postMessage":   {handle: a.chatPostMessage},
		"chat.update":        {handle: a.chatUpdate},
		"chat.delete":        {handle: a.chatDelete},
		"chat.postEphemeral": {handle: a.chatPostEphemeral},
		"chat.getPermalink":  {handle: a.chatGetPermalink, readOnly: true},
		"reactions.add":      {handle: a.reactionsAdd},
		"reactions.remove":   {handle: a.reactionsRemove},
	}
}

// messageContent reads and checks the text, blocks, attachments and
// metadata arguments shared by chat.postMessage, chat.update and
// chat.postEphemeral.
type messageContent struct {
	text                          string
	blocks, attachments, metadata json.RawMessage
	hasText, hasBlocks            bool
}

func (a *chatAPI) readContent(r *request) (messageContent, error) {
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
	if err := checkText(c.text, a.ws.cfg.LenientTextLimit); err != nil {
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
func (a *chatAPI) chatPostMessage(r *request) (object, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, err
	}
	c, err := a.readContent(r)
	if err != nil {
		return nil, err
	}
	if c.empty() {
		return nil, errCode("no_text")
	}
	m := a.ws.botRecordLocked(ch)
	m.Text, m.Blocks, m.Attachments, m.Metadata = c.text, c.blocks, c.attachments, c.metadata
	ch.reply(m, r.get("thread_ts"), r.bool("reply_broadcast"))
	a.ev.postLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS, "message": a.ws.wireLocked(ch, m)}, nil
}

// chatUpdate implements chat.update
// (https://docs.slack.dev/reference/methods/chat.update): it replaces the
// given text, blocks and attachments and delivers a message_changed event.
func (a *chatAPI) chatUpdate(r *request) (object, error) {
	ch, m, err := ownMessageArg(a.ws, r, "cant_update_message")
	if err != nil {
		return nil, err
	}
	c, err := a.readContent(r)
	if err != nil {
		return nil, err
	}
	if c.empty() && !c.hasBlocks {
		return nil, errCode("no_text")
	}
	if n := runes(c.text); n > MaxUpdateTextLength {
		return nil, errCode("msg_too_long", fmt.Sprintf("[ERROR] text is %d characters; chat.update's limit is %d", n, MaxUpdateTextLength))
	}
	a.ev.editLocked(ch, m, a.ws.cfg.BotUserID, func(m *record) {
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
	return object{"channel": ch.ID, "ts": m.TS, "text": m.Text, "message": a.ws.wireLocked(ch, m)}, nil
}

// chatDelete implements chat.delete: the bot may delete its own messages.
func (a *chatAPI) chatDelete(r *request) (object, error) {
	ch, m, err := ownMessageArg(a.ws, r, "cant_delete_message")
	if err != nil {
		return nil, err
	}
	a.ev.deleteLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// chatPostEphemeral implements chat.postEphemeral: a message only user
// sees, answered with message_ts; Slack sends no event for it.
func (a *chatAPI) chatPostEphemeral(r *request) (object, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, err
	}
	user := r.get("user")
	if _, ok := a.ws.users[user]; !ok {
		return nil, errCode("user_not_found")
	}
	c, err := a.readContent(r)
	if err != nil {
		return nil, err
	}
	if c.empty() {
		return nil, errCode("no_text")
	}
	m := a.ws.botRecordLocked(ch)
	m.Text, m.Blocks, m.Attachments = c.text, c.blocks, c.attachments
	m.Ephemeral, m.Recipient = true, user
	ch.reply(m, r.get("thread_ts"), false)
	a.ev.postLocked(ch, m)
	return object{"message_ts": m.TS}, nil
}

// chatGetPermalink implements chat.getPermalink.
func (a *chatAPI) chatGetPermalink(r *request) (object, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, err
	}
	m := ch.find(r.get("message_ts"))
	if m == nil {
		return nil, errCode("message_not_found")
	}
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", a.ws.cfg.TeamDomain, ch.ID, strings.ReplaceAll(m.TS, ".", ""))
	if m.ThreadTS != "" {
		link += "?" + url.Values{"thread_ts": {m.ThreadTS}, "cid": {ch.ID}}.Encode()
	}
	return object{"channel": ch.ID, "permalink": link}, nil
}

// reactionTarget finds the message of a reactions.* call.
func (a *chatAPI) reactionTarget(r *request) (*channelState, *record, string, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, nil, "", err
	}
	if r.get("timestamp") == "" {
		return nil, nil, "", errCode("no_item_specified")
	}
	m := ch.find(r.get("timestamp"))
	if m == nil {
		return nil, nil, "", errCode("message_not_found")
	}
	name := strings.Trim(r.get("name"), ":")
	if name == "" {
		return nil, nil, "", errCode("invalid_name")
	}
	return ch, m, name, nil
}

// reactionsAdd implements reactions.add for the bot user.
func (a *chatAPI) reactionsAdd(r *request) (object, error) {
	ch, m, name, err := a.reactionTarget(r)
	if err != nil {
		return nil, err
	}
	for _, re := range m.Reactions {
		if re.Name == name && slices.Contains(re.Users, a.ws.cfg.BotUserID) {
			return nil, errCode("already_reacted")
		}
	}
	a.ws.changeLocked(ch, m, func(m *record) {
		for i := range m.Reactions {
			if m.Reactions[i].Name == name {
				m.Reactions[i].Users = append(m.Reactions[i].Users, a.ws.cfg.BotUserID)
				return
			}
		}
		m.Reactions = append(m.Reactions, Reaction{Name: name, Users: []string{a.ws.cfg.BotUserID}})
	})
	return nil, nil
}

// reactionsRemove implements reactions.remove for the bot user.
func (a *chatAPI) reactionsRemove(r *request) (object, error) {
	ch, m, name, err := a.reactionTarget(r)
	if err != nil {
		return nil, err
	}
	found := false
	for _, re := range m.Reactions {
		found = found || re.Name == name && slices.Contains(re.Users, a.ws.cfg.BotUserID)
	}
	if !found {
		return nil, errCode("no_reaction")
	}
	a.ws.changeLocked(ch, m, func(m *record) {
		var kept []Reaction
		for _, re := range m.Reactions {
			if re.Name == name {
				var users []string
				for _, u := range re.Users {
					if u != a.ws.cfg.BotUserID {
						users = append(users, u)
					}
				}
				re.Users = users
			}
			if len(re.Users) > 0 {
				kept = append(kept, re)
			}
		}
		m.Reactions = kept
	})
	return nil, nil
}
