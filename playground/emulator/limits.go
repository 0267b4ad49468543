package emulator

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The limits Slack puts on what an app sends, and the refusals the emulator
// answers when the bot breaks one: msg_too_long for text, invalid_blocks for
// Block Kit, invalid_arguments for a modal.

// checkText applies Slack's length limit on a message's text
// (https://docs.slack.dev/reference/methods/chat.postMessage#truncating): over
// MaxTextLength characters is msg_too_long; over StrictTextLength too unless
// lenient.
func checkText(text string, lenient bool) error {
	n := utf8.RuneCountInString(text)
	limit := MaxTextLength
	if !lenient {
		limit = StrictTextLength
	}
	if n > limit {
		return errCode("msg_too_long", fmt.Sprintf("[ERROR] text is %d characters; the limit is %d", n, limit))
	}
	return nil
}

// Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks and
// .../block-elements/button-element).
const (
	maxBlockIDLength     = 255
	maxSectionFields     = 10
	maxFieldTextLength   = 2000
	maxHeaderTextLength  = 150
	maxActionsElements   = 25
	maxContextElements   = 10
	maxButtonTextLength  = 75
	maxActionIDLength    = 255
	maxButtonValueLength = 2000
	maxButtonURLLength   = 3000
	maxOverflowOptions   = 5
	maxSelectOptions     = 100
	maxOptionTextLength  = 75
	maxOptionValueLength = 150
	maxConfirmTitle      = 100
	maxConfirmText       = 300
	maxConfirmButton     = 30

	// The context_actions block and its feedback buttons
	// (https://docs.slack.dev/reference/block-kit/blocks/context-actions-block).
	maxContextActionsElements = 5
	maxAccessibilityLabel     = 75

	// Modals (https://docs.slack.dev/reference/views/modal-views and
	// .../block-elements/plain-text-input-element).
	maxViewTitleLength      = 24
	maxViewButtonLength     = 24
	maxViewBlocks           = 100
	maxPrivateMetadata      = 3000
	maxCallbackIDLength     = 255
	maxInputLabelLength     = 2000
	maxPlaceholderLength    = 150
	maxPlainTextInputLength = 3000
)

// problems collects Slack's explanations of broken limits, each ending with
// the json-pointer of what broke it.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// tooLong adds Slack's "must be less than" when s is over limit characters.
func (p *problems) tooLong(s string, limit int, at string) {
	if runes(s) > limit {
		p.add("must be less than %d characters [json-pointer:%s]", limit+1, at)
	}
}

// plainText adds a problem when obj is not a plain_text object of at most
// limit characters; at points at the object.
func (p *problems) plainText(obj *textObject, limit int, at string) {
	if obj == nil || obj.Type != "plain_text" {
		p.add("must be a plain_text object [json-pointer:%s]", at)
		return
	}
	p.tooLong(obj.Text, limit, at+"/text")
}

