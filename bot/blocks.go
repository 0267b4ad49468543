package bot

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks,
// .../block-elements, .../composition-objects, .../surfaces/modals) and
// threadwright's own budgets for cards.
const (
	// MaxBlocks is the most blocks one message may carry.
	MaxBlocks = 50
	// MaxSectionChars is the most characters of a section block's text (and of a
	// context block's text element).
	MaxSectionChars = 3000
	// MaxFallbackChars is the most characters threadwright puts in a card message's
	// text, the fallback shown in notifications.
	MaxFallbackChars = 3000
	// MaxCardChars is threadwright's budget of text (header, section and context
	// characters) per card message. Slack documents no total for blocks; this keeps
	// every message readable and far below its 40,000-character truncation. A longer
	// card continues in more messages (PostCard) or is shortened (UpdateCard,
	// ephemerals).
	MaxCardChars = 12000
	// MaxCardMessages is the most messages PostCard spreads one card over; a card
	// longer than that has its longest texts shortened.
	MaxCardMessages = 10

	maxHeaderChars        = 150
	maxButtonLabelChars   = 75
	maxButtonValueChars   = 2000
	maxOptionValueChars   = 150
	maxActionsElements    = 25
	maxOverflowOptions    = 5
	maxSelectOptions      = 100
	maxConfirmTitleChars  = 100
	maxConfirmTextChars   = 300
	maxConfirmButtonChars = 30
	maxModalTitleChars    = 24
	maxModalButtonChars   = 24
	maxInputLabelChars    = 2000
	maxPlaceholderChars   = 150
	maxInputChars         = 3000

	// minKeptChars is the least text a shortened section keeps; below it the text is
	// left out entirely and only the note remains.
	minKeptChars = 200
	// maxContinuationFallback bounds the text fallback of a continuation message.
	maxContinuationFallback = 300
)

// actionIDPrefix starts the action_id of every interactive element threadwright
// renders: "tw:<card block>:<button>", "tw:<card block>:menu".
const actionIDPrefix = "tw:"

// The context notes shown where a card was shortened to fit its messages; %s is the
// number of characters (or blocks) left out.
const (
	shortenedNote       = "_✂ Shortened to fit Slack: %s more characters not shown._"
	shortenedBlocksNote = "_✂ Shortened to fit Slack: %s more blocks not shown._"
)

// CardMessage is one Slack message of a rendered card: its text fallback and blocks.
type CardMessage struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
}

// RenderCard renders c as Block Kit in at most maxMessages messages (at least one),
// each within Slack's limits: a header is cut to 150 characters, section and context
// text is split over several blocks of at most 3,000 characters at paragraph or line
// boundaries (SplitText), buttons carry their action in their value (see
// encodeValue) under a unique action_id with labels cut to 75 characters, more than
// 25 elements continue in another actions block, the Menu becomes an overflow menu
// (a static select beyond 5 items; an item whose value or confirm dialog an option
// cannot carry becomes a button), and no message has more than MaxBlocks blocks or
// MaxCardChars characters of text.
//
// A card that needs more messages is split between blocks, in order: the messages
// before the last are continuations of the card's long text, and the last carries
// the rest and, normally, the buttons. A header stays with the block after it, and
// an actions block with the block before it. When even maxMessages messages are not
// enough, the longest texts are shortened (each to the same length, at a paragraph
// boundary where one is near) and a context block after each says how much was left
// out.
//
// The last message's text is c.Text (or, when empty, the card's first text) cut to
// MaxFallbackChars; a continuation's text is the start of its own first text. Special
// mentions in mrkdwn text and fallbacks are defused (DefuseMentions).
// Errors: a button's action cannot be encoded (conversation.Action.Encode).
func RenderCard(c conversation.Card, maxMessages int) ([]CardMessage, error) {
	maxMessages = max(maxMessages, 1)
	items, err := expand(c, -1)
	if err != nil {
		return nil, err
	}
	pages := pack(items)
	if len(pages) > maxMessages {
		pages = nil
		for lo, hi := 0, longestText(c); lo <= hi; {
			limit := (lo + hi) / 2
			items, _ := expand(c, limit) // the same buttons encoded without error above
			if p := pack(items); len(p) <= maxMessages {
				pages, lo = p, limit+1
			} else {
				hi = limit - 1
			}
		}
		if pages == nil {
			items, _ := expand(c, 0)
			pages = squeeze(pack(items), maxMessages)
		}
	}
	if len(pages) == 0 {
		pages = [][]item{nil} // a card without blocks: its text alone
	}
	out := make([]CardMessage, len(pages))
	for i, p := range pages {
		msg := CardMessage{Blocks: make([]slack.Block, len(p))}
		for j, it := range p {
			msg.Blocks[j] = it.block
		}
		if i == len(pages)-1 {
			msg.Text = DefuseMentions(fallbackText(c))
		} else {
			msg.Text = DefuseMentions(truncate(firstText(p), maxContinuationFallback))
		}
		out[i] = msg
	}
	return out, nil
}

