package emulator

import (
	"fmt"
	"strings"
)

// PostUserMessage posts text as user, the way a person types a message in
// Slack's client: the message gets a client_msg_id and rich_text blocks, and
// the bot receives a message event and, when text mentions the bot
// (<@BotUserID>) outside an IM, an app_mention event with the same ts
// (https://docs.slack.dev/reference/events/app_mention). threadTS "" posts
// to the channel; otherwise the message is a reply in that thread.
// Each event goes to one socket-mode connection, or waits for one.
func (s *Server) PostUserMessage(channel, user, text, threadTS string) (ts string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, err := s.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	m := &record{Message: Message{
		Channel:     ch.ID,
		TS:          s.nextTSLocked(),
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
	s.events.postLocked(ch, m)
	return m.TS, nil
}

// PostBotMessage posts text as another bot (the member of Users with that
// BotID): the message has subtype bot_message, bot_id and username but no
// user, like Slack's sample (fixtures/slack/events/MessageBotPayload.json),
// so tests can check that the bot ignores other bots. A mention of the bot
// outside an IM also delivers an app_mention event, as for users.
func (s *Server) PostBotMessage(channel, botID, text, threadTS string) (ts string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.findChannelLocked(channel)
	if err != nil {
		return "", err
	}
	var bot *User
	for _, u := range s.users {
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
		TS:       s.nextTSLocked(),
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
	s.events.postLocked(ch, m)
	return m.TS, nil
}

// EditUserMessage changes the text of a message a user posted and delivers
// a message_changed event, as when a person edits a message.
func (s *Server) EditUserMessage(channel, ts, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.findChannelLocked(channel)
	if err != nil {
		return err
	}
	m := ch.find(ts)
	if m == nil {
		return fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	s.events.editLocked(ch, m, m.User, func(m *record) {
		m.Text = text
		if m.ClientMsgID != "" {
			m.Blocks = richTextBlocks(text, blockIDFor(m.TS))
		}
	})
	return nil
}

// DeleteMessage deletes any message, as a workspace admin would, and
// delivers a message_deleted event.
func (s *Server) DeleteMessage(channel, ts string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.findChannelLocked(channel)
	if err != nil {
		return err
	}
	m := ch.find(ts)
	if m == nil {
		return fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	s.events.deleteLocked(ch, m)
	return nil
}

func blockIDFor(ts string) string {
	return "b" + strings.ReplaceAll(ts, ".", "")[6:]
}