// tooMany adds Slack's "no more than" when n is over limit items.
func (p *problems) tooMany(n, limit int, at string) {
	if n > limit {
		p.add("no more than %d items allowed [json-pointer:%s]", limit, at)
	}
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// elementShape is an element of a block as the limits read it.
type elementShape struct {
	Type     string      `json:"type"`
	ActionID string      `json:"action_id"`
	Text     *textObject `json:"text"`
	Value    string      `json:"value"`
	URL      string      `json:"url"`
	Options  []struct {
		Text  *textObject `json:"text"`
		Value string      `json:"value"`
	} `json:"options"`
	OptionGroups []json.RawMessage `json:"option_groups"` // a static select's alternative to options
	Confirm      *struct {
		Title   *textObject `json:"title"`
		Text    *textObject `json:"text"`
		Confirm *textObject `json:"confirm"`
		Deny    *textObject `json:"deny"`
	} `json:"confirm"`
	Placeholder *textObject `json:"placeholder"`
}

// blockShape is a message's block as the limits read it.
type blockShape struct {
	Type      string            `json:"type"`
	BlockID   string            `json:"block_id"`
	Text      *textObject       `json:"text"`
	Fields    []textObject      `json:"fields"`
	Accessory *elementShape     `json:"accessory"`
	Elements  []json.RawMessage `json:"elements"`
}

// checkBlocks validates a message's blocks argument against the Block Kit
// limits the bot is likely to hit. A malformed argument is
// invalid_blocks_format; a broken limit is invalid_blocks with Slack's
// json-pointer style explanation in "errors".
func checkBlocks(raw string) error {
	var blocks []blockShape
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return errCode("invalid_blocks_format", "[ERROR] blocks must be a JSON array of objects")
	}
	var p problems
	p.tooMany(len(blocks), MaxBlocks, "/blocks")
	blockIDs := make(map[string]bool)
	for i, b := range blocks {
		at := fmt.Sprintf("/blocks/%d", i)
		if b.Type == "" {
			p.add("missing required field: type [json-pointer:%s]", at)
			continue
		}
		if b.BlockID != "" {
			p.tooLong(b.BlockID, maxBlockIDLength, at+"/block_id")
			if blockIDs[b.BlockID] {
				p.add("duplicate block_id %q [json-pointer:%s/block_id]", b.BlockID, at)
			}
			blockIDs[b.BlockID] = true
		}
		p.typed(b, at)
	}
	if len(p) > 0 {
		return &apiError{Code: "invalid_blocks", Errors: p, Messages: prefixed("[ERROR] ", p)}
	}
	return nil
}

// typed checks the limits of one block of a known type at at.
func (p *problems) typed(b blockShape, at string) {
	switch b.Type {
	case "section":
		p.section(b, at)
	case "header":
		p.plainText(b.Text, maxHeaderTextLength, at+"/text")
	case "actions":
		p.actions(b.Elements, at)
	case "context_actions":
		p.contextActions(b.Elements, at)
	case "context":
		p.tooMany(len(b.Elements), maxContextElements, at+"/elements")
	}
}

// section checks a section block: text or fields, their lengths, and its
// accessory.
func (p *problems) section(b blockShape, at string) {
	if b.Text == nil && len(b.Fields) == 0 {
		p.add("must provide text or fields [json-pointer:%s]", at)
	}
	if b.Text != nil {
		p.tooLong(b.Text.Text, MaxSectionTextLength, at+"/text/text")
	}
	p.tooMany(len(b.Fields), maxSectionFields, at+"/fields")
	for j, f := range b.Fields {
		p.tooLong(f.Text, maxFieldTextLength, fmt.Sprintf("%s/fields/%d/text", at, j))
	}
	if b.Accessory != nil {
		p.element(*b.Accessory, at+"/accessory")
	}
}

// actions checks an actions block's elements, whose action_ids must differ.
func (p *problems) actions(elements []json.RawMessage, at string) {
	p.tooMany(len(elements), maxActionsElements, at+"/elements")
	actionIDs := make(map[string]bool)
	for j, raw := range elements {
		var el elementShape
		if err := json.Unmarshal(raw, &el); err != nil {
			p.add("must be an object [json-pointer:%s/elements/%d]", at, j)
			continue
		}
		elAt := fmt.Sprintf("%s/elements/%d", at, j)
		p.element(el, elAt)
		if el.ActionID != "" && actionIDs[el.ActionID] {
			p.add("duplicate action_id %q [json-pointer:%s/action_id]", el.ActionID, elAt)
		}
		actionIDs[el.ActionID] = true
	}
}

