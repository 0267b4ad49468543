package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Errors of ClickButton, ClickButtonByLabel and ChooseMenuItem.
var (
	// ErrActionNotFound means the message has no such button or menu item.
	ErrActionNotFound = errors.New("emulator: button not found")
	// ErrAmbiguousLabel means several buttons of the message have the label.
	ErrAmbiguousLabel = errors.New("emulator: several buttons have this label")
)

// triggerLifetime is how long a trigger_id can open a view
// (https://docs.slack.dev/interactivity/handling-user-interaction#modal_responses).
const triggerLifetime = 3 * time.Second

// responseTarget is where a response_url (or a slash command's ack payload)
// answers: the interaction's channel and user, and the message it came from.
type responseTarget struct {
	channel   string
	user      string
	messageTS string // "" for slash commands
	ephemeral bool   // messageTS names an ephemeral message
	threadTS  string
}

type trigger struct {
	user  string
	setAt time.Time
}

// newResponseURLLocked registers a response_url for target.
func (s *Server) newResponseURLLocked(t responseTarget) string {
	id := newUUID()
	s.responses[id] = t
	return s.base + "/response/" + id
}

// newTriggerLocked issues a trigger_id for user.
func (s *Server) newTriggerLocked(user string) string {
	s.seq++
	id := fmt.Sprintf("%d.%s.%s", s.seq, s.cfg.TeamID, newUUID()[:8])
	s.triggers[id] = trigger{user: user, setAt: s.cfg.Now()}
	return id
}

func (s *Server) userObject(u User) object {
	return object{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": s.cfg.TeamID}
}

func (s *Server) teamObject() object {
	return object{"id": s.cfg.TeamID, "domain": s.cfg.TeamDomain}
}

// ClickButton acts as user clicking the button with actionID on the
// message ts in channel (a visible message, or an ephemeral one shown to
// user): the bot receives an interactive envelope with a block_actions
// payload (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload)
// carrying the button's value, a trigger_id and a response_url on the
// emulator. It returns the envelope's ID.
func (s *Server) ClickButton(channel, ts, user, actionID string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, m, ephemeral, err := s.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	for _, el := range elementsOf(m.Blocks) {
		if el.Type == "button" && el.ActionID == actionID {
			return s.blockActionLocked(ch, u, m, ephemeral, el.buttonAction(), nil)
		}
	}
	return "", fmt.Errorf("%s in %s/%s: %w", actionID, channel, ts, ErrActionNotFound)
}

// ClickOld acts as user clicking b, a button listed earlier by Buttons on the message
// ts, as it was drawn then, even if the message has changed since: what the second
// click of a double click delivers, or a click in a client still showing an older
// version of the message. The payload is ClickButton's, carrying b's value.
func (s *Server) ClickOld(channel, ts, user string, b Button) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, m, ephemeral, err := s.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	text, _ := json.Marshal(object{"type": "plain_text", "text": b.Label, "emoji": true})
	el := element{Type: "button", ActionID: b.ActionID, BlockID: b.BlockID, Text: text, Value: b.Value, Style: b.Style}
	return s.blockActionLocked(ch, u, m, ephemeral, el.buttonAction(), nil)
}

