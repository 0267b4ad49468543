package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrViewNotFound is returned by SubmitView for a view that is not open.
var ErrViewNotFound = errors.New("emulator: view not open")

// modals keeps the views the bot opens (https://docs.slack.dev/surfaces/modals),
// answers the views.* methods, and acts as the people who submit them.
type modals struct {
	ws  *workspace
	hub *socketHub
	in  *interactivity

	// Guarded by ws.mu.
	views     map[string]*View
	viewOrder []string
}

// methods is the views family of the Web API.
func (a *modals) methods() map[string]method {
	return map[string]method{
		"views.open":   {handle: a.viewsOpen},
		"views.push":   {handle: a.viewsPush},
		"views.update": {handle: a.viewsUpdate},
	}
}

// View is a modal the bot opened with views.open or views.push.
type View struct {
	ID   string
	User string          // who it was opened for (the trigger's user)
	View json.RawMessage // the view object as the bot last sent it
	Open bool            // false once submitted and closed
	// Errors are the messages the bot's answer to the last submission showed under
	// the view's input blocks (response_action "errors": block_id → message); nil
	// when it showed none.
	Errors map[string]string
}

func (v *View) clone() View {
	c := *v
	c.View = slices.Clone(v.View)
	c.Errors = maps.Clone(v.Errors)
	return c
}

func readView(r *request) (json.RawMessage, error) {
	raw := r.get("view")
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil || fields["type"] == nil {
		return nil, errCode("invalid_arguments", "[ERROR] view must be a JSON object with a type")
	}
	if err := checkView(json.RawMessage(raw)); err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}

// viewsOpen implements views.open (https://docs.slack.dev/reference/methods/views.open).
func (a *modals) viewsOpen(r *request) (object, error) {
	t, err := a.in.takeTriggerLocked(r.get("trigger_id"))
	if err != nil {
		return nil, err
	}
	raw, err := readView(r)
	if err != nil {
		return nil, err
	}
	v := &View{ID: a.ws.nextIDLocked("V"), User: t.user, View: raw, Open: true}
	a.views[v.ID] = v
	a.viewOrder = append(a.viewOrder, v.ID)
	a.ws.notifyLocked(Update{Kind: UpdateView})
	return object{"view": a.wireView(v, nil)}, nil
}

// viewsPush implements views.push: like views.open on top of the open view.
func (a *modals) viewsPush(r *request) (object, error) {
	return a.viewsOpen(r)
}

// viewsUpdate implements views.update by view_id.
func (a *modals) viewsUpdate(r *request) (object, error) {
	v, ok := a.views[r.get("view_id")]
	if !ok {
		return nil, errCode("not_found")
	}
	raw, err := readView(r)
	if err != nil {
		return nil, err
	}
	v.View = raw
	a.ws.notifyLocked(Update{Kind: UpdateView})
	return object{"view": a.wireView(v, nil)}, nil
}

// wireView renders a view as Slack returns it: the bot's view object plus
// the fields Slack adds, with state.values set to values.
func (a *modals) wireView(v *View, values any) map[string]any {
	var out map[string]any
	_ = json.Unmarshal(v.View, &out) // validated by readView
	if values == nil {
		values = object{}
	}
	out["id"] = v.ID
	out["team_id"] = a.ws.cfg.TeamID
	out["app_id"] = a.ws.cfg.AppID
	out["bot_id"] = a.ws.cfg.BotID
	out["app_installed_team_id"] = a.ws.cfg.TeamID
	out["state"] = object{"values": values}
	out["hash"] = fmt.Sprintf("%d.%s", len(v.View), v.ID)
	out["root_view_id"] = v.ID
	out["previous_view_id"] = nil
	return out
}

// SubmitView acts as user pressing a modal's submit button: the bot
// receives an interactive envelope with a view_submission payload whose
// view.state.values is values (block_id -> action_id -> element state, for
// example {"guidance": {"input": {"type": "plain_text_input", "value": "shorter"}}}).
// The bot's ack payload decides what happens next, as in Slack: a
// response_action of "update" replaces the view, "push" opens another,
// "errors" keeps it open, anything else closes it.
func (a *modals) SubmitView(viewID, user string, values any) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	v, ok := a.views[viewID]
	if !ok || !v.Open {
		return "", fmt.Errorf("%s: %w", viewID, ErrViewNotFound)
	}
	return a.submitViewLocked(v, user, values)
}