// element checks an interactive element: its action_id, confirm dialog, and
// a button's or a menu's own limits.
func (p *problems) element(el elementShape, at string) {
	p.tooLong(el.ActionID, maxActionIDLength, at+"/action_id")
	if c := el.Confirm; c != nil {
		for _, f := range []struct {
			name string
			obj  *textObject
			max  int
		}{{"title", c.Title, maxConfirmTitle}, {"text", c.Text, maxConfirmText}, {"confirm", c.Confirm, maxConfirmButton}, {"deny", c.Deny, maxConfirmButton}} {
			switch {
			case f.obj == nil && f.name != "deny":
				p.add("missing required field: %s [json-pointer:%s/confirm/%s]", f.name, at, f.name)
			case f.obj != nil:
				p.tooLong(f.obj.Text, f.max, at+"/confirm/"+f.name+"/text")
			}
		}
	}
	switch el.Type {
	case "overflow", "static_select":
		p.menu(el, at)
	case "button":
		p.plainText(el.Text, maxButtonTextLength, at+"/text")
		p.tooLong(el.Value, maxButtonValueLength, at+"/value")
		p.tooLong(el.URL, maxButtonURLLength, at+"/url")
	}
}

// menu checks an overflow menu or a static select: the number of options,
// their texts and values, and a select's placeholder.
func (p *problems) menu(el elementShape, at string) {
	limit := maxOverflowOptions
	if el.Type == "static_select" {
		limit = maxSelectOptions
	}
	if len(el.Options) == 0 && (el.Type == "overflow" || len(el.OptionGroups) == 0) {
		p.add("must provide at least 1 items [json-pointer:%s/options]", at)
	}
	p.tooMany(len(el.Options), limit, at+"/options")
	for j, o := range el.Options {
		optAt := fmt.Sprintf("%s/options/%d", at, j)
		p.plainText(o.Text, maxOptionTextLength, optAt+"/text")
		p.tooLong(o.Value, maxOptionValueLength, optAt+"/value")
	}
	if el.Type == "static_select" && el.Placeholder != nil {
		p.tooLong(el.Placeholder.Text, maxPlaceholderLength, at+"/placeholder/text")
	}
}

// contextActions checks the elements of the context_actions block at: at most
// 5, each feedback_buttons or icon_button, a feedback_buttons with both
// buttons, each button with a plain_text text and a value, a value of at most
// 2,000 characters and an accessibility_label of at most 75
// (https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element).
func (p *problems) contextActions(elements []json.RawMessage, at string) {
	if len(elements) == 0 {
		p.add("must provide at least 1 items [json-pointer:%s/elements]", at)
	}
	p.tooMany(len(elements), maxContextActionsElements, at+"/elements")
	for j, raw := range elements {
		elAt := fmt.Sprintf("%s/elements/%d", at, j)
		var el feedbackButtons
		if err := json.Unmarshal(raw, &el); err != nil {
			p.add("must be an object [json-pointer:%s]", elAt)
			continue
		}
		switch el.Type {
		case "icon_button":
			continue
		case "feedback_buttons":
		default:
			p.add("must be one of feedback_buttons, icon_button [json-pointer:%s/type]", elAt)
			continue
		}
		p.tooLong(el.ActionID, maxActionIDLength, elAt+"/action_id")
		p.feedbackButton(el.Positive, elAt+"/positive_button", "positive_button")
		p.feedbackButton(el.Negative, elAt+"/negative_button", "negative_button")
	}
}

// feedbackButton checks one button of a feedback_buttons element.
func (p *problems) feedbackButton(b *feedbackButton, at, name string) {
	if b == nil {
		p.add("missing required field: %s [json-pointer:%s]", name, at)
		return
	}
	p.plainText(b.Text, maxButtonTextLength, at+"/text")
	if b.Value == "" {
		p.add("missing required field: value [json-pointer:%s/value]", at)
	}
	p.tooLong(b.Value, maxButtonValueLength, at+"/value")
	p.tooLong(b.AccessibilityLabel, maxAccessibilityLabel, at+"/accessibility_label")
}