// ClickButtonByLabel is ClickButton for the button whose text is label
// (compared after trimming spaces). The error lists the message's button
// labels when none matches, and their action_ids when several do (then use
// Buttons to choose one and ClickButton to click it).
func (s *Server) ClickButtonByLabel(channel, ts, user, label string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, m, ephemeral, err := s.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	var found []element
	var labels []string
	for _, el := range elementsOf(m.Blocks) {
		if el.Type != "button" {
			continue
		}
		labels = append(labels, strconv.Quote(el.label()))
		if strings.TrimSpace(el.label()) == strings.TrimSpace(label) {
			found = append(found, el)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("button %q in %s/%s (buttons: %s): %w", label, channel, ts, strings.Join(labels, ", "), ErrActionNotFound)
	case 1:
		return s.blockActionLocked(ch, u, m, ephemeral, found[0].buttonAction(), nil)
	default:
		ids := make([]string, len(found))
		for i, el := range found {
			ids[i] = el.ActionID
		}
		return "", fmt.Errorf("%d buttons %q in %s/%s (action_ids %s): %w", len(found), label, channel, ts, strings.Join(ids, ", "), ErrAmbiguousLabel)
	}
}

// ChooseMenuItem acts as user choosing the option whose text is label in an
// overflow menu or a static select menu of the message ts (a visible
// message, or an ephemeral one shown to user): the bot receives a
// block_actions payload whose action carries selected_option (and, for a
// static select, the menu's state in state.values), as Slack sends it. The
// error lists the menus' options when none matches.
func (s *Server) ChooseMenuItem(channel, ts, user, label string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, m, ephemeral, err := s.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	var labels []string
	for _, el := range elementsOf(m.Blocks) {
		if el.Type != "overflow" && el.Type != "static_select" {
			continue
		}
		for _, opt := range el.options() {
			labels = append(labels, strconv.Quote(opt.Text.Text))
			if strings.TrimSpace(opt.Text.Text) != strings.TrimSpace(label) {
				continue
			}
			action, state := el.menuAction(opt)
			return s.blockActionLocked(ch, u, m, ephemeral, action, state)
		}
	}
	return "", fmt.Errorf("menu item %q in %s/%s (items: %s): %w", label, channel, ts, strings.Join(labels, ", "), ErrActionNotFound)
}

// menuAction renders the choice of opt in an overflow or static select menu
// as a block_actions action carrying selected_option, and, for a static
// select, the menu's state for state.values.
func (el element) menuAction(opt option) (action, state object) {
	selected := object{"text": opt.Text, "value": opt.Value}
	action = object{"type": el.Type, "action_id": el.ActionID, "block_id": el.BlockID, "selected_option": selected}
	if el.Type == "static_select" {
		if len(el.Placeholder) > 0 {
			action["placeholder"] = el.Placeholder
		}
		state = object{el.BlockID: object{el.ActionID: object{"type": el.Type, "selected_option": selected}}}
	}
	return action, state
}

// Button is an interactive element of a message, as Buttons lists it.
type Button struct {
	Type     string // "button", or "overflow" / "static_select" for a menu's option
	Label    string // the button's (or option's) text
	ActionID string
	Value    string
	Style    string
	BlockID  string
	// Context is the text of the nearest section, context or header block above
	// the element, to tell apart buttons with the same label.
	Context string
}

// Buttons lists the buttons and menu options of the message ts in channel
// (a visible message, or an ephemeral one shown to user), in order.
func (s *Server) Buttons(channel, ts, user string) ([]Button, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, m, _, err := s.messageForLocked(channel, ts, user)
	if err != nil {
		return nil, err
	}
	var out []Button
	for _, el := range elementsOf(m.Blocks) {
		switch el.Type {
		case "button":
			out = append(out, Button{Type: el.Type, Label: el.label(), ActionID: el.ActionID, Value: el.Value, Style: el.Style, BlockID: el.BlockID, Context: el.context})
		case "overflow", "static_select":
			for _, opt := range el.options() {
				out = append(out, Button{Type: el.Type, Label: opt.Text.Text, ActionID: el.ActionID, Value: opt.Value, BlockID: el.BlockID, Context: el.context})
			}
		}
	}
	return out, nil
}

// messageForLocked finds the message ts of channel as user sees it: a visible
// message, or an ephemeral one shown to user.
func (s *Server) messageForLocked(channel, ts, user string) (*channelState, User, *record, bool, error) {
	ch, u, err := s.channelAndUserLocked(channel, user)
	if err != nil {
		return nil, u, nil, false, err
	}
	if m := ch.find(ts); m != nil {
		return ch, u, m, false, nil
	}
	if e := ch.ephemeral(ts, user); e != nil {
		return ch, u, e, true, nil
	}
	return nil, u, nil, false, fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
}

// blockActionLocked sends the block_actions payload of user acting on m with
// action; state holds the state.values of the message's inputs.
func (s *Server) blockActionLocked(ch *channelState, u User, m *record, ephemeral bool, action, state object) (string, error) {
	action["action_ts"] = formatTS(s.cfg.Now().UnixMicro())
	if state == nil {
		state = object{}
	}
	container := object{"type": "message", "message_ts": m.TS, "channel_id": ch.ID, "is_ephemeral": ephemeral}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
	}
	payload := object{
		"type":                  "block_actions",
		"user":                  s.userObject(u),
		"api_app_id":            s.cfg.AppID,
		"token":                 s.cfg.VerificationToken,
		"container":             container,
		"trigger_id":            s.newTriggerLocked(u.ID),
		"team":                  s.teamObject(),
		"enterprise":            nil,
		"is_enterprise_install": false,
		"channel":               object{"id": ch.ID, "name": ch.Name},
		"state":                 object{"values": state},
		"response_url": s.newResponseURLLocked(responseTarget{
			channel: ch.ID, user: u.ID, messageTS: m.TS, ephemeral: ephemeral, threadTS: m.ThreadTS,
		}),
		"actions": []object{action},
	}
	if !ephemeral {
		payload["message"] = s.wireLocked(ch, m)
	}
	return s.sendPayloadLocked(EnvelopeInteractive, payload, nil)
}