// item is one rendered block with what packing needs to know.
type item struct {
	block slack.Block
	text  string // its text, for fallbacks
	chars int    // characters counted against MaxCardChars
	// glueNext keeps the item in the same message as the next one (a header);
	// gluePrev with the previous one (an actions block, a shortened note).
	glueNext, gluePrev bool
	actions            bool
}

// expand renders c's blocks. limit >= 0 shortens every text longer than limit
// characters (0 leaves such texts out), adding a note; limit < 0 keeps all text.
func expand(c conversation.Card, limit int) ([]item, error) {
	var items []item
	for bi, b := range c.Blocks {
		switch b.Kind {
		case conversation.BlockHeader:
			text := truncate(strings.TrimSpace(oneLine(b.Text)), maxHeaderChars)
			if text == "" {
				continue
			}
			items = append(items, item{
				block: slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, text, true, false)),
				text:  text, chars: runes(text), glueNext: true,
			})
		case conversation.BlockSection, conversation.BlockContext:
			items = append(items, textItems(b, limit)...)
		case conversation.BlockDivider:
			items = append(items, item{block: slack.NewDividerBlock()})
		case conversation.BlockActions:
			blocks, err := actionBlocks(bi, b)
			if err != nil {
				return nil, fmt.Errorf("render card block %d: %w", bi, err)
			}
			for _, ab := range blocks {
				items = append(items, item{block: ab, gluePrev: true, actions: true})
			}
		}
	}
	return items, nil
}

// textItems renders a section or context block: its text split into blocks of at most
// MaxSectionChars, shortened to limit (when limit >= 0) with a note after it.
func textItems(b conversation.Block, limit int) []item {
	text := DefuseMentions(strings.TrimSpace(b.Text))
	if text == "" {
		return nil
	}
	var omitted int
	if n := runes(text); limit >= 0 && n > limit {
		kept := ""
		if limit >= minKeptChars {
			kept = SplitText(text, limit)[0]
		}
		omitted = n - runes(kept)
		text = kept
	}
	var items []item
	for _, piece := range SplitText(text, MaxSectionChars) {
		it := item{text: piece, chars: runes(piece)}
		if b.Kind == conversation.BlockContext {
			it.block = slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, piece, false, false))
		} else {
			it.block = slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, piece, false, false), nil, nil)
		}
		items = append(items, it)
	}
	if omitted > 0 {
		note := fmt.Sprintf(shortenedNote, thousands(omitted))
		items = append(items, item{
			block: slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, note, false, false)),
			chars: runes(note), gluePrev: len(items) > 0,
		})
	}
	return items
}

