package emulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Block Kit as the emulator reads the bot's blocks
// (https://docs.slack.dev/reference/block-kit): text objects, the interactive
// elements a person can use (buttons, overflow menus, static selects), and
// the feedback buttons of a context_actions block
// (https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element),
// the thumbs up and down Slack shows under an AI app's answers.

// textObject is a Block Kit text object.
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

// option is an option of an overflow or static select menu.
type option struct {
	Text  textObject `json:"text"`
	Value string     `json:"value"`
}

// options lists a menu's options, grouped ones included.
func (el element) options() []option {
	out := slices.Clone(el.Options)
	for _, g := range el.OptionGroups {
		out = append(out, g.Options...)
	}
	return out
}

// element is an interactive element of a message's blocks (in an actions
// block or a section's accessory), with where it is.
type element struct {
	Type        string          `json:"type"`
	ActionID    string          `json:"action_id"`
	Text        json.RawMessage `json:"text"`
	Value       string          `json:"value"`
	Style       string          `json:"style"`
	Placeholder json.RawMessage `json:"placeholder"`
	Options     []option        `json:"options"`
	// OptionGroups holds a static select's options when they are grouped.
	OptionGroups []struct {
		Options []option `json:"options"`
	} `json:"option_groups"`

	BlockID string `json:"-"`
	context string // the text of the nearest text block above
}

func (el element) label() string {
	var t textObject
	_ = json.Unmarshal(el.Text, &t) // a button's text is a text object
	return t.Text
}

// elementsOf lists the interactive elements of blocks (in actions blocks
// and section accessories), in order. Blocks posted without a block_id get
// "block<i>", standing in for the one Slack assigns.
func elementsOf(blocks json.RawMessage) []element {
	var bs []struct {
		Type      string            `json:"type"`
		BlockID   string            `json:"block_id"`
		Text      *textObject       `json:"text"`
		Accessory json.RawMessage   `json:"accessory"`
		Elements  []json.RawMessage `json:"elements"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return nil
	}
	var out []element
	context := ""
	for i, b := range bs {
		blockID := b.BlockID
		if blockID == "" {
			blockID = fmt.Sprintf("block%d", i)
		}
		var candidates []json.RawMessage
		switch b.Type {
		case "section", "header":
			if b.Text != nil {
				context = b.Text.Text
			}
			if b.Accessory != nil {
				candidates = []json.RawMessage{b.Accessory}
			}
		case "context":
			var texts []string
			for _, raw := range b.Elements {
				var t textObject
				if json.Unmarshal(raw, &t) == nil && t.Text != "" {
					texts = append(texts, t.Text)
				}
			}
			if len(texts) > 0 {
				context = strings.Join(texts, " ")
			}
		case "actions":
			candidates = b.Elements
		}
		for _, raw := range candidates {
			var el element
			if json.Unmarshal(raw, &el) != nil {
				continue
			}
			el.BlockID, el.context = blockID, context
			out = append(out, el)
		}
	}
	return out
}

// feedbackButton is one button of a feedback_buttons element.
type feedbackButton struct {
	Text               *textObject `json:"text"`
	Value              string      `json:"value"`
	AccessibilityLabel string      `json:"accessibility_label"`
}

// feedbackButtons is a feedback_buttons element.
type feedbackButtons struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Positive *feedbackButton `json:"positive_button"`
	Negative *feedbackButton `json:"negative_button"`
}

// feedbackButtonsOf returns the first feedback_buttons element of blocks, with its
// block's block_id ("block<i>" when it has none, as elementsOf names them).
func feedbackButtonsOf(blocks json.RawMessage) (feedbackButtons, string, bool) {
	var bs []struct {
		Type     string            `json:"type"`
		BlockID  string            `json:"block_id"`
		Elements []json.RawMessage `json:"elements"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return feedbackButtons{}, "", false
	}
	for i, b := range bs {
		if b.Type != "context_actions" {
			continue
		}
		for _, raw := range b.Elements {
			var el feedbackButtons
			if json.Unmarshal(raw, &el) == nil && el.Type == "feedback_buttons" && el.Positive != nil && el.Negative != nil {
				id := b.BlockID
				if id == "" {
					id = fmt.Sprintf("block%d", i)
				}
				return el, id, true
			}
		}
	}
	return feedbackButtons{}, "", false
}
