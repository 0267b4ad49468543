package emulator

import (
	"fmt"
	"strings"
)

// people acts as the workspace's members: a person types, edits or runs a
// slash command or a message shortcut, another bot posts, an admin deletes.
// The bot receives the events and payloads Slack would send.
type people struct {
	ws *workspace
	ev *eventsAPI
	in *interactivity
}

// PostUserMessage posts text as user, the way a person types a message in
// Slack's client: the message gets a client_msg_id and rich_text blocks, and
// the bot receives a message event and, when text mentions the bot
// (<@BotUserID>) outside an IM, an app_mention event with the same ts
// (https://docs.slack.dev/reference/events/app_mention). threadTS "" posts
// to the channel; otherwise the message is a reply in that thread.
// Each event goes to one socket-mode connection, or waits for one.
func (a *people) PostUserMessage(channel, user, text, threadTS string) (ts string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, err := a.ws.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	m := &record{Message: Message{
		Channel:     ch.ID,
		TS:          a.ws.nextTSLocked(),
		User:        u.ID,
		Text:        text,
		ClientMsgID: newUUID(),
	}}
	m.Blocks = richTextBlocks(text, blockIDFor(m.TS))
	if threadTS != "" {
		if ch.root(threadTS) == nil {
			return "", fmt.Errorf("post in thread %s: %w", threadTS, ErrMessageNotFound)
		}
		ch.reply(m, threadTS, false)
	}
	a.ev.postLocked(ch, m)
	return m.TS, nil
}

// PostBotMessage posts text as another bot (the member of Users with that
// BotID): the message has subtype bot_message, bot_id and username but no
// user, like Slack's sample (fixtures/slack/events/MessageBotPayload.json),
// so tests can check that the bot ignores other bots. A mention of the bot
// outside an IM also delivers an app_mention event, as for users.
func (a *people) PostBotMessage(channel, botID, text, threadTS string) (ts string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, err := a.ws.findChannelLocked(channel)
	if err != nil {
		return "", err
	}
	var bot *User
	for _, u := range a.ws.users {
		if u.BotID == botID {
			bot = &u
			break
		}
	}
	if bot == nil {
		return "", fmt.Errorf("bot %s: %w", botID, ErrUserNotFound)
	}
	m := &record{Message: Message{
		Channel:  ch.ID,
		TS:       a.ws.nextTSLocked(),
		BotID:    botID,
		Username: bot.Name,
		Subtype:  "bot_message",
		Text:     text,
	}}
	if threadTS != "" {
		if ch.root(threadTS) == nil {
			return "", fmt.Errorf("post in thread %s: %w", threadTS, ErrMessageNotFound)
		}
		ch.reply(m, threadTS, false)
	}
	a.ev.postLocked(ch, m)
	return m.TS, nil
}

// EditUserMessage changes the text of a message a user posted and delivers
// a message_changed event, as when a person edits a message.
func (a *people) EditUserMessage(channel, ts, text string) error {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, m, err := a.ws.messageLocked(channel, ts)
	if err != nil {
		return err
	}
	a.ev.editLocked(ch, m, m.User, func(m *record) {
		m.Text = text
		if m.ClientMsgID != "" {
			m.Blocks = richTextBlocks(text, blockIDFor(m.TS))
		}
	})
	return nil
}

// DeleteMessage deletes any message, as a workspace admin would, and
// delivers a message_deleted event.
func (a *people) DeleteMessage(channel, ts string) error {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, m, err := a.ws.messageLocked(channel, ts)
	if err != nil {
		return err
	}
	a.ev.deleteLocked(ch, m)
	return nil
}

func blockIDFor(ts string) string {
	return "b" + strings.ReplaceAll(ts, ".", "")[6:]
}

// SlashCommand acts as user typing "command text" in channel: the bot
// receives a slash_commands envelope (accepts_response_payload true) shaped
// like fixtures/slack/interactive/SlashCommandPayload.json. A payload in
// the bot's ack is shown like a response_url answer (ephemeral unless
// response_type is "in_channel"). It returns the envelope's ID.
func (a *people) SlashCommand(channel, user, command, text string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, err := a.ws.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	target := responseTarget{channel: ch.ID, user: u.ID}
	payload := object{
		"token":                 a.ws.cfg.VerificationToken,
		"api_app_id":            a.ws.cfg.AppID,
		"team_id":               a.ws.cfg.TeamID,
		"team_domain":           a.ws.cfg.TeamDomain,
		"channel_id":            ch.ID,
		"channel_name":          channelName(ch.Channel),
		"user_id":               u.ID,
		"user_name":             u.Name,
		"command":               command,
		"text":                  text,
		"response_url":          a.in.newResponseURLLocked(target),
		"trigger_id":            a.in.newTriggerLocked(u.ID),
		"is_enterprise_install": false,
	}
	return a.in.sendLocked(EnvelopeSlashCommands, payload, &target)
}

func channelName(ch Channel) string {
	if ch.Type == ChannelTypeIM {
		return "directmessage"
	}
	return ch.Name
}

// MessageShortcut acts as user running the message shortcut callbackID on
// the message ts: the bot receives an interactive envelope with a
// message_action payload
// (https://docs.slack.dev/reference/interaction-payloads/shortcuts-interaction-payload).
func (a *people) MessageShortcut(channel, ts, user, callbackID string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, err := a.ws.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	m := ch.find(ts)
	if m == nil {
		return "", fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	payload := object{
		"type":                  "message_action",
		"token":                 a.ws.cfg.VerificationToken,
		"callback_id":           callbackID,
		"trigger_id":            a.in.newTriggerLocked(u.ID),
		"action_ts":             formatTS(a.ws.cfg.Now().UnixMicro()),
		"message_ts":            m.TS,
		"team":                  a.in.teamObject(),
		"enterprise":            nil,
		"is_enterprise_install": false,
		"user":                  object{"id": u.ID, "name": u.Name, "team_id": a.ws.cfg.TeamID},
		"channel":               object{"id": ch.ID, "name": ch.Name},
		"message":               a.ws.wireLocked(ch, m),
		"response_url": a.in.newResponseURLLocked(responseTarget{
			channel: ch.ID, user: u.ID, threadTS: m.ThreadTS,
		}),
	}
	return a.in.sendLocked(EnvelopeInteractive, payload, nil)
}