// actionBlocks renders an actions block of card block bi: its buttons, then its menu,
// in actions blocks of at most maxActionsElements elements.
func actionBlocks(bi int, b conversation.Block) ([]slack.Block, error) {
	var elements []slack.BlockElement
	for i, btn := range b.Buttons {
		el, err := buttonElement(fmt.Sprintf("%s%d:%d", actionIDPrefix, bi, i), btn)
		if err != nil {
			return nil, err
		}
		elements = append(elements, el)
	}
	var options []*slack.OptionBlockObject
	for i, btn := range b.Menu {
		if btn.Confirm == nil {
			value, err := optionValue(btn)
			if err == nil {
				label := truncate(oneLine(btn.Label), maxButtonLabelChars)
				options = append(options, slack.NewOptionBlockObject(value, slack.NewTextBlockObject(slack.PlainTextType, label, true, false), nil))
				continue
			}
			if !errors.Is(err, errValueTooLong) {
				return nil, err
			}
		}
		// An option cannot carry this item (value too long, or a confirm dialog, which
		// an overflow menu has for all its items at once): it becomes a button.
		el, err := buttonElement(fmt.Sprintf("%s%d:m%d", actionIDPrefix, bi, i), btn)
		if err != nil {
			return nil, err
		}
		elements = append(elements, el)
	}
	if len(options) > maxSelectOptions {
		options = options[:maxSelectOptions]
	}
	menuID := fmt.Sprintf("%s%d:menu", actionIDPrefix, bi)
	switch {
	case len(options) > maxOverflowOptions:
		elements = append(elements, slack.NewOptionsSelectBlockElement(slack.OptTypeStatic,
			slack.NewTextBlockObject(slack.PlainTextType, "…", false, false), menuID, options...))
	case len(options) > 0:
		elements = append(elements, slack.NewOverflowBlockElement(menuID, options...))
	}
	var blocks []slack.Block
	for len(elements) > 0 {
		n := min(len(elements), maxActionsElements)
		blocks = append(blocks, slack.NewActionBlock("", elements[:n]...))
		elements = elements[n:]
	}
	return blocks, nil
}

// optionValue encodes a menu item's value for an option (at most 150 characters),
// leaving out its modal's initial text and placeholder if need be, but not cutting
// its label: then errValueTooLong, and the item becomes a button.
func optionValue(btn conversation.Button) (string, error) {
	v, err := encodeValue(btn.Action, btn.Modal, maxOptionValueChars)
	if err != nil || btn.Modal == nil {
		return v, err
	}
	if _, m, _ := decodeValue(v); m == nil || m.Label != truncate(btn.Modal.Label, maxInputLabelChars) {
		return "", fmt.Errorf("%w: the label of %s's modal does not fit an option", errValueTooLong, btn.Action.Name)
	}
	return v, nil
}

// buttonElement renders btn as a button with actionID.
func buttonElement(actionID string, btn conversation.Button) (*slack.ButtonBlockElement, error) {
	value, err := encodeValue(btn.Action, btn.Modal, maxButtonValueChars)
	if err != nil {
		return nil, fmt.Errorf("button %q: %w", btn.Label, err)
	}
	label := truncate(oneLine(btn.Label), maxButtonLabelChars)
	if label == "" {
		label = "…"
	}
	el := slack.NewButtonBlockElement(actionID, value, slack.NewTextBlockObject(slack.PlainTextType, label, true, false))
	style := slack.Style(btn.Style)
	if style == slack.StylePrimary || style == slack.StyleDanger {
		el.Style = style
	}
	if c := btn.Confirm; c != nil {
		el.Confirm = confirmObject(*c, style)
	}
	return el, nil
}

// confirmObject renders a confirmation dialog; missing button texts default to
// "Confirm" and "Cancel".
func confirmObject(c conversation.Confirm, style slack.Style) *slack.ConfirmationBlockObject {
	plain := func(s, def string, n int) *slack.TextBlockObject {
		s = truncate(strings.TrimSpace(s), n)
		if s == "" {
			s = def
		}
		return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
	}
	obj := slack.NewConfirmationBlockObject(
		plain(oneLine(c.Title), "Are you sure?", maxConfirmTitleChars),
		plain(c.Text, "Are you sure?", maxConfirmTextChars),
		plain(oneLine(c.Yes), "Confirm", maxConfirmButtonChars),
		plain(oneLine(c.No), "Cancel", maxConfirmButtonChars),
	)
	if style == slack.StyleDanger {
		obj.WithStyle(slack.StyleDanger)
	}
	return obj
}