// SubmitModal acts as user typing text into the single text input
// (plain_text_input) of the modal most recently opened for them and still
// open, then submitting it, as SubmitView does. The bot opens a modal
// asynchronously after a click: wait for it first (WaitForView).
// Errors: ErrViewNotFound when no view is open for user; a view without
// exactly one text input.
func (a *modals) SubmitModal(user, text string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	v := a.openViewLocked(user)
	if v == nil {
		return "", fmt.Errorf("no view open for %s: %w", user, ErrViewNotFound)
	}
	inputs := textInputs(v.View)
	if len(inputs) != 1 {
		return "", fmt.Errorf("emulator: view %s has %d text inputs, SubmitModal fills exactly one", v.ID, len(inputs))
	}
	in := inputs[0]
	values := object{in.blockID: object{in.actionID: object{"type": "plain_text_input", "value": text}}}
	return a.submitViewLocked(v, user, values)
}

// ErrRequiredInput is returned by SubmitInputs for a required input (an input block
// that is not optional) left empty: Slack's client does not submit such a view.
var ErrRequiredInput = errors.New("emulator: a required input is empty")

// SubmitInputs acts as user typing into the text inputs (plain_text_input) of the
// modal most recently opened for them and still open, each found by its label
// (values: label → text; an input not named stays empty), then submitting it, as
// SubmitView does. Errors: ErrViewNotFound when no view is open for user; a label
// that no text input has; ErrRequiredInput when a required input would be empty
// (an input of only spaces is submitted, as in Slack).
func (a *modals) SubmitInputs(user string, values map[string]string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	v := a.openViewLocked(user)
	if v == nil {
		return "", fmt.Errorf("no view open for %s: %w", user, ErrViewNotFound)
	}
	inputs := textInputs(v.View)
	state := object{}
	used := map[string]bool{}
	for _, in := range inputs {
		text, ok := values[in.label]
		used[in.label] = ok
		if !ok && !in.optional {
			return "", fmt.Errorf("view %s: input %q: %w", v.ID, in.label, ErrRequiredInput)
		}
		if text == "" && !in.optional {
			return "", fmt.Errorf("view %s: input %q: %w", v.ID, in.label, ErrRequiredInput)
		}
		var value any // Slack sends null for an input left empty
		if text != "" {
			value = text
		}
		state[in.blockID] = object{in.actionID: object{"type": "plain_text_input", "value": value}}
	}
	var unknown []string
	for label := range values {
		if !used[label] {
			unknown = append(unknown, label)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return "", fmt.Errorf("emulator: view %s has no text input labelled %s", v.ID, strings.Join(unknown, ", "))
	}
	return a.submitViewLocked(v, user, state)
}

type textInput struct {
	blockID, actionID string
	label             string
	optional          bool
	maxLength         int // 0: Slack's limit, 3,000
}

// textInputs lists the plain_text_input elements of a view's input blocks.
func textInputs(view json.RawMessage) []textInput {
	var v struct {
		Blocks []struct {
			Type     string     `json:"type"`
			BlockID  string     `json:"block_id"`
			Label    textObject `json:"label"`
			Optional bool       `json:"optional"`
			Element  struct {
				Type      string `json:"type"`
				ActionID  string `json:"action_id"`
				MaxLength int    `json:"max_length"`
			} `json:"element"`
		} `json:"blocks"`
	}
	_ = json.Unmarshal(view, &v) // validated by readView
	var out []textInput
	for i, b := range v.Blocks {
		if b.Type != "input" || b.Element.Type != "plain_text_input" {
			continue
		}
		in := textInput{blockID: b.BlockID, actionID: b.Element.ActionID,
			label: b.Label.Text, optional: b.Optional, maxLength: b.Element.MaxLength}
		if in.blockID == "" {
			in.blockID = fmt.Sprintf("block%d", i) // Slack assigns one
		}
		if in.actionID == "" {
			in.actionID = fmt.Sprintf("action%d", i)
		}
		out = append(out, in)
	}
	return out
}

func (a *modals) submitViewLocked(v *View, user string, values any) (string, error) {
	u, ok := a.ws.users[user]
	if !ok {
		return "", fmt.Errorf("%s: %w", user, ErrUserNotFound)
	}
	payload := object{
		"type":                  "view_submission",
		"team":                  a.in.teamObject(),
		"user":                  a.in.userObject(u),
		"api_app_id":            a.ws.cfg.AppID,
		"token":                 a.ws.cfg.VerificationToken,
		"trigger_id":            a.in.newTriggerLocked(u.ID),
		"view":                  a.wireView(v, values),
		"response_urls":         []any{},
		"enterprise":            nil,
		"is_enterprise_install": false,
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("emulator: encode view state: %w", err)
	}
	env := newEnvelope(EnvelopeInteractive, data, 0)
	env.viewID = v.ID
	env.onAck = func(_ string, ack json.RawMessage) { a.viewSubmittedLocked(v.ID, ack) }
	a.hub.enqueueLocked(env)
	return env.id, nil
}

// viewSubmittedLocked applies the bot's answer to a view_submission
// (https://docs.slack.dev/surfaces/modals#updating_response).
func (a *modals) viewSubmittedLocked(viewID string, ack json.RawMessage) {
	v := a.views[viewID]
	if v == nil {
		return
	}
	var answer struct {
		ResponseAction string            `json:"response_action"`
		View           json.RawMessage   `json:"view"`
		Errors         map[string]string `json:"errors"`
	}
	_ = json.Unmarshal(ack, &answer) // an unreadable answer closes the view
	v.Errors = nil
	switch answer.ResponseAction {
	case "update":
		if len(answer.View) > 0 {
			v.View = answer.View
		}
	case "push":
		pushed := &View{ID: a.ws.nextIDLocked("V"), User: v.User, View: answer.View, Open: true}
		a.views[pushed.ID] = pushed
		a.viewOrder = append(a.viewOrder, pushed.ID)
	case "errors":
		// The messages show under the input blocks they name; Slack ignores the
		// others.
		inputs := map[string]bool{}
		for _, in := range textInputs(v.View) {
			inputs[in.blockID] = true
		}
		for id, msg := range answer.Errors {
			if inputs[id] {
				if v.Errors == nil {
					v.Errors = map[string]string{}
				}
				v.Errors[id] = msg
			}
		}
	default:
		v.Open = false
	}
	a.ws.notifyLocked(Update{Kind: UpdateView})
}

// openViewLocked returns the newest view open for user, or nil.
func (a *modals) openViewLocked(user string) *View {
	for i := len(a.viewOrder) - 1; i >= 0; i-- {
		if v := a.views[a.viewOrder[i]]; v.Open && v.User == user {
			return v
		}
	}
	return nil
}

// closeLocked closes v as u cancels it. A view with notify_on_close also
// sends the bot a view_closed payload
// (https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload#view_closed).
func (a *modals) closeLocked(v *View, u User) error {
	v.Open = false
	a.ws.notifyLocked(Update{Kind: UpdateView})
	var flags struct {
		NotifyOnClose bool `json:"notify_on_close"`
	}
	if json.Unmarshal(v.View, &flags) != nil || !flags.NotifyOnClose {
		return nil
	}
	payload := object{
		"type":                  "view_closed",
		"team":                  a.in.teamObject(),
		"user":                  a.in.userObject(u),
		"api_app_id":            a.ws.cfg.AppID,
		"token":                 a.ws.cfg.VerificationToken,
		"view":                  a.wireView(v, nil),
		"is_cleared":            false,
		"enterprise":            nil,
		"is_enterprise_install": false,
	}
	_, err := a.in.sendLocked(EnvelopeInteractive, payload, nil)
	return err
}

// Views returns the views the bot opened, oldest first.
func (a *modals) Views() []View {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	out := make([]View, 0, len(a.viewOrder))
	for _, id := range a.viewOrder {
		out = append(out, a.views[id].clone())
	}
	return out
}

// WaitForView waits until a view is open for user (the bot opens a modal
// with views.open shortly after the click that asks for it) and returns the
// most recent one.
func (a *modals) WaitForView(ctx context.Context, user string) (View, error) {
	var view View
	err := a.ws.WaitFor(ctx, func() bool {
		a.ws.mu.Lock()
		defer a.ws.mu.Unlock()
		for i := len(a.viewOrder) - 1; i >= 0; i-- {
			if v := a.views[a.viewOrder[i]]; v.Open && v.User == user {
				view = v.clone()
				return true
			}
		}
		return false
	})
	if err != nil {
		return view, fmt.Errorf("wait for a view open for %s: %w", user, err)
	}
	return view, nil
}
