package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// Interactivity (https://docs.slack.dev/interactivity/handling-user-interaction):
// what a person does with the app (a click, a slash command, a shortcut, a
// modal's submission) reaches the bot as a payload with a trigger_id, valid
// once for three seconds to open a view, and a response_url, which answers
// by replacing or deleting the original message or by posting a new one.

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

// interactivity issues the trigger_ids and response_urls of interaction
// payloads, sends the payloads to the bot and shows the answers to
// response_urls.
type interactivity struct {
	ws  *workspace
	hub *socketHub
	ev  *eventsAPI

	// Guarded by ws.mu.
	responses map[string]responseTarget // response_url id -> where it answers
	triggers  map[string]trigger        // trigger_id -> who and when
}

func newInteractivity(ws *workspace, hub *socketHub, ev *eventsAPI) *interactivity {
	return &interactivity{ws: ws, hub: hub, ev: ev,
		responses: make(map[string]responseTarget), triggers: make(map[string]trigger)}
}

// newResponseURLLocked registers a response_url for target.
func (in *interactivity) newResponseURLLocked(t responseTarget) string {
	id := newUUID()
	in.responses[id] = t
	return in.ws.base + "/response/" + id
}

// newTriggerLocked issues a trigger_id for user.
func (in *interactivity) newTriggerLocked(user string) string {
	id := fmt.Sprintf("%d.%s.%s", in.ws.nextSeqLocked(), in.ws.cfg.TeamID, newUUID()[:8])
	in.triggers[id] = trigger{user: user, setAt: in.ws.cfg.Now()}
	return id
}

// takeTriggerLocked checks a trigger_id: issued by the emulator, unused, and
// under three seconds old, as Slack requires.
func (in *interactivity) takeTriggerLocked(id string) (trigger, error) {
	t, ok := in.triggers[id]
	if !ok {
		return t, errCode("invalid_trigger_id")
	}
	delete(in.triggers, id)
	if in.ws.cfg.Now().Sub(t.setAt) > triggerLifetime {
		return t, errCode("expired_trigger_id")
	}
	return t, nil
}

// userObject renders u as interaction payloads name the acting user.
func (in *interactivity) userObject(u User) object {
	return object{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": in.ws.cfg.TeamID}
}

// teamObject renders the workspace as interaction payloads name it.
func (in *interactivity) teamObject() object {
	return object{"id": in.ws.cfg.TeamID, "domain": in.ws.cfg.TeamDomain}
}

// sendLocked sends payload in an envelope of type typ. With a target (a slash
// command), a payload in the bot's ack is shown as a response_url answer
// there, as Slack shows it.
func (in *interactivity) sendLocked(typ string, payload any, target *responseTarget) (string, error) {
	if in.ws.closed {
		return "", ErrClosed
	}
	env, err := newPayloadEnvelope(typ, payload)
	if err != nil {
		return "", err
	}
	if target != nil {
		env.onAck = func(id string, ack json.RawMessage) {
			if ack == nil {
				return
			}
			if err := in.respondLocked(*target, ack); err != nil {
				in.ws.cfg.Logger.Warn("emulator: slash command ack payload refused", "envelope_id", id, "err", err)
			}
		}
	}
	return in.hub.sendLocked(env)
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
func (in *interactivity) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, object{"ok": false, "error": "invalid_payload"})
		return
	}
	in.ws.mu.Lock()
	defer in.ws.mu.Unlock()
	target, ok := in.responses[r.PathValue("id")]
	if !ok {
		writeJSON(w, http.StatusNotFound, object{"ok": false, "error": "expired_url"})
		return
	}
	if err := in.respondLocked(target, body); err != nil {
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
func (in *interactivity) respondLocked(t responseTarget, raw json.RawMessage) error {
	var body responseBody
	if err := json.Unmarshal(raw, &body); err != nil {
		return errCode("invalid_payload")
	}
	if err := checkText(body.Text, in.ws.cfg.LenientTextLimit); err != nil {
		return err
	}
	var blocks json.RawMessage
	if len(body.Blocks) > 0 && string(body.Blocks) != "null" {
		if err := checkBlocks(string(body.Blocks)); err != nil {
			return err
		}
		blocks = body.Blocks
	}
	ch, err := channelArg(in.ws, t.channel)
	if err != nil {
		return err
	}
	if t.messageTS != "" && (body.ReplaceOriginal || body.DeleteOriginal) {
		return in.changeOriginalLocked(ch, t, body, blocks)
	}
	if body.Text == "" && blocks == nil {
		return errCode("no_text")
	}
	threadTS := body.ThreadTS
	if threadTS == "" {
		threadTS = t.threadTS
	}
	m := in.ws.botRecordLocked(ch)
	m.Text, m.Blocks = body.Text, blocks
	if body.ResponseType != "in_channel" {
		m.Ephemeral, m.Recipient = true, t.user
	}
	ch.reply(m, threadTS, false)
	in.ev.postLocked(ch, m)
	return nil
}

// changeOriginalLocked replaces or deletes the message an interaction came
// from, visible or ephemeral, as a response_url answer asks.
func (in *interactivity) changeOriginalLocked(ch *channelState, t responseTarget, body responseBody, blocks json.RawMessage) error {
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
		in.ws.notifyLocked(Update{Kind: UpdateMessageDeleted, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS})
	case body.DeleteOriginal:
		in.ev.deleteLocked(ch, m)
	case t.ephemeral:
		m.Text, m.Blocks = body.Text, blocks
		snap := m.clone()
		in.ws.notifyLocked(Update{Kind: UpdateEphemeral, Channel: ch.ID, TS: m.TS, ThreadTS: m.ThreadTS, Message: &snap})
	default:
		in.ev.editLocked(ch, m, in.ws.cfg.BotUserID, func(m *record) { m.Text, m.Blocks = body.Text, blocks })
	}
	return nil
}