// pack puts items into messages in order, each within MaxBlocks blocks and
// MaxCardChars characters, keeping glued items together where they fit.
func pack(items []item) [][]item {
	var pages [][]item
	var cur []item
	chars := 0
	flush := func() {
		if len(cur) > 0 {
			pages = append(pages, cur)
			cur, chars = nil, 0
		}
	}
	fits := func(blocks, n int) bool { return len(cur)+blocks <= MaxBlocks && chars+n <= MaxCardChars }
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && (items[end].gluePrev || items[end-1].glueNext) {
			end++
		}
		unit := items[start:end]
		start = end
		n := 0
		for _, it := range unit {
			n += it.chars
		}
		if !fits(len(unit), n) {
			flush()
		}
		if fits(len(unit), n) {
			cur = append(cur, unit...)
			chars += n
			continue
		}
		for _, it := range unit { // a unit bigger than a message: split it anywhere
			if !fits(1, it.chars) {
				flush()
			}
			cur = append(cur, it)
			chars += it.chars
		}
	}
	flush()
	return pages
}

// squeeze makes pages fit n messages when text alone cannot: the last message keeps
// the start of what remains, a note, and the trailing actions blocks.
func squeeze(pages [][]item, n int) [][]item {
	if len(pages) <= n {
		return pages
	}
	var rest []item
	for _, p := range pages[n-1:] {
		rest = append(rest, p...)
	}
	tail := len(rest)
	for tail > 0 && rest[tail-1].actions && len(rest)-tail < MaxBlocks-1 {
		tail--
	}
	var last []item
	chars, omitted := 0, 0
	for _, it := range rest[:tail] {
		if omitted == 0 && len(last)+2+len(rest)-tail <= MaxBlocks && chars+it.chars <= MaxCardChars-200 {
			last = append(last, it)
			chars += it.chars
		} else {
			omitted++
		}
	}
	if omitted > 0 {
		note := fmt.Sprintf(shortenedBlocksNote, thousands(omitted))
		last = append(last, item{block: slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, note, false, false)), chars: runes(note)})
	}
	last = append(last, rest[tail:]...)
	return append(pages[:n-1:n-1], last)
}

// longestText returns the length of the card's longest section or context text.
func longestText(c conversation.Card) int {
	n := 0
	for _, b := range c.Blocks {
		if b.Kind == conversation.BlockSection || b.Kind == conversation.BlockContext {
			n = max(n, runes(strings.TrimSpace(b.Text)))
		}
	}
	return n
}

// fallbackText returns the text of a card's last message: c.Text, or the card's
// first text, cut to MaxFallbackChars.
func fallbackText(c conversation.Card) string {
	text := strings.TrimSpace(c.Text)
	for _, b := range c.Blocks {
		if text != "" {
			break
		}
		if b.Kind != conversation.BlockDivider && b.Kind != conversation.BlockActions {
			text = strings.TrimSpace(b.Text)
		}
	}
	return truncate(text, MaxFallbackChars)
}

func firstText(p []item) string {
	for _, it := range p {
		if it.text != "" {
			return it.text
		}
	}
	return ""
}

// truncate cuts s to at most n characters (runes), ending it with "…" when cut, the
// spaces and line breaks before the "…" dropped: the one cut of a Slack text bound.
func truncate(s string, n int) string { return textcut.Ellipsis(s, n, textcut.Cutset(" \n")) }

// oneLine replaces line breaks with spaces (plain-text labels and titles).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// thousands formats n with comma separators: 12345 → "12,345".
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
