package emulator

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// checkText applies Slack's length limit on a message's text
// (https://docs.slack.dev/reference/methods/chat.postMessage#truncating): over
// MaxTextLength characters is msg_too_long; over StrictTextLength too unless
// the server is lenient.
func (s *Server) checkText(text string) error {
	n := utf8.RuneCountInString(text)
	limit := MaxTextLength
	if !s.cfg.LenientTextLimit {
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

type textObject struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

// UnmarshalJSON reads a text object, or a bare string: the text of a
// markdown block (https://docs.slack.dev/reference/block-kit/blocks/markdown-block),
// which has no type.
func (t *textObject) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		*t = textObject{}
		return json.Unmarshal(data, &t.Text)
	}
	type plain textObject // without this method
	return json.Unmarshal(data, (*plain)(t))
}

type blockElement struct {
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

type block struct {
	Type      string            `json:"type"`
	BlockID   string            `json:"block_id"`
	Text      *textObject       `json:"text"`
	Fields    []textObject      `json:"fields"`
	Accessory *blockElement     `json:"accessory"`
	Elements  []json.RawMessage `json:"elements"`
}

// checkBlocks validates a message's blocks argument against the Block Kit
// limits the bot is likely to hit. A malformed argument is
// invalid_blocks_format; a broken limit is invalid_blocks with Slack's
// json-pointer style explanation in "errors".
func checkBlocks(raw string) error {
	var blocks []block
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return errCode("invalid_blocks_format", "[ERROR] blocks must be a JSON array of objects")
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if len(blocks) > MaxBlocks {
		add("no more than %d items allowed [json-pointer:/blocks]", MaxBlocks)
	}
	blockIDs := make(map[string]bool)
	for i, b := range blocks {
		at := fmt.Sprintf("/blocks/%d", i)
		if b.Type == "" {
			add("missing required field: type [json-pointer:%s]", at)
			continue
		}
		if b.BlockID != "" {
			if runes(b.BlockID) > maxBlockIDLength {
				add("must be less than %d characters [json-pointer:%s/block_id]", maxBlockIDLength+1, at)
			}
			if blockIDs[b.BlockID] {
				add("duplicate block_id %q [json-pointer:%s/block_id]", b.BlockID, at)
			}
			blockIDs[b.BlockID] = true
		}
		switch b.Type {
		case "section":
			if b.Text == nil && len(b.Fields) == 0 {
				add("must provide text or fields [json-pointer:%s]", at)
			}
			if b.Text != nil && runes(b.Text.Text) > MaxSectionTextLength {
				add("must be less than %d characters [json-pointer:%s/text/text]", MaxSectionTextLength+1, at)
			}
			if len(b.Fields) > maxSectionFields {
				add("no more than %d items allowed [json-pointer:%s/fields]", maxSectionFields, at)
			}
			for j, f := range b.Fields {
				if runes(f.Text) > maxFieldTextLength {
					add("must be less than %d characters [json-pointer:%s/fields/%d/text]", maxFieldTextLength+1, at, j)
				}
			}
			if b.Accessory != nil {
				problems = append(problems, checkElement(*b.Accessory, at+"/accessory")...)
			}
		case "header":
			if b.Text == nil || b.Text.Type != "plain_text" {
				add("must be a plain_text object [json-pointer:%s/text]", at)
			} else if runes(b.Text.Text) > maxHeaderTextLength {
				add("must be less than %d characters [json-pointer:%s/text/text]", maxHeaderTextLength+1, at)
			}
		case "actions":
			if len(b.Elements) > maxActionsElements {
				add("no more than %d items allowed [json-pointer:%s/elements]", maxActionsElements, at)
			}
			actionIDs := make(map[string]bool)
			for j, raw := range b.Elements {
				var el blockElement
				if err := json.Unmarshal(raw, &el); err != nil {
					add("must be an object [json-pointer:%s/elements/%d]", at, j)
					continue
				}
				elAt := fmt.Sprintf("%s/elements/%d", at, j)
				problems = append(problems, checkElement(el, elAt)...)
				if el.ActionID != "" && actionIDs[el.ActionID] {
					add("duplicate action_id %q [json-pointer:%s/action_id]", el.ActionID, elAt)
				}
				actionIDs[el.ActionID] = true
			}
		case "context_actions":
			problems = append(problems, checkContextActions(b.Elements, at)...)
		case "context":
			if len(b.Elements) > maxContextElements {
				add("no more than %d items allowed [json-pointer:%s/elements]", maxContextElements, at)
			}
		}
	}
	if len(problems) > 0 {
		return &apiError{Code: "invalid_blocks", Errors: problems, Messages: prefixed("[ERROR] ", problems)}
	}
	return nil
}

func checkElement(el blockElement, at string) []string {
	var problems []string
	if runes(el.ActionID) > maxActionIDLength {
		problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/action_id]", maxActionIDLength+1, at))
	}
	if c := el.Confirm; c != nil {
		for _, f := range []struct {
			name string
			obj  *textObject
			max  int
		}{{"title", c.Title, maxConfirmTitle}, {"text", c.Text, maxConfirmText}, {"confirm", c.Confirm, maxConfirmButton}, {"deny", c.Deny, maxConfirmButton}} {
			switch {
			case f.obj == nil && f.name != "deny":
				problems = append(problems, fmt.Sprintf("missing required field: %s [json-pointer:%s/confirm/%s]", f.name, at, f.name))
			case f.obj != nil && runes(f.obj.Text) > f.max:
				problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/confirm/%s/text]", f.max+1, at, f.name))
			}
		}
	}
	switch el.Type {
	case "overflow", "static_select":
		limit := maxOverflowOptions
		if el.Type == "static_select" {
			limit = maxSelectOptions
		}
		if len(el.Options) == 0 && (el.Type == "overflow" || len(el.OptionGroups) == 0) {
			problems = append(problems, fmt.Sprintf("must provide at least 1 items [json-pointer:%s/options]", at))
		}
		if len(el.Options) > limit {
			problems = append(problems, fmt.Sprintf("no more than %d items allowed [json-pointer:%s/options]", limit, at))
		}
		for j, o := range el.Options {
			if o.Text == nil || o.Text.Type != "plain_text" {
				problems = append(problems, fmt.Sprintf("must be a plain_text object [json-pointer:%s/options/%d/text]", at, j))
			} else if runes(o.Text.Text) > maxOptionTextLength {
				problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/options/%d/text/text]", maxOptionTextLength+1, at, j))
			}
			if runes(o.Value) > maxOptionValueLength {
				problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/options/%d/value]", maxOptionValueLength+1, at, j))
			}
		}
		if el.Type == "static_select" && el.Placeholder != nil && runes(el.Placeholder.Text) > maxPlaceholderLength {
			problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/placeholder/text]", maxPlaceholderLength+1, at))
		}
		return problems
	case "button":
	default:
		return problems
	}
	if el.Text == nil || el.Text.Type != "plain_text" {
		problems = append(problems, fmt.Sprintf("must be a plain_text object [json-pointer:%s/text]", at))
	} else if runes(el.Text.Text) > maxButtonTextLength {
		problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/text/text]", maxButtonTextLength+1, at))
	}
	if runes(el.Value) > maxButtonValueLength {
		problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/value]", maxButtonValueLength+1, at))
	}
	if runes(el.URL) > maxButtonURLLength {
		problems = append(problems, fmt.Sprintf("must be less than %d characters [json-pointer:%s/url]", maxButtonURLLength+1, at))
	}
	return problems
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// checkView validates a views.open / views.push / views.update view against
// the modal limits the bot is likely to hit; a broken limit is
// invalid_arguments with Slack's explanations in response_metadata.messages.
func checkView(raw json.RawMessage) error {
	var v struct {
		Type            string      `json:"type"`
		Title           *textObject `json:"title"`
		Submit          *textObject `json:"submit"`
		Close           *textObject `json:"close"`
		PrivateMetadata string      `json:"private_metadata"`
		CallbackID      string      `json:"callback_id"`
		Blocks          []struct {
			Type    string      `json:"type"`
			BlockID string      `json:"block_id"`
			Label   *textObject `json:"label"`
			Element *struct {
				Type         string      `json:"type"`
				Placeholder  *textObject `json:"placeholder"`
				InitialValue string      `json:"initial_value"`
				MaxLength    int         `json:"max_length"`
			} `json:"element"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return errCode("invalid_arguments", "[ERROR] view must be a JSON object")
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	text := func(name string, obj *textObject, limit int, required bool) {
		switch {
		case obj == nil && required:
			add("missing required field: %s [json-pointer:/view/%s]", name, name)
		case obj == nil:
		case obj.Type != "plain_text":
			add("must be a plain_text object [json-pointer:/view/%s]", name)
		case runes(obj.Text) > limit:
			add("must be less than %d characters [json-pointer:/view/%s/text]", limit+1, name)
		}
	}
	if v.Type == "modal" {
		text("title", v.Title, maxViewTitleLength, true)
		hasInput := false
		for _, b := range v.Blocks {
			hasInput = hasInput || b.Type == "input"
		}
		text("submit", v.Submit, maxViewButtonLength, hasInput)
		text("close", v.Close, maxViewButtonLength, false)
	}
	if len(v.Blocks) > maxViewBlocks {
		add("no more than %d items allowed [json-pointer:/view/blocks]", maxViewBlocks)
	}
	if runes(v.PrivateMetadata) > maxPrivateMetadata {
		add("must be less than %d characters [json-pointer:/view/private_metadata]", maxPrivateMetadata+1)
	}
	if runes(v.CallbackID) > maxCallbackIDLength {
		add("must be less than %d characters [json-pointer:/view/callback_id]", maxCallbackIDLength+1)
	}
	blockIDs := map[string]bool{}
	for i, b := range v.Blocks {
		switch {
		case runes(b.BlockID) > maxBlockIDLength:
			add("must be less than %d characters [json-pointer:/view/blocks/%d/block_id]", maxBlockIDLength+1, i)
		case b.BlockID != "" && blockIDs[b.BlockID]:
			add("block_id %q is already used [json-pointer:/view/blocks/%d/block_id]", b.BlockID, i)
		}
		blockIDs[b.BlockID] = true
		if b.Type != "input" {
			continue
		}
		at := fmt.Sprintf("/view/blocks/%d", i)
		if b.Label == nil || b.Label.Type != "plain_text" {
			add("must be a plain_text object [json-pointer:%s/label]", at)
		} else if runes(b.Label.Text) > maxInputLabelLength {
			add("must be less than %d characters [json-pointer:%s/label/text]", maxInputLabelLength+1, at)
		}
		el := b.Element
		if el == nil {
			add("missing required field: element [json-pointer:%s]", at)
			continue
		}
		if el.Type != "plain_text_input" {
			continue
		}
		if el.Placeholder != nil && runes(el.Placeholder.Text) > maxPlaceholderLength {
			add("must be less than %d characters [json-pointer:%s/element/placeholder/text]", maxPlaceholderLength+1, at)
		}
		if el.MaxLength > maxPlainTextInputLength {
			add("must be less than %d [json-pointer:%s/element/max_length]", maxPlainTextInputLength+1, at)
		}
		limit := maxPlainTextInputLength
		if el.MaxLength > 0 {
			limit = min(limit, el.MaxLength)
		}
		if runes(el.InitialValue) > limit {
			add("must be less than %d characters [json-pointer:%s/element/initial_value]", limit+1, at)
		}
	}
	if len(problems) > 0 {
		return errCode("invalid_arguments", prefixed("[ERROR] ", problems)...)
	}
	return nil
}