// buttonAction renders a button as a block_actions action.
func (el element) buttonAction() object {
	action := object{
		"type":      "button",
		"action_id": el.ActionID,
		"block_id":  el.BlockID,
		"text":      el.Text,
		"value":     el.Value,
	}
	if el.Style != "" {
		action["style"] = el.Style
	}
	return action
}

// SlashCommand acts as user typing "command text" in channel: the bot
// receives a slash_commands envelope (accepts_response_payload true) shaped
// like fixtures/slack/interactive/SlashCommandPayload.json. A payload in
// the bot's ack is shown like a response_url answer (ephemeral unless
// response_type is "in_channel"). It returns the envelope's ID.
func (s *Server) SlashCommand(channel, user, command, text string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, err := s.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	target := responseTarget{channel: ch.ID, user: u.ID}
	payload := object{
		"token":                 s.cfg.VerificationToken,
		"api_app_id":            s.cfg.AppID,
		"team_id":               s.cfg.TeamID,
		"team_domain":           s.cfg.TeamDomain,
		"channel_id":            ch.ID,
		"channel_name":          channelName(ch.Channel),
		"user_id":               u.ID,
		"user_name":             u.Name,
		"command":               command,
		"text":                  text,
		"response_url":          s.newResponseURLLocked(target),
		"trigger_id":            s.newTriggerLocked(u.ID),
		"is_enterprise_install": false,
	}
	return s.sendPayloadLocked(EnvelopeSlashCommands, payload, &target)
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
func (s *Server) MessageShortcut(channel, ts, user, callbackID string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, err := s.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	m := ch.find(ts)
	if m == nil {
		return "", fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
	}
	payload := object{
		"type":                  "message_action",
		"token":                 s.cfg.VerificationToken,
		"callback_id":           callbackID,
		"trigger_id":            s.newTriggerLocked(u.ID),
		"action_ts":             formatTS(s.cfg.Now().UnixMicro()),
		"message_ts":            m.TS,
		"team":                  s.teamObject(),
		"enterprise":            nil,
		"is_enterprise_install": false,
		"user":                  object{"id": u.ID, "name": u.Name, "team_id": s.cfg.TeamID},
		"channel":               object{"id": ch.ID, "name": ch.Name},
		"message":               s.wireLocked(ch, m),
		"response_url": s.newResponseURLLocked(responseTarget{
			channel: ch.ID, user: u.ID, threadTS: m.ThreadTS,
		}),
	}
	return s.sendPayloadLocked(EnvelopeInteractive, payload, nil)
}

func (s *Server) sendPayloadLocked(typ string, payload any, target *responseTarget) (string, error) {
	if s.closed {
		return "", ErrClosed
	}
	env, err := newPayloadEnvelope(typ, payload)
	if err != nil {
		return "", err
	}
	if target != nil {
		// A slash command answered in its ack: Slack shows the payload as it
		// shows a response_url answer.
		env.onAck = func(id string, ack json.RawMessage) {
			if ack == nil {
				return
			}
			if err := s.respondLocked(*target, ack); err != nil {
				s.cfg.Logger.Warn("emulator: slash command ack payload refused", "envelope_id", id, "err", err)
			}
		}
	}
	return s.sendLocked(env)
}

// responseBody is what a response_url accepts
// (https://docs.slack.dev/interactivity/handling-user-interaction#message_responses).
type responseBody struct {
	Text            string          `json:"text"`
	Blocks          json.RawMessage `json:"blocks"`
	ResponseType    string          `json:"response_type"`
	ReplaceOriginal bool            `json:"replace_original"`
	DeleteOriginal  bool            `json:"delete_original"`
	ThreadTS        string          `json:"thread_ts"`
}

// serveResponseURL answers POSTs to a response_url.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, object{"ok": false, "error": "invalid_payload"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	target, ok := s.responses[r.PathValue("id")]
	if !ok {
		writeJSON(w, http.StatusNotFound, object{"ok": false, "error": "expired_url"})
		return
	}
	if err := s.respondLocked(target, body); err != nil {
		code := "internal_error"
		if ae, ok := errors.AsType[*apiError](err); ok {
			code = ae.Code
		}
		writeJSON(w, http.StatusOK, object{"ok": false, "error": code})
		return
	}
	writeJSON(w, http.StatusOK, object{"ok": true})
}