// modalView is a view as the modal limits read it.
type modalView struct {
	Type            string       `json:"type"`
	Title           *textObject  `json:"title"`
	Submit          *textObject  `json:"submit"`
	Close           *textObject  `json:"close"`
	PrivateMetadata string       `json:"private_metadata"`
	CallbackID      string       `json:"callback_id"`
	Blocks          []modalBlock `json:"blocks"`
}

// modalBlock is a block of a modal as the limits read it.
type modalBlock struct {
	Type    string      `json:"type"`
	BlockID string      `json:"block_id"`
	Label   *textObject `json:"label"`
	Element *struct {
		Type         string      `json:"type"`
		Placeholder  *textObject `json:"placeholder"`
		InitialValue string      `json:"initial_value"`
		MaxLength    int         `json:"max_length"`
	} `json:"element"`
}

// checkView validates a views.open / views.push / views.update view against
// the modal limits the bot is likely to hit; a broken limit is
// invalid_arguments with Slack's explanations in response_metadata.messages.
func checkView(raw json.RawMessage) error {
	var v modalView
	if err := json.Unmarshal(raw, &v); err != nil {
		return errCode("invalid_arguments", "[ERROR] view must be a JSON object")
	}
	var p problems
	if v.Type == "modal" {
		hasInput := false
		for _, b := range v.Blocks {
			hasInput = hasInput || b.Type == "input"
		}
		p.viewText("title", v.Title, maxViewTitleLength, true)
		p.viewText("submit", v.Submit, maxViewButtonLength, hasInput)
		p.viewText("close", v.Close, maxViewButtonLength, false)
	}
	p.tooMany(len(v.Blocks), maxViewBlocks, "/view/blocks")
	p.tooLong(v.PrivateMetadata, maxPrivateMetadata, "/view/private_metadata")
	p.tooLong(v.CallbackID, maxCallbackIDLength, "/view/callback_id")
	blockIDs := map[string]bool{}
	for i, b := range v.Blocks {
		switch {
		case runes(b.BlockID) > maxBlockIDLength:
			p.add("must be less than %d characters [json-pointer:/view/blocks/%d/block_id]", maxBlockIDLength+1, i)
		case b.BlockID != "" && blockIDs[b.BlockID]:
			p.add("block_id %q is already used [json-pointer:/view/blocks/%d/block_id]", b.BlockID, i)
		}
		blockIDs[b.BlockID] = true
		if b.Type == "input" {
			p.input(b, fmt.Sprintf("/view/blocks/%d", i))
		}
	}
	if len(p) > 0 {
		return errCode("invalid_arguments", prefixed("[ERROR] ", p)...)
	}
	return nil
}

// viewText checks the view's title, submit or close text object.
func (p *problems) viewText(name string, obj *textObject, limit int, required bool) {
	switch {
	case obj == nil && required:
		p.add("missing required field: %s [json-pointer:/view/%s]", name, name)
	case obj == nil:
	default:
		p.plainText(obj, limit, "/view/"+name)
	}
}

// input checks an input block of a modal: its label and, for a
// plain_text_input, the placeholder, max_length and initial_value.
func (p *problems) input(b modalBlock, at string) {
	p.plainText(b.Label, maxInputLabelLength, at+"/label")
	el := b.Element
	if el == nil {
		p.add("missing required field: element [json-pointer:%s]", at)
		return
	}
	if el.Type != "plain_text_input" {
		return
	}
	if el.Placeholder != nil {
		p.tooLong(el.Placeholder.Text, maxPlaceholderLength, at+"/element/placeholder/text")
	}
	if el.MaxLength > maxPlainTextInputLength {
		p.add("must be less than %d [json-pointer:%s/element/max_length]", maxPlainTextInputLength+1, at)
	}
	limit := maxPlainTextInputLength
	if el.MaxLength > 0 {
		limit = min(limit, el.MaxLength)
	}
	p.tooLong(el.InitialValue, limit, at+"/element/initial_value")
}