// respondLocked shows a response_url answer: it replaces or deletes the
// original message, or posts a new message (ephemeral to the user unless
// response_type is "in_channel").
func (s *Server) respondLocked(t responseTarget, raw json.RawMessage) error {
	var body responseBody
	if err := json.Unmarshal(raw, &body); err != nil {
		return errCode("invalid_payload")
	}
	if err := checkText(body.Text, s.cfg.LenientTextLimit); err != nil {
		return err
	}
	var blocks json.RawMessage
	if len(body.Blocks) > 0 && string(body.Blocks) != "null" {
		if err := checkBlocks(string(body.Blocks)); err != nil {
			return err
		}
		blocks = body.Blocks
	}
	ch, err := channelArg(s.workspace, t.channel)
	if err != nil {
		return err
	}

	if t.messageTS != "" && (body.ReplaceOriginal || body.DeleteOriginal) {
		var m *record
		if t.ephemeral {
			i := slices.IndexFunc(ch.ephemerals, func(e *record) bool { return e.TS == t.messageTS && !e.deleted })
			if i < 0 {
				return errCode("message_not_found")
			}
			m = ch.ephemerals[i]
		} else if m = ch.find(t.messageTS); m == nil {
			return errCode("message_not_found")
		}
		switch {
		case body.DeleteOriginal && t.ephemeral:
			m.deleted = true
			s.notifyLocked(Update{Kind: UpdateMessageDeleted, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS})
		case body.DeleteOriginal:
			s.events.deleteLocked(ch, m)
		case t.ephemeral:
			m.Text, m.Blocks = body.Text, blocks
			snap := m.clone()
			s.notifyLocked(Update{Kind: UpdateEphemeral, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
		default:
			s.events.editLocked(ch, m, s.cfg.BotUserID, func(m *record) { m.Text, m.Blocks = body.Text, blocks })
		}
		return nil
	}

	if body.Text == "" && blocks == nil {
		return errCode("no_text")
	}
	threadTS := body.ThreadTS
	if threadTS == "" {
		threadTS = t.threadTS
	}
	m := &record{Message: Message{
		Channel: ch.ID,
		TS:      s.nextTSLocked(),
		User:    s.cfg.BotUserID,
		BotID:   s.cfg.BotID,
		Text:    body.Text,
		Blocks:  blocks,
	}}
	if body.ResponseType != "in_channel" {
		m.Ephemeral, m.Recipient = true, t.user
	}
	ch.reply(m, threadTS, false)
	s.events.postLocked(ch, m)
	return nil
}
